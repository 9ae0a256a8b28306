"""What lesson "real-hull" measures on a real pretrained encoder (MiniLM): every head's z inside its
values' hull, and how far W_O, the residual and the post-norm LayerNorm take it out
(qkv.lessons.real_hull.measure returns a Result). A quantity measured for each stage of measure.STAGES
is a dict by the stages' names."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Extreme(Numbers):
    """The head nearest to or furthest from its hull after the residual and LayerNorm (stage "mid")."""

    layer: int
    head: int
    distance: float
    max_weight: float  # its largest attention weight at the query


@dataclass(frozen=True)
class Example(Numbers):
    """The head the figure draws: the one that weighs the cue most at the query."""

    layer: int
    head: int
    cue_weight: float
    weights: list[float]  # (T,)
    values: list[list[float]]  # (T, d_head)
    z: list[float]  # (d_head,)


@dataclass(frozen=True)
class Result(Numbers):
    model_name: str
    text: str
    tokens: list[str]
    position: int  # of the query
    query: str
    cue: str
    n_layers: int
    n_heads: int
    n_total: int  # heads
    d_head: int
    d_model: int
    tol: float
    stages: list[str]  # measure.STAGES
    z_points: int  # every head's z at every position
    z_outside: int
    z_max_distance: float
    distances: dict[str, list[list[float]]]  # "z" and each stage -> (n_layers, n_heads) hull distance
    outside: dict[str, int]  # stage -> heads outside the hull
    max_distance: dict[str, float]
    min_distance: dict[str, float]
    median_distance: dict[str, float]
    norm_x: list[float]  # per layer
    norm_zW_median: float
    norm_zW_max: float
    ln_gap: float  # the LayerNorm's output against the trace's, largest difference
    mid_min: Extreme
    mid_max: Extreme
    max_weight: list[list[float]]  # (n_layers, n_heads)
    example: Example
