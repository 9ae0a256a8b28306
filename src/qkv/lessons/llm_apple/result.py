"""What lesson "llm-apple" measures in a real LLM: the vectors of apple the fruit and apple the company,
layer by layer, the heads that read the cue word, and the next token (qkv.lessons.llm_apple.measure)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Head(Numbers):
    layer: int
    head: int
    weight: float  # mean pattern[apple, cue] over the sentences


@dataclass(frozen=True)
class Next(Numbers):
    """The most probable next tokens after one sentence, most probable first."""

    tokens: list[str]
    p: list[float]


@dataclass(frozen=True)
class Result(Numbers):
    model_name: str
    n_layers: int
    n_heads: int
    d_model: int
    word: str
    word_ids: list[int]  # the word's tokens, as every sentence writes it
    other_case_ids: list[int]  # the same word capitalised: other tokens
    texts: list[str]  # the fruit sentences, then the company sentences (pair p: p and n_pairs + p)
    cues: list[str]
    labels: list[float]  # 0 fruit, 1 company
    word_positions: list[int]  # apple's last token in each sentence
    cue_positions: list[int]  # the cue's first token
    folds: list[list[int]]
    k_folds: int
    stages: list[str]  # "embed", then "L0" .. for each block's output
    across: list[float]  # per stage: mean cosine between the senses
    within: list[float]  # ... within a sense
    gap: list[float]  # within - across
    probe: list[float]  # held-out accuracy
    parted_stage: str  # the first block whose probe reaches measure.PARTED ("" if none)
    max_gap_stage: str
    cue_weights: list[list[float]]  # (n_layers, n_heads) mean pattern[apple, cue]
    mean_cue_weight: float  # over every head
    uniform_cue_weight: float  # what a head spreading its weight evenly would give
    top_heads: list[Head]
    next: list[Next]  # per sentence
