"""What lesson "heads" measures: how much attention each head puts on the cue verb, the previous token,
the start and itself, over many sentences (qkv.lessons.heads.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Best(Numbers):
    """The head that puts the most attention on one category, and how much (ratio: over the baseline)."""

    layer: int
    head: int
    mass: float
    ratio: float


@dataclass(frozen=True)
class Result(Numbers):
    n_sentences: int
    baseline: float  # the mean of 1/T: what a uniform head puts on one key
    cue_words: list[str]
    categories: list[str]  # measure.CATEGORIES
    example: str
    example_cue: str
    mass: dict[str, list[list[float]]]  # category -> (n_layers, n_heads) mean attention mass
    best: dict[str, Best]  # category -> its best head
    distinct_heads: int  # how many different heads are best for some category
