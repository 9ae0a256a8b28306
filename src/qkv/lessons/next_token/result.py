"""What lesson "next-token" measures: the next-token distribution softmax(h·W_out + b) at the end of a
prompt, and what temperature does to it (qkv.lessons.next_token.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class AtTemperature(Numbers):
    T: float
    top: list[list]  # [token, probability] of the most likely tokens
    entropy_bits: float
    greedy: str
    shown: list[float]  # the probabilities of the tokens of Result.shown


@dataclass(frozen=True)
class Result(Numbers):
    text: str
    tokens: list[str]
    position: int  # where the next token is predicted
    top: list[list]  # [token, probability] of the most likely tokens at T = 1
    top_sum: float
    greedy: str
    greedy_id: int
    entropy_bits: float
    max_entropy_bits: float  # log2 of the vocabulary's size
    shown: list[str]  # the tokens every bar group of the figure shows: the top at T = 1
    temperatures: list[AtTemperature]  # one per T of measure.TEMPERATURES, in that order
