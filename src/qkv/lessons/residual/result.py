"""What lesson "residual" measures: deep stacks with and without residual connections and LayerNorm,
at initialisation and after the same training (qkv.lessons.residual.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Start(Numbers):
    """At initialisation, in float64 (measure.init_stats)."""

    rms_last: float  # the RMS of the residual stream after the last block
    cos_last: float  # how alike the vectors of different positions are there (mean cosine)
    grad_first: float  # the gradient norm of the first block
    grad_last: float  # ... and of the last
    loss_init: float


@dataclass(frozen=True)
class Variant(Numbers):
    """One variant of measure.VARIANTS: its loss curve, its start (the fields of Start), its training."""

    losses: list[float]  # the loss curve, one per step
    rms_last: float
    cos_last: float
    grad_first: float
    grad_last: float
    loss_init: float
    train_loss: float
    val_loss: float
    early_loss: float  # the mean batch loss over the steps that end at Result.early_step
    seconds: float


@dataclass(frozen=True)
class Result(Numbers):
    seed: int
    tokens: int
    vocab: int
    steps: int
    batch_size: int
    early_step: int
    unigram_loss: float  # what a model that learned only word counts reaches
    uniform_loss: float  # log of the vocabulary's size
    n_ctx: int  # the models' shape (measure.MODEL)
    d_model: int
    n_heads: int
    n_layers: int
    variants: list[str]  # the names of measure.VARIANTS, in order
    models: dict[str, Variant]  # variant name -> its numbers
    best: str  # the variant with the lowest validation loss
    val_gap_residual: float  # what LayerNorm adds to residuals, in validation loss
    grad_ratio_residual: float
