"""What lesson "align" measures on a zh→en translation model: how well each cross-attention head aligns
English words with the Chinese they translate, BLEU, the ambiguous words' senses, and what decides
between millet and xiaomi (qkv.lessons.align.measure returns a Result).

A quantity measured for each item of one of measure's tuples (KINDS, LINKS, SENSES) or each ambiguous
word is a dict by its names; an item no held-out pair has is absent."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Scores(Numbers):
    """The alignment accuracy on the words of one kind of sentence or link."""

    n: int  # words
    best: float  # of the best head
    mean: float  # of the mean of all heads
    untrained: float  # of the untrained model's best head
    diagonal: float
    chance: float


@dataclass(frozen=True)
class Example(Numbers):
    """The figure's pair, with the best head's cross-attention pattern and the mean of all heads'."""

    zh: list[str]
    en: list[str]
    links: list[list[int]]  # [English index, Chinese index] of each gold link
    layer: int
    head: int
    head_pattern: list[list[float]]  # (T, S)
    mean_pattern: list[list[float]]  # (T, S)


@dataclass(frozen=True)
class Sense(Numbers):
    """One ambiguous word in one sense, over its held-out pairs translated greedily."""

    en: str  # its English in that sense
    n: int  # pairs
    word: int  # with the sense's English word
    tail: int  # with the tail clause right
    exact: int  # all right


@dataclass(frozen=True)
class Swap(Numbers):
    """The 小米 sentences with their twin's tail: what decides the English word."""

    n: int
    cue: int  # the word follows the cue verb
    tail: int  # ... the tail
    neither: int
    faithful: int  # the tail translated as written
    verb_tail: int  # the tail replaced by one of the verb's sense
    example_zh: list[str]
    example_en: list[str]


@dataclass(frozen=True)
class Parts(Numbers):
    """What the rows writing the sense's English word read: the mean over all heads, summed over each part."""

    word: float
    cue: float
    tail: float
    cue_head_max: float  # the largest weight any head puts on the cue verb


@dataclass(frozen=True)
class Split(Numbers):
    """The first 小米 pair of a sense, and what the row that writes its English word reads."""

    zh: list[str]
    en: list[str]
    row: int
    written: str
    cue: str
    mean: list[float]  # (S,) the mean over all heads
    cue_head: list[int]  # [layer, head] that puts the most weight on the cue verb
    cue_head_row: list[float]  # (S,) its row


@dataclass(frozen=True)
class Result(Numbers):
    n_pairs: int
    n_words: int
    best: list[int]  # [layer, head] of the best aligning head
    best_acc: float
    acc_heads: list[list[float]]  # (n_layers, n_heads)
    acc_layers: list[float]  # of each layer's mean pattern
    acc_layer_heads: list[float]  # the mean of each layer's heads' accuracies
    acc_mean: float  # of the mean of all heads
    untrained_heads: list[list[float]]
    untrained_best_acc: float
    untrained_mean: float
    diagonal: float
    chance: float
    reads_best: list[int]  # the same for the rows that read the word rather than write it
    reads_best_acc: float
    kinds: dict[str, Scores]  # kind of sentence (measure.KINDS) -> its scores
    links: dict[str, Scores]  # kind of link (measure.LINKS) -> its scores
    comma_missed: int
    comma_ahead: int
    commas: int
    example: Example
    bleu_greedy: float
    exact_greedy: float
    beam: int
    beam_every: int
    n_beam: int
    bleu_beam: float
    exact_beam: float
    bleu_greedy_some: float
    exact_greedy_some: float
    n_layers: int
    n_heads: int
    d_model: int
    senses: dict[str, dict[str, Sense]]  # ambiguous word -> sense -> its counts
    split_word: str
    split_en: dict[str, str]  # sense -> the English of 小米
    swap: Swap
    parts: dict[str, Parts]  # sense -> what the rows writing its word read
    examples: dict[str, Split]  # sense -> its example
