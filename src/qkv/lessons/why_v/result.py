"""What lesson "why-v" measures: pairs of models trained alike but for what attention mixes (z = A·V or
z = A·K), their losses and probe accuracies (qkv.lessons.why_v.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Probe(Numbers):
    count: int  # held-out probes of one phenomenon
    chance: float  # the accuracy of guessing


@dataclass(frozen=True)
class Probes(Numbers):
    """The probes of each phenomenon of measure.PHENOMENA."""

    sense: Probe
    association: Probe
    order: Probe


@dataclass(frozen=True)
class Accuracy(Numbers):
    """A model's accuracy on the probes of each phenomenon of measure.PHENOMENA."""

    sense: float
    association: float
    order: float


@dataclass(frozen=True)
class Model(Numbers):
    losses: list[float]  # the loss curve, one per step
    params: int
    train_loss: float
    val_loss: float
    early_loss: float  # the mean batch loss over measure.EARLY
    seconds: float
    acc: Accuracy
    mean_acc: float


@dataclass(frozen=True)
class Pair(Numbers):
    d_head: int
    v: Model  # z = A·V
    k: Model  # z = A·K
    val_gap: float  # k's validation loss minus v's
    early_gap: float


@dataclass(frozen=True)
class Result(Numbers):
    seed: int
    sentences: int
    tokens: int
    vocab: int
    steps: int
    batch_size: int
    n_ctx: int  # the models' shape (measure.MODEL)
    d_model: int
    n_heads: int
    n_layers: int
    probes: Probes
    early_from: int
    early_to: int
    pairs: list[Pair]  # one per width of measure.WIDTHS
