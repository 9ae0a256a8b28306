"""What lesson "llm-induction" measures in a real LLM: each head's induction score on repeated random
tokens, and the in-context loss gap with the top heads or as many random heads switched off
(qkv.lessons.llm_induction.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Head(Numbers):
    layer: int
    head: int
    score: float  # induction score
    previous: float  # previous-token score of the same head


@dataclass(frozen=True)
class Losses(Numbers):
    """Mean cross-entropy (nats) of the repeated tokens where they first appear and where they come again."""

    first: float
    second: float
    gap: float  # second - first (negative: the context helped)


@dataclass(frozen=True)
class Ablation(Numbers):
    """One way of switching heads off (measure.MODES): the top heads, and each random draw."""

    top: Losses
    random: list[Losses]
    random_heads: list[list[list[int]]]  # per draw: [layer, head] pairs


@dataclass(frozen=True)
class Result(Numbers):
    model_name: str
    n_layers: int
    n_heads: int
    n_seqs: int
    half: int  # random tokens per repeat
    seed: int
    induction: list[list[float]]  # (n_layers, n_heads)
    previous: list[list[float]]  # (n_layers, n_heads)
    baseline: float  # the induction score of a head spreading its weight evenly
    scoring: float  # the threshold the text counts scoring heads by
    n_scoring: int
    scoring_layers: list[int]
    top: list[Head]  # the heads switched off, highest score first
    clean: Losses
    ablations: dict[str, Ablation]  # mode of measure.MODES -> its losses
