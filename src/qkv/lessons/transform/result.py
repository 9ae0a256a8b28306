"""What lesson "transform" measures: how unevenly the trained W_Q, W_K, W_V and W_O stretch space against
a random model's, and how x W_Q, x W_K, x W_V move a cloud of word vectors (qkv.lessons.transform.measure
returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Spread(Numbers):
    """Mean and range over every layer and head of one matrix's singular-value numbers."""

    condition_mean: float
    condition_min: float
    condition_max: float
    effective_rank_mean: float
    top4_mean: float  # the share of energy in the 4 largest singular values
    rotation_cos_mean: float


@dataclass(frozen=True)
class Compared(Numbers):
    """One matrix in the trained model and in its random twin."""

    trained: Spread
    random: Spread


@dataclass(frozen=True)
class Result(Numbers):
    layer: int  # the cloud's layer and the head drawn in detail
    head: int
    seed: int  # the random twin's
    n_layers: int
    n_heads: int
    d_model: int
    d_head: int
    norm: str
    pre_norm: bool  # the heads read LN1(x) (LayerNorm or RMSNorm), not x
    summary: dict[str, Compared]  # matrix name (analysis.transform.MATRICES) -> its spread
    more_uneven: int  # the places (layer, head, matrix) more uneven than the twin's
    n_places: int
    uneven_claim_holds: bool
    detail: dict[str, dict]  # matrix name -> its spectrum (qkv.analysis.transform.spectrum), at (layer, head)
    detail_random: dict[str, dict]  # ... of the random twin
    reconstruction_error: float  # how exactly U Σ Vᵀ gives W back
    orthogonality_error: float  # how orthogonal R = U Vᵀ is
    words: list[str]  # the cloud's words, their groups, and what block 0's attention reads for them
    labels: list[str]
    groups: list[str]
    input: str
    before_ratio: float  # how far apart the groups sit before the map
    before_accuracy: float
    after_ratio: dict[str, list[float]]  # projection (q, k, v) -> one per head
    after_accuracy: dict[str, list[float]]
    heads_separating_more: dict[str, int]  # projection -> heads that separate the groups more than x
    kept_share: dict[str, list[float]]
    random_share: float
    nearest_before: dict[str, str]  # word -> the group of its nearest neighbour, before and after x W_Q
    nearest_q: dict[str, str]
    before_ratio_2d: float
    q_ratio_2d: float
    cloud_before: list[list[float]]  # (n_words, 2)
    cloud_q: list[list[float]]
    twin_before_ratio: float
    twin_q_ratio: float
    trace_max_diff: float  # the trace's projections against the matrices', largest difference
