"""One query attending over a few keys and values, derived step by step with exact numbers.

    dots_j = q · k_j                      how well key j matches the query
    s_j    = dots_j / √d_k                the scaled score
    a_j    = e^{s_j} / Σ_i e^{s_i}        softmax (computed as e^{s_j − max s} / Σ_i e^{s_i − max s})
    z      = Σ_j a_j v_j                  a convex combination: z lies in the convex hull of the v_j

`attend(q, K, V)` returns the `Steps`: every number, the hull claim checked by a linear program
(geometry.convex_weights), and the JSON below, where each number also appears in closed form when it
has one (numbers.closed_form). qkv.presentation.derivation shows them in Chinese or English.
It takes at most MAX_ENTRIES entries per vector and MAX_NUMBERS numbers in all, and a step whose
number would pass the largest float is a one-line ValueError that names it (except e^{s_j}, shown
as ∞: the weights use e^{s_j − max s}, which never overflows).

JSON (`Steps.to_json()`), format "qkv-explain" version 1, kind "attend". Numbers are floats
(null where e^{s_j} overflows); n keys, d = len(q), d_v = value size:

    format, version, kind        "qkv-explain", 1, "attend"
    n, d_v                       ints
    q (d,)  K (n, d)  V (n, d_v) the inputs
    d_k, sqrt_d_k                the scale √d_k (d_k defaults to d)
    dot_terms (n, d)             the products q_i·k_{j,i};  dots (n,) their sums q·k_j
    scores (n,)                  s_j = q·k_j / √d_k;  max_score = max_j s_j
    shifted (n,)                 s_j − max s
    exps (n,), total             e^{s_j} and their sum
    exps_shifted (n,), total_shifted   e^{s_j − max s} and their sum (what is actually computed)
    weights (n,)                 a_j
    contributions (n, d_v)       a_j·v_j;  z (d_v,) their sum
    hull                         {"inside": bool, "distance": L1 distance of z to conv(V), 0 inside,
                                  "weights": (n,) w ≥ 0, Σw = 1 with Σ w_j v_j = z found by the LP}
    display, latex               the same keys (numbers only, hull without "inside"), same shapes,
                                 each number as text ("ln 2", "1/2", "0.183") or LaTeX ("\\ln 2")
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qkv.analysis.numbers import fmt, latex, parse_matrix, parse_number, parse_vector
from qkv.core.io.document import header
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.see.hull import HullResult, convex_weights

MAX_ENTRIES = 1_000  # per vector (q, a key, a value)
MAX_NUMBERS = 10_000  # in q, K and V together: each is shown, and in closed form when it has one


@dataclass
class Steps:
    """Every intermediate of z = softmax(q Kᵀ / √d_k) V for one query, plus the hull check.
    (qkv.presentation.derivation.Derivation shows them as text, Markdown, LaTeX or a figure.)"""

    q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    d_k: float
    dot_terms: np.ndarray
    dots: np.ndarray
    scores: np.ndarray
    shifted: np.ndarray
    exps: np.ndarray
    exps_shifted: np.ndarray
    weights: np.ndarray
    contributions: np.ndarray
    z: np.ndarray
    hull: HullResult

    @property
    def max_score(self) -> float:
        return float(self.scores.max())

    @property
    def total(self) -> float:
        return float(self.exps.sum())

    @property
    def total_shifted(self) -> float:
        return float(self.exps_shifted.sum())

    def to_json(self) -> dict:
        """The format described in this module's docstring."""
        numbers = {
            "q": self.q,
            "K": self.K,
            "V": self.V,
            "d_k": self.d_k,
            "sqrt_d_k": math.sqrt(self.d_k),
            "dot_terms": self.dot_terms,
            "dots": self.dots,
            "scores": self.scores,
            "max_score": self.max_score,
            "shifted": self.shifted,
            "exps": self.exps,
            "total": self.total,
            "exps_shifted": self.exps_shifted,
            "total_shifted": self.total_shifted,
            "weights": self.weights,
            "contributions": self.contributions,
            "z": self.z,
        }
        hull = {"distance": self.hull.distance, "weights": self.hull.weights}
        out = {
            **header("attend"),
            "n": int(self.K.shape[0]),
            "d_v": int(self.V.shape[1]),
        }
        out.update({k: _tree(v, _num) for k, v in numbers.items()})
        out["hull"] = {"inside": self.hull.inside, **{k: _tree(v, _num) for k, v in hull.items()}}
        for key, form in (("display", fmt), ("latex", latex)):
            out[key] = {k: _tree(v, form) for k, v in numbers.items()}
            out[key]["hull"] = {k: _tree(v, form) for k, v in hull.items()}
        return out


def _num(x: float) -> float | None:
    x = float(x) + 0.0  # + 0.0 turns -0.0 into 0.0
    return x if math.isfinite(x) else None  # JSON has no infinity


def _tree(x, leaf):
    """Apply `leaf` to every number of a scalar or (nested) array, keeping the shape as lists."""
    if np.ndim(x) == 0:
        return leaf(float(x))
    return [_tree(v, leaf) for v in x]


