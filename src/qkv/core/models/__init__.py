"""The model family: GPT (decoder-only), Encoder (BERT), Seq2Seq (encoder-decoder), all from core.nn."""

from __future__ import annotations


def make_model(cfg):
    """The model class cfg.arch names, built from cfg."""
    from .encoder import Encoder
    from .gpt import GPT
    from .seq2seq import Seq2Seq

    return {"gpt": GPT, "bert": Encoder, "seq2seq": Seq2Seq}[cfg.arch](cfg)
