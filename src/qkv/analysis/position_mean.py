"""What every sentence has at a position: the mean residual-stream vector at each position and stage.

    means = position_means(model, tokenizer, n_pos=8)   # means.at("blocks.2.hook_resid_pre", 5)

The vector of a token at position p mixes three things: its word, the rest of its sentence, and
its position (a learned or sinusoidal position vector is added at "L0 in"; with any position
scheme, the early positions of a causal model see fewer keys). Two occurrences of a word at
different positions therefore differ even when they mean the same thing, and every vector of a
stage also carries a large direction that all of them share. The mean over many sentences
of the vector at (stage, p) holds exactly what all sentences share at that position, whatever
their words:

    mu_s(p) = (1/N_p) * sum over reference sentences n of x_s[n, p]

Subtracting mu_s(p) from a vector read at position p removes it (qkv.analysis.word_similarity uses this
for its position-controlled cosine). At "L0 in" with learned positions x = W_E[t] + W_pos[p], so
the mean is (mean of W_E at p) + W_pos[p] and the position row cancels exactly.

The reference sentences are lines of qkv's built-in corpus (corpus.default_text, the part of the
bundled model's training text that qkv generates; every word tokenizer trained on it reads them),
read from their first token as a compared sentence is. Up to REF_SENTENCES
line starts are spread evenly over the corpus and taken in bit-reversed order, so that the first n
of them are spread evenly too. A causal model reads each from its line start on through the
following lines (what comes later cannot change an earlier position). Deeper positions cost more,
so they are averaged over fewer sentences, but by a fixed rule: positions up to e (e = 8, 16, ...)
use the first n_e = FLOP_BUDGET / (2 · weights · e) sentences (at least MIN_REF, at most
REF_SENTENCES). The sentences and counts behind a position therefore never depend on which
positions were asked for before (a compare gives the same numbers whatever came earlier). A model
that attends both ways reads each line alone (n from n_ctx), and a position counts the lines long
enough to have it. Lines the tokenizer cannot encode are skipped; a position with fewer than
MIN_REF sentences gets no mean.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from qkv.analysis.representations import stages
from qkv.core.model import evaluating
from qkv.core.text import corpus

REF_SENTENCES = 1024  # at most this many reference sentences
MIN_REF = 64  # a position seen by fewer reference sentences gets no mean
FLOP_BUDGET = 1.5e10  # fewer sentences for a large model: about 2 * parameters (less W_E) * tokens in all
BATCH = 128
REFERENCE = "qkv corpus"  # what the page names as the reference text

# model -> PositionMeans (with its key): one per live model, gone with it, n_stages * n_ctx * d_model
# float64s at most (the bundled model: 0.4 MB; GPT-2 small: 14 * 1024 * 768 * 8 = 88 MB); remade when its weights change
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class PositionMeans:
    means: dict[str, np.ndarray]  # stage activation name -> (n_pos, d_model) float64; NaN rows where unseen
    counts: np.ndarray  # (n_pos,) how many reference sentences reach each position
    sentences: int  # reference sentences read
    key: tuple = ()

    def at(self, name: str, pos: int) -> np.ndarray | None:
        """mu at (stage name, position), or None when too few reference sentences reach it."""
        if pos >= len(self.counts) or self.counts[pos] < MIN_REF:
            return None
        return self.means[name][pos]


@lru_cache(maxsize=1)  # the corpus's lines, once (~1 MB)
def reference_lines() -> tuple[str, ...]:
    return tuple(line for line in corpus.default_text().splitlines() if line.strip())


def _encode(tokenizer, text: str) -> list[int] | None:
    try:
        return list(tokenizer.encode(text))
    except ValueError:  # a word the tokenizer does not know: this line cannot be a reference
        return None


def _order(n: int) -> list[int]:
    """0..n-1 in bit-reversed order: every prefix of it is spread evenly over 0..n-1."""
    bits = max(1, (n - 1).bit_length())
    return sorted(range(n), key=lambda k: int(format(k, f"0{bits}b")[::-1], 2))


def _sequences(tokenizer, depths: list[int], causal: bool, n_ctx: int) -> list[list[int]]:
    """One reference id list per entry of `depths` (the k-th taken from the k-th line start of
    _order): a causal model's cut to depths[k] tokens (dropped when the corpus ends first), a
    bidirectional model's one whole line."""
    lines = reference_lines()
    n_max = min(REF_SENTENCES, len(lines))
    out = []
    for rank, depth in zip(_order(n_max), depths):
        start = rank * len(lines) // n_max
        if not causal:
            ids = _encode(tokenizer, lines[start])
            if ids and len(ids) <= n_ctx:  # whole: every token of the line changes every position
                out.append(ids)
            continue
        ids, i = [], start
        while len(ids) < depth and i < len(lines):
            more = _encode(tokenizer, lines[i] + "\n")
            if more is None:
                break
            ids += more
            i += 1
        if len(ids) >= depth:
            out.append(ids[:depth])
    return out


