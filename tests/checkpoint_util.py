"""What the checkpoint tests share: a tiny tokenizer and model, one training step, a checkpoint written."""

from __future__ import annotations

import json

import torch

from qkv.core.model.gpt import GPT, lm_loss
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.text.tokenizers import train_tokenizer
from qkv.core.train.checkpoint import Writer

TEXT = "hello world, a tiny text for a tiny tokenizer.\n" * 3
TOK = train_tokenizer("char", TEXT)


def save_weights(d, model, step, optimizer=None, info=None, tc=None):
    """A training checkpoint: a new run in d, or the run in d continued (its config and run id kept)."""
    tc = TrainConfig() if tc is None else tc
    w = Writer(d, model.cfg, tc, TOK, resume=(d / "state.json").exists())
    w.save(model, step, optimizer, info)
    w.close()


def tiny_model(**kw) -> tuple[GPT, object]:
    tok = TOK
    torch.manual_seed(0)
    cfg = dict(d_vocab=tok.vocab_size, n_ctx=8, d_model=16, n_heads=2, n_layers=2)
    cfg.update(kw)
    return GPT(ModelConfig(**cfg)), tok


def sample_ids(model: GPT) -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    return torch.randint(model.cfg.d_vocab, (2, model.cfg.n_ctx), generator=g)


def logits(model: GPT) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        return model(sample_ids(model))


def trained_step(model: GPT, optimizer) -> None:
    """One optimizer step, so that the weights change and AdamW has moments to save."""
    model.train()
    x = sample_ids(model)
    loss = lm_loss(model(x), x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def weight_file(d) -> str:
    return json.loads((d / "state.json").read_text())["model"]
