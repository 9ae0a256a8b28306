"""What lesson "embedding" measures: words as indices, as one-hot vectors and as learned embeddings, and
which of them are close (qkv.lessons.embedding.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Result(Numbers):
    words: list[str]  # the fruits, then the other word
    fruits: list[str]
    other: str
    ids: list[int]
    id_difference: int  # the second id minus the first
    id_difference_token: str | None  # the token with that id, if there is one
    onehot_cosines: list[float]  # every pair of words, in the order of the words
    onehot_max_offdiag: float
    cosines: list[list]  # [a, b, cosine] of their learned embeddings, every pair once
    cosine_matrix: list[list[float]]  # (n, n)
    within_fruit_mean: float
    fruit_other_mean: float
    claim_holds: bool  # the fruits are closer to each other than to the other word
    neighbours: dict[str, list[list]]  # word -> [token, cosine] of its nearest neighbours
    d_model: int
    d_vocab: int
    corpus_counts: dict[str, int]  # word -> how often the training text shows it
    corpus_source: str  # "bundled" or "builtin"
    corpus_lines: int
    map_tokens: list[str]  # the words the figure's map shows
