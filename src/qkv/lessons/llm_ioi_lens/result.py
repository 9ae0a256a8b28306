"""What lesson "llm-ioi-lens" measures in a real LLM: activation patching of the indirect-object prompt
(residual stream by layer × position, heads' z by layer × head), and the logit lens at " Paris"
(qkv.lessons.llm_ioi_lens.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Patched(Numbers):
    """One site of qkv.analysis.patch: the metric with each piece patched, and its share of the gap."""

    site: str  # "resid_pre" (index: position) or "z" (index: head)
    values: list[list[float]]  # (n_layers, T or n_heads): logit difference, patched
    share: list[list[float]]  # (values - corrupted) / (clean - corrupted); zeros when clean = corrupted
    clean: float
    corrupted: float
    gap_small: bool  # |clean - corrupted| < 1 logit: the shares mean little
    best_layer: int
    best_index: int
    best_share: float
    layer_best: list[float]  # per layer, the largest share of any piece


@dataclass(frozen=True)
class Lens(Numbers):
    """The logit lens at the last token of the text: per row (entering each block, then the output)."""

    text: str
    answer: str
    tokens: list[str]
    p: list[float]  # the answer's probability
    rank: list[int]  # its rank (0: most probable)
    top: list[str]  # the most probable token
    top_p: list[float]
    first_top1: int  # the first row from which the answer stays top-1 (-1: never)
    final_top: str
    final_p: float


@dataclass(frozen=True)
class Result(Numbers):
    model_name: str
    n_layers: int
    n_heads: int
    clean_text: str
    corrupted_text: str
    answer: str
    wrong: str
    tokens: list[str]  # of the clean prompt
    corrupted_tokens: list[str]
    p_answer: float  # after the clean prompt
    p_wrong: float
    clean_top: str
    resid: Patched
    z: Patched
    top_heads: list[list[float]]  # [layer, head, share], largest share first
    head_on_answer: float  # the first of top_heads, clean prompt: its weight from the last token on the answer's name
    head_on_wrong: float  # ... on the other name (both its positions)
    lens: Lens
