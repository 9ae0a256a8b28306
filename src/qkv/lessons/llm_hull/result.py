"""What lesson "llm-hull" measures in a real LLM: every head's z inside the hull of its values, by the
model's own weights and by an independent linear program, and x + z W_O outside it
(qkv.lessons.llm_hull.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Text(Numbers):
    """One sentence, every head of every layer."""

    text: str
    tokens: list[str]
    min_weight: float  # the smallest A[i, j] of any head, any query (≥ 0: no negative weight)
    max_sum_error: float  # max |Σ_j A[i, j] - 1|
    max_rebuild_error: float  # max |z_i - Σ_j A[i, j] v_j| / max |v|, over heads and positions
    lp_distances: list[list[float]]  # (n_layers, n_heads): z's L1 distance to the hull at the last position
    max_lp_distance: float
    lp_outside: int  # heads whose z the linear program finds outside


@dataclass(frozen=True)
class Example(Numbers):
    """The head the figure draws, at the last position of the first sentence."""

    layer: int
    head: int
    weights: list[float]  # (T,)
    values: list[list[float]]  # (T, d_head)
    z: list[float]  # (d_head,)


@dataclass(frozen=True)
class Result(Numbers):
    model_name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_model: int
    tol: float
    texts: list[Text]
    n_positions: int  # tokens of all the sentences
    x_zW_distances: list[list[float]]  # (n_layers, n_heads), first sentence, last position
    x_zW_outside: int
    x_zW_min: float
    example: Example
