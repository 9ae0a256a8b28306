"""What lesson "dropout" measures: the invariants attention dropout breaks in training mode and keeps in
evaluation mode (qkv.lessons.dropout.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Invariant(Numbers):
    """One invariant over all layers: how many items it checked, how many failed, the worst deviation."""

    checked: int
    failed: int
    worst: float


@dataclass(frozen=True)
class RowSums(Invariant):
    """The row-sum invariant in training mode, with the smallest and largest row sum seen."""

    min_sum: float
    max_sum: float


@dataclass(frozen=True)
class Summary(Numbers):
    """The two invariants dropout breaks (measure.summarise), and the trace's checks in all."""

    rows: Invariant
    hull: Invariant
    checks_failed: int
    checks: int


@dataclass(frozen=True)
class TrainSummary(Summary):
    rows: RowSums


@dataclass(frozen=True)
class Result(Numbers):
    p: float  # the dropout probability
    text: str
    seed: int
    tokens: int
    token_texts: list[str]
    train: TrainSummary  # training mode (dropout on, seeded)
    eval: Summary  # evaluation mode
    pattern_layer: int  # the head whose pattern the figure draws
    pattern_head: int
    pattern_train: list[list[float]]  # (T, T)
    pattern_eval: list[list[float]]  # (T, T)
