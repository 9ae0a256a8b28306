"""The model family: GPT (decoder-only), Encoder (BERT), Seq2Seq (encoder-decoder), all from core.model.nn.

What each family is and can do is declared once, in `family` (FAMILIES); every model class carries
its entry as `model.family`."""

from __future__ import annotations

from contextlib import contextmanager

from qkv.core.spec.config import ModelConfig
from qkv.core.spec.family import family_of


def make_model(cfg: ModelConfig):
    """The model of cfg's family, built from cfg."""
    return family_of(cfg).model_class()(cfg)


@contextmanager
def evaluating(model):
    """Within this block `model` is in evaluation mode (no dropout); its mode before comes back after.
    A model already in evaluation mode throughout is left alone: setting the mode visits every module
    (SmolLM2's 1,000: 24 ms of each of the page's requests)."""
    if not any(m.training for m in model.modules()):
        yield model
        return
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)
