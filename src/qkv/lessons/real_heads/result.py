"""What lesson "real-heads" measures on a real pretrained encoder (MiniLM): the attention mass of every
head on [CLS], [SEP], the previous and next token, the same token elsewhere and itself
(qkv.lessons.real_heads.measure returns a Result). A quantity measured for each category of
measure.CATEGORIES is a dict by its names."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Specialised(Numbers):
    """A head that puts more than the threshold on one category."""

    category: str
    layer: int
    head: int
    mass: float


@dataclass(frozen=True)
class Best(Numbers):
    """The head that puts the most on one category."""

    layer: int
    head: int
    mass: float


@dataclass(frozen=True)
class Result(Numbers):
    model_name: str
    n_layers: int
    n_heads: int
    sentences: list[str]
    n_sentences: int
    example: str
    categories: list[str]  # measure.CATEGORIES
    threshold: float
    baseline: float  # the mean of 1/T: what a uniform head puts on one key
    queries: dict[str, int]  # category -> the queries that have keys of it
    mass: dict[str, list[list[float]]]  # category -> (n_layers, n_heads) mean attention mass
    specialised: list[Specialised]  # by category, then mass (largest first)
    n_specialised: dict[str, int]  # category -> its specialised heads
    n_specialised_heads: int
    cls_layers: list[int]  # the layers with a head specialised on [CLS]
    best: dict[str, Best]  # category -> its best head