def _array(x, name: str, ndim: int) -> np.ndarray:
    """Lists, numpy arrays, torch tensors or text (parsed by numbers.py) -> a float64 array of `ndim` dims."""
    if isinstance(x, str):
        if ndim == 1 and ";" in x.strip().rstrip(";"):
            raise Refusal.of("errors.attend_one_vector", name=name)
        try:
            x = parse_vector(x.strip().rstrip(";")) if ndim == 1 else parse_matrix(x)
        except ValueError as e:
            raise Refusal.of("errors.in", where=name, error=e) from None
    elif hasattr(x, "detach"):  # a torch tensor
        x = x.detach().cpu().double().numpy()
    elif isinstance(x, (list, tuple)):
        x = _tree_parse(x)
    try:
        a = np.array(x, dtype=float)
    except (ValueError, TypeError):
        raise Refusal.of("errors.attend_ragged", name=name) from None
    if a.size == 0:
        raise Refusal.of("errors.attend_empty_vector" if ndim == 1 else "errors.attend_empty_matrix", name=name)
    if ndim == 2 and a.ndim == 1:
        a = a[None, :]  # a single key or value
    if a.ndim != ndim:
        raise Refusal.of(
            "errors.attend_not_vector" if ndim == 1 else "errors.attend_not_matrix", name=name, shape=str(a.shape)
        )
    if not np.all(np.isfinite(a)):
        raise Refusal.of("errors.attend_not_finite", name=name)
    return a


def _tree_parse(x):
    if isinstance(x, str):
        return parse_number(x)
    if isinstance(x, (list, tuple)):
        return [_tree_parse(v) for v in x]
    return x


def _check_size(q: np.ndarray, K: np.ndarray, V: np.ndarray) -> None:
    """Refuse what cannot be derived number by number in reasonable time and memory: the hull
    check's linear program holds a dense (d_v + 1) x (n + 2 d_v) matrix (geometry.convex_weights)."""
    longest = max(len(q), V.shape[1])
    if longest > MAX_ENTRIES:
        raise Refusal.of(
            "errors.attend_long_q" if len(q) == longest else "errors.attend_long_value", n=longest, max=MAX_ENTRIES
        )
    count = q.size + K.size + V.size
    if count > MAX_NUMBERS:
        raise Refusal.of("errors.attend_too_many", n=count, max=MAX_NUMBERS)


def _check_finite(
    q: np.ndarray,
    K: np.ndarray,
    d_k: float,
    dot_terms: np.ndarray,
    dots: np.ndarray,
    scores: np.ndarray,
    shifted: np.ndarray,
) -> None:
    """A one-line ValueError naming the first step (in the order computed) whose number passes the
    largest float (≈1.8e308); later steps only inherit its ∞."""
    for values, say in (
        (dot_terms, lambda j, i: phrase("errors.attend_term", j=j + 1, a=f"{q[i]:g}", b=f"{K[j, i]:g}")),
        (dots, lambda j: phrase("errors.attend_sum", j=j + 1)),
        (scores, lambda j: f"s{j + 1} = {dots[j]:g} / √{d_k:g}"),
        (shifted, lambda j: f"s{j + 1} − max s = {scores[j]:g} − {scores.max():g}"),
    ):
        bad = np.argwhere(~np.isfinite(values))
        if len(bad):
            raise Refusal.of("errors.attend_overflow", what=say(*bad[0]), max=f"{np.finfo(float).max:.3g}")


def attend(q, K, V, d_k=None) -> Steps:
    """z = softmax(q Kᵀ / √d_k) V for one query q (d,), keys K (n, d), values V (n, d_v); d_k defaults to d."""
    q, K, V = _array(q, "q", 1), _array(K, "K", 2), _array(V, "V", 2)
    _check_size(q, K, V)
    if K.shape[1] != q.shape[0]:
        raise Refusal.of("errors.attend_columns", columns=K.shape[1], entries=q.shape[0])
    if V.shape[0] != K.shape[0]:
        raise Refusal.of("errors.attend_rows", v=V.shape[0], k=K.shape[0])
    d_k = float(len(q)) if d_k is None else (parse_number(d_k) if isinstance(d_k, str) else float(d_k))
    if not (math.isfinite(d_k) and d_k > 0):
        raise Refusal.of("errors.attend_dk", d_k=d_k)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is found below and named
        dot_terms = q[None, :] * K  # (n, d)
        dots = K @ q  # (n,)
        scores = dots / math.sqrt(d_k)
        shifted = scores - scores.max()
        exps = np.exp(scores)  # may overflow to ∞ (shown as ∞); the shifted ones never do
    _check_finite(q, K, d_k, dot_terms, dots, scores, shifted)
    exps_shifted = np.exp(shifted)
    weights = exps_shifted / exps_shifted.sum()
    contributions = weights[:, None] * V  # (n, d_v)
    z = weights @ V
    return Steps(
        q=q,
        K=K,
        V=V,
        d_k=d_k,
        dot_terms=dot_terms,
        dots=dots,
        scores=scores,
        shifted=shifted,
        exps=exps,
        exps_shifted=exps_shifted,
        weights=weights,
        contributions=contributions,
        z=z,
        hull=convex_weights(z, V),
    )
