"""Train a small GPT in memory for a fixed budget: the shared workhorse of the training lessons.

A lesson compares models that differ in one switch (values, pos, residual, norm) and agree in
everything else: the same text, tokenizer, batches (drawn from generators seeded by (seed, step)),
number of steps, learning-rate schedule and initial seed. `fit` returns the model, its per-step
loss curve and the mean train/validation loss on fixed evaluation batches; nothing touches disk.
(qkv.lessons.common.curves draws the curves.)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch

from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.text.batches import get_batch, split_ids
from qkv.core.text.tokenizers import WordTokenizer, train_tokenizer
from qkv.core.train.lm import evaluate, train_step
from qkv.core.train.loop import make_optimizer, step_seed, train_steps


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
    """Train GPT(cfg) on the token ids for tc.steps steps with AdamW (warmup, cosine decay, clipping):
    the trainer's own loop (loop.train_steps, which `qkv train` drives too), in memory.

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

    def step(s: int) -> float:  # the trainer's batch formula, with this fit's seed
        g = torch.Generator().manual_seed(step_seed(seed, s))
        x, y = get_batch(train_ids, tc.batch_size, cfg.n_ctx, g)  # each (B, n_ctx)
        if windows is not None:
            x, y = windows(x, y, g)
        return train_step(model, opt, x, y, tc.grad_clip)

    def stepped(done: int, loss: float, lr: float) -> None:  # a non-finite loss is kept as nan, and training goes on
        losses.append(loss if math.isfinite(loss) else float("nan"))

    def evaluated(done: int) -> None:
        train_loss = evaluate(model, train_ids, tc)
        evals.append((done, train_loss, evaluate(model, val_ids, tc) if val_ids is not None else float("nan")))

    def watched(done: int) -> None:
        if done % watch_every == 0:
            watch(done, model)

    if watch_every:
        watch(0, model)
    every = eval_every or tc.steps  # the last step is evaluated in any case
    train_steps(opt, tc, range(tc.steps), step, stepped, evaluated, every, watched if watch_every else None)
    if not evals or evals[-1][0] != tc.steps:  # no step at all
        evaluated(tc.steps)
    _, train_loss, val_loss = evals[-1]
    model.eval()
    return Fit(model, losses, train_loss, val_loss, time.perf_counter() - t0, evals)
