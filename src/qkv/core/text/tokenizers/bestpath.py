"""The most probable split of a run of text into the words of a vocabulary (a unigram best path).

A learner types Chinese without spaces; a word tokenizer trained on spaced text must find the words
again. Cutting the longest known word first reads 老师说明天下午 as 老师 / 说明 / 天下 / 午; a reader
reads 老师 / 说 / 明天 / 下午. This module picks, among every way to cut the run into known strings,
the one a unigram model of the vocabulary finds most probable:

    best = argmin over cuts w_1 .. w_m of  sum_i cost(w_i),   cost(w) = -log p(w)

found by dynamic programming over the run's word graph (every known string that starts at each
character), right to left: best(i) = min over known piece[i:j] of cost(piece[i:j]) + best(j).

p(w) comes from the vocabulary alone, so the split is the same on every machine (no dictionary that
may or may not be installed): a word tokenizer's vocabulary is ordered by descending frequency in its
training text, and word frequencies follow Zipf's law, so the word of rank r (0-based) has
p(r) = 1 / ((r + ZIPF_K) * H), H = sum of 1 / (r + ZIPF_K) over every rank (its normaliser). The
normaliser charges each token log H, so fewer, longer words win when they are as frequent. Tokens
after the words (single characters a fallback keeps) continue the ranks, as they came after the
words in frequency; a character no token holds costs as much as its UTF-8 bytes (each ranked last).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

ZIPF_K = 10  # the rank offset of Zipf's law (Mandelbrot's form): it flattens the head of the ranking


def zipf_costs(n_ranked: int, n_bytes: int = 0) -> tuple[Callable[[int], float], float]:
    """(cost of the token of rank `id`, cost of one byte): -log p under Zipf's law over `n_ranked`
    ranked tokens, p(r) = 1 / ((r + ZIPF_K) * H) (see the module docstring); a byte ranks after
    every token."""
    total = n_ranked + n_bytes
    log_h = math.log(sum(1.0 / (r + ZIPF_K) for r in range(max(total, 1))))

    def cost(rank: int) -> float:
        return math.log(rank + ZIPF_K) + log_h

    return cost, cost(total)


def best_cut(
    piece: str,
    known: Mapping[str, int],
    longest: int,
    cost: Callable[[int], float],
    unknown_cost: Callable[[str], float],
) -> list[tuple[str, int | None]]:
    """`piece` cut into known strings by the least total cost (the most probable unigram split):
    (part, id) pairs in order, id None for a single character that no known string covers (it costs
    `unknown_cost(char)`). ``known``: string -> id; `cost(id)`: -log p of that token. On equal cost
    the cut with the longer first part wins, so the result does not depend on dictionary order."""
    n = len(piece)
    total = [0.0] * (n + 1)  # total[i]: the least cost of piece[i:]
    step = [n] * (n + 1)  # step[i]: where the first part of that best cut of piece[i:] ends
    for i in range(n - 1, -1, -1):
        best, end = math.inf, i + 1
        for j in range(min(n, i + longest), i, -1):  # longest first: it keeps a tie
            t = known.get(piece[i:j])
            if t is not None and cost(t) + total[j] < best:
                best, end = cost(t) + total[j], j
        if piece[i] not in known:  # a character nothing starts with, or that only longer words start with
            c = unknown_cost(piece[i]) + total[i + 1]
            if c < best:
                best, end = c, i + 1
        total[i], step[i] = best, end
    out, at = [], 0
    while at < n:
        part = piece[at : step[at]]
        out.append((part, known.get(part)))
        at = step[at]
    return out


__all__ = ["ZIPF_K", "best_cut", "zipf_costs"]