def depths(model, n_pos: int) -> list[int]:
    """How deep each reference sentence is read, by the fixed rule of the module docstring: the k-th
    sentence to the deepest bucket end e <= n_pos whose n_e exceeds k (a bidirectional model: n from n_ctx)."""
    table = getattr(getattr(model, "embed", None), "weight", None)  # a row of W_E is looked up, not multiplied
    weights = max(1, model.num_params() - (table.numel() if table is not None else 0))
    n_of = lambda e: max(MIN_REF, min(REF_SENTENCES, int(FLOP_BUDGET / (2 * weights * e))))
    if not model.cfg.causal:
        return [model.cfg.n_ctx] * n_of(model.cfg.n_ctx)
    ends = sorted({min(e, n_pos) for e in range(8, n_pos + 8, 8)})  # n_pos may be n_ctx, not a multiple of 8
    return [max(e for e in ends if k < n_of(e)) for k in range(n_of(ends[0]))]


def _key(model, tokenizer) -> tuple:
    # a parameter changed in place (training, a test's edit) bumps its _version: the means are redone
    return (id(tokenizer), tuple(p._version for p in model.parameters()))


@torch.no_grad()
def position_means(model, tokenizer, n_pos: int) -> PositionMeans:
    """The mean vector at positions 0..n_pos-1 of every stage (representations.stages), over the
    reference sentences (see the module docstring). Cached per model until its weights change."""
    n_pos = min(model.cfg.n_ctx, -(-n_pos // 8) * 8)  # whole multiples of 8: fewer recomputations
    key = _key(model, tokenizer)
    cached = _CACHE.get(model)
    if cached is not None and cached.key == key and len(cached.counts) >= n_pos:
        return cached
    causal = bool(model.cfg.causal)
    seqs = _sequences(tokenizer, depths(model, n_pos), causal, model.cfg.n_ctx)
    names = [name for _, name in stages(model.cfg)]
    sums = {name: np.zeros((n_pos, model.cfg.d_model)) for name in names}
    counts = np.zeros(n_pos, dtype=np.int64)
    device = next(model.parameters()).device
    with evaluating(model):
        by_length: dict[int, list[list[int]]] = {}
        for ids in seqs:  # equal lengths in one batch: no padding, which a model attending both ways would read
            by_length.setdefault(len(ids), []).append(ids)
        for T, group in by_length.items():
            for s in range(0, len(group), BATCH):
                batch = torch.tensor(group[s : s + BATCH], device=device)  # (B, T)
                _, trace = model.run_with_trace(batch, names=names)
                m = min(T, n_pos)
                for name in names:
                    sums[name][:m] += (
                        trace[name][:, :m].double().sum(0).cpu().numpy()
                    )  # (B, m, d_model) -> (m, d_model)
                counts[:m] += len(batch)
                del trace  # its memory (and its reservation) goes back before the next batch takes its own
    with np.errstate(invalid="ignore", divide="ignore"):
        means = {name: sums[name] / counts[:, None] for name in names}
    out = PositionMeans(means, counts, len(seqs), key)
    _CACHE[model] = out
    return out
