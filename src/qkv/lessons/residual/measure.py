"""Lesson: residual connections and LayerNorm are what make a deep stack trainable.

Four 6-layer GPTs of tiny width are trained on the same text for the same budget (same seed, same
batches): with residual connections and pre-norm LayerNorm (the standard block), with residuals
but no LayerNorm (norm="none"), with LayerNorm but no residuals (residual=False), and with neither.
Besides the losses the lesson measures, at initialisation, how large the signal leaving the last
block is and how much gradient reaches the first block compared with the last.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict
from functools import lru_cache

import torch

from qkv.core.machine import threads
from qkv.core.model.gpt import GPT, lm_loss
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.text import corpus
from qkv.core.text.batches import get_batch, split_ids
from qkv.core.train.loop import step_seed
from qkv.lessons.common.training import fit, tokenize
from qkv.lessons.residual.result import Result, Start, Variant

NEEDS_MODEL = False
READS = ()  # it reads no model: it trains its own
N_SENTENCES = 3000
MODEL = {"n_ctx": 24, "d_model": 32, "n_heads": 2, "n_layers": 6}
TRAIN = {"steps": 300, "batch_size": 16, "lr": 3e-3, "min_lr": 3e-4, "warmup_steps": 30, "eval_steps": 10}
EARLY = 100  # "after the first N steps": the mean batch loss over steps EARLY-20 .. EARLY
# (name, residual, norm)
VARIANTS = (("both", True, "pre"), ("residual", True, "none"), ("norm", False, "pre"), ("neither", False, "none"))


def unigram_loss(train_ids: torch.Tensor, val_ids: torch.Tensor) -> float:
    """Cross-entropy on the validation ids of a model that ignores context and predicts the training
    text's token frequencies: what a network that learned nothing but word counts reaches."""
    counts = Counter(train_ids.tolist())
    total = sum(counts.values())
    vocab = int(max(train_ids.max(), val_ids.max())) + 1
    logp = [math.log((counts.get(i, 0) + 0.5) / (total + 0.5 * vocab)) for i in range(vocab)]  # add-half smoothing
    return -sum(logp[i] for i in val_ids.tolist()) / len(val_ids)


def init_stats(cfg: ModelConfig, train_ids: torch.Tensor, tc: TrainConfig, seed: int) -> Start:
    """At initialisation (the same weights and first batch as `fit`, computed in float64 so that tiny
    values are not rounded to 0): the RMS of the residual stream after the last block, how alike the
    vectors of different positions are there (mean cosine similarity), and the gradient norm of the
    first and the last block."""
    torch.manual_seed(seed)
    model = GPT(cfg).double()
    x_ids, y = get_batch(train_ids, tc.batch_size, cfg.n_ctx, torch.Generator().manual_seed(step_seed(seed, 0)))
    x = model.embed(x_ids)  # (B, T, d_model)
    if model.pos_embed is not None:
        x = x + model.pos_embed(0, x.shape[1])
    for block in model.blocks:
        x = block(x)
    h = x.detach()
    unit = h / h.norm(dim=-1, keepdim=True).clamp_min(1e-300)  # (B, T, d_model)
    cos = unit @ unit.transpose(1, 2)  # (B, T, T)
    T = cos.shape[-1]
    off = ~torch.eye(T, dtype=torch.bool)
    different = off & (x_ids[:, :, None] != x_ids[:, None, :])  # (B, T, T): pairs of positions holding different tokens
    loss = lm_loss(model.unembed(model.ln_final(x)), y)
    loss.backward()
    norm = lambda block: math.sqrt(sum(p.grad.pow(2).sum().item() for p in block.parameters() if p.grad is not None))
    return Start(
        rms_last=h.pow(2).mean().sqrt().item(),
        cos_last=cos[different].mean().item(),
        grad_first=norm(model.blocks[0]),
        grad_last=norm(model.blocks[-1]),
        loss_init=loss.item(),
    )


@lru_cache(maxsize=2)
def measure(seed: int = 0) -> Result:
    """Train the four models (cached: the numbers do not depend on the language): for each variant of
    VARIANTS the numbers at initialisation (init_stats) and after training."""
    with threads.fixed(1):
        tok, ids = tokenize(corpus.generate(seed, N_SENTENCES, "zh"))
        tc = TrainConfig(**TRAIN, seed=seed)
        train_ids, val_ids = split_ids(ids, tc.val_fraction, MODEL["n_ctx"])
        unigram = unigram_loss(train_ids, val_ids)
        m = {}
        for name, residual, norm in VARIANTS:
            cfg = ModelConfig(**MODEL, d_vocab=tok.vocab_size, residual=residual, norm=norm)
            stats = init_stats(cfg, train_ids, tc, seed)
            f = fit(ids, cfg, tc, seed=seed)
            m[name] = Variant(
                losses=f.losses,
                **asdict(stats),
                train_loss=f.train_loss,
                val_loss=f.val_loss,
                early_loss=f.loss_after(EARLY),
                seconds=f.seconds,
            )
    variants = [name for name, _, _ in VARIANTS]
    return Result(
        seed=seed,
        tokens=len(ids),
        vocab=tok.vocab_size,
        steps=tc.steps,
        batch_size=tc.batch_size,
        early_step=EARLY,
        unigram_loss=unigram,
        uniform_loss=math.log(tok.vocab_size),
        **MODEL,
        variants=variants,
        models=m,
        best=min(variants, key=lambda x: m[x].val_loss),
        val_gap_residual=m["residual"].val_loss - m["both"].val_loss,  # what LayerNorm adds to residuals
        grad_ratio_residual=m["both"].grad_first / max(m["residual"].grad_first, 1e-300),
    )
