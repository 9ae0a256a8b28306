"""Train a small GPT in memory for a fixed budget: the shared workhorse of the training lessons.

A lesson compares models that differ in one switch (values, pos, residual, norm) and agree in
everything else: the same text, tokenizer, batches (drawn from generators seeded by (seed, step)),
number of steps, learning-rate schedule and initial seed. `fit` returns the model, its per-step
loss curve and the mean train/validation loss on fixed evaluation batches; nothing touches disk.
(qkv.lessons.common.curves draws the curves.)
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field

import torch

from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.text.batches import get_batch, split_ids
from qkv.core.text.tokenizers import WordTokenizer, train_tokenizer
from qkv.core.train.lm import evaluate, train_step
from qkv.core.train.loop import lr_at, make_optimizer, step_seed


@dataclass
class Fit:
    """A model trained by `fit`, with what was measured on the way."""

    model: GPT
    losses: list[float]  # the loss of each step's batch, in order
    train_loss: float  # mean loss over fixed evaluation batches of the training part
    val_loss: float  # ... and of the held-out validation part
    seconds: float
    evals: list[tuple[int, float, float]] = field(default_factory=list)  # (step, train_loss, val_loss)

    def loss_after(self, steps: int, window: int = 20) -> float:
        """The mean batch loss over the `window` steps that end at step `steps`."""
        part = self.losses[max(0, steps - window) : steps]
        return sum(part) / len(part)


@contextlib.contextmanager
def threads(n: int = 1):
    """Run with n intra-op threads, then restore the setting.

    Tiny models are fastest on one thread, and a fixed thread count keeps the sums in the same
    order, so a lesson's numbers do not depend on the machine's core count. Subnormal floats are
    flushed to zero meanwhile: a deep stack without residuals or LayerNorm shrinks its activations
    below 1e-38, where the CPU's arithmetic becomes many times slower (torch cannot report the
    previous flush setting; it is put back to torch's default, off).
    """
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)
        torch.set_num_threads(before)


def tokenize(text: str) -> tuple[WordTokenizer, torch.Tensor]:
    """A word tokenizer built from a word-segmented text (qkv.corpus writes one space between words),
    without the spaces as tokens (they carry no information; line breaks stay: they end sentences),
    and the text's ids."""
    tok = train_tokenizer("word", text, segment="none", whitespace=False)
    return tok, torch.tensor(tok.encode(text), dtype=torch.long)


def fit(
    ids: torch.Tensor,
    cfg: ModelConfig,
    tc: TrainConfig,
    seed: int = 0,
    eval_every: int = 0,
    windows=None,
    watch=None,
    watch_every: int = 0,
) -> Fit:
    """Train GPT(cfg) on the token ids for tc.steps steps with AdamW (warmup, cosine decay, clipping).

    The first (1 - tc.val_fraction) of the ids are for training, the rest for validation. The
    initial weights come from torch.manual_seed(seed); the batch of step s from a generator seeded
    by (seed, s), so two models trained with the same seed see exactly the same batches.
    `eval_every` > 0 also records train/val loss every that many steps (in `evals`).
    `windows(x, y, g)`, if given, returns the batch the step trains on instead (x, y (B, n_ctx); g the
    step's generator); `watch(step, model)` runs before the first step and after every `watch_every`.
    """
    t0 = time.perf_counter()
    train_ids, val_ids = split_ids(ids, tc.val_fraction, cfg.n_ctx)
    torch.manual_seed(seed)
    model = GPT(cfg)
    model.train()
    opt = make_optimizer(model, tc)
    losses: list[float] = []
    evals: list[tuple[int, float, float]] = []
    if watch_every:
        watch(0, model)
    for step in range(tc.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, tc)
        g = torch.Generator().manual_seed(step_seed(seed, step))  # the trainer's formula
        x, y = get_batch(train_ids, tc.batch_size, cfg.n_ctx, g)
        if windows is not None:
            x, y = windows(x, y, g)
        loss = train_step(model, opt, x, y, tc.grad_clip)
        losses.append(loss if math.isfinite(loss) else float("nan"))
        if eval_every and (step + 1) % eval_every == 0 and step + 1 < tc.steps:
            evals.append((step + 1, evaluate(model, train_ids, tc), evaluate(model, val_ids, tc)))
        if watch_every and (step + 1) % watch_every == 0:
            watch(step + 1, model)
    train_loss = evaluate(model, train_ids, tc)
    val_loss = evaluate(model, val_ids, tc) if val_ids is not None else float("nan")
    evals.append((tc.steps, train_loss, val_loss))
    model.eval()
    return Fit(model, losses, train_loss, val_loss, time.perf_counter() - t0, evals)
