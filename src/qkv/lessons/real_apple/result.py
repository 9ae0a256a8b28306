"""What lesson "real-apple" measures on a real pretrained encoder (MiniLM): how the vectors of 苹果 the
fruit and 苹果 the company part layer by layer, against the same architecture with random or shuffled
weights (qkv.lessons.real_apple.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Model(Numbers):
    """One model of measure.MODELS: a list over the stages (Result.stages) for each quantity, then the
    numbers the text names (measure.summary)."""

    across: list[float]  # mean cosine between the two senses' vectors
    within: list[float]  # ... within one sense
    within_fruit: list[float]
    within_company: list[float]
    gap: list[float]  # within - across
    probe: list[float]  # the ridge probe's cross-validated accuracy
    best_probe: float
    best_probe_stage: str
    max_gap: float
    max_gap_stage: str
    min_block_gap: float  # over the stages after the embedding output
    max_abs_gap: float
    min_cosine: float
    min_block_probe: float


@dataclass(frozen=True)
class Result(Numbers):
    word: str
    token_id: int
    pieces: list[str]  # what the tokenizer makes of the first company sentence
    n_fruit: int
    n_company: int
    examples: dict[str, str]  # sense -> its first sentence
    frames: list[str]  # every sentence, the fruit ones first
    labels: list[float]  # 0: fruit, 1: company
    positions: list[int]  # where the word sits in each
    position_counts: dict[str, int]  # position -> how many fruit sentences hold the word there
    folds: list[list[int]]
    k_folds: int
    ridge: float
    init_std: float
    seed: int
    stages: list[str]
    models: dict[str, Model]  # model of measure.MODELS -> its numbers
    d_model: int
    n_layers: int
    n_heads: int
    model_name: str
