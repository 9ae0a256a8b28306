"""What lesson "convex" measures: the worked example's hull, a real head's hull, and the residual update
outside it (qkv.lessons.convex.measure returns a Result; present reads it)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Plane(Numbers):
    """2-D coordinates that keep the hull and x + z W_O apart (measure.separating_plane): each point (a, b)."""

    values: list[list[float]]  # v_j W_O[h], (T, 2)
    zW: list[float]
    x_new: list[float]  # x + z W_O[h]
    x: list[float]
    nearest: list[float]  # the hull point nearest to x + z W_O[h]


@dataclass(frozen=True)
class Result(Numbers):
    example_scores: list[float]  # the source document's worked example: s, a, z, its values and hull
    example_weights: list[float]
    example_z: list[float]
    example_values: list[list[float]]
    example_inside: bool
    example_distance: float
    text: str  # the real sentence, its tokens and the query position
    tokens: list[str]
    position: int
    layer: int  # the head that weighs the cue most
    head: int
    weights: list[float]  # its attention weights at the query, (T,)
    cue: str
    cue_weight: float
    values: list[list[float]]  # (T, d_head)
    z: list[float]  # (d_head,)
    z_inside: bool  # each stage: inside the values' hull, and its distance from it
    z_distance: float
    zW_inside: bool
    zW_distance: float
    residual_inside: bool
    residual_distance: float
    residual_l2_distance: float
    resid_mid_inside: bool
    resid_mid_distance: float
    norm_x: float
    norm_zW: float
    d_head: int
    d_model: int
    result_gap: float  # the trace's `result` against z W_O[h], largest difference
    plane: Plane
