"""Lesson "dropout", said and drawn: rows that stop summing to 1 and z off the hull in training mode,
both invariants back in evaluation mode (numbers from qkv.lessons.dropout.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.dropout.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator


def title(lang: str) -> str:
    return translator(lang, "lessons.dropout")("title")


def _fields(n: Result) -> dict:
    """The numbers under the names the messages use: train_rows_failed is n.train.rows.failed."""
    rows, hull = n.train.rows, n.train.hull
    return {
        "p": n.p,
        "text": n.text,
        "tokens": n.tokens,
        "train_rows_checked": rows.checked,
        "train_rows_failed": rows.failed,
        "train_rows_worst": rows.worst,
        "train_rows_min_sum": rows.min_sum,
        "train_rows_max_sum": rows.max_sum,
        "train_hull_checked": hull.checked,
        "train_hull_failed": hull.failed,
        "train_hull_worst": hull.worst,
        "eval_rows_failed": n.eval.rows.failed,
        "eval_hull_failed": n.eval.hull.failed,
    }


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.dropout")("headline", **_fields(n))


def text(n: Result, lang: str) -> str:
    return translator(lang, "lessons.dropout")("text", **_fields(n))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    """One head's attention pattern in evaluation and in training mode, each row's sum beside it."""
    say = translator(lang, "lessons.dropout")
    fig = new_figure((12, 5.4))
    tokens = n.token_texts
    T = len(tokens)
    for ax, pattern, name in zip(
        fig.subplots(1, 2), (n.pattern_eval, n.pattern_train), (say("eval_mode"), say("train_mode", p=n.p))
    ):
        A = np.array(pattern)  # (T, T)
        shown = np.ma.masked_array(A, mask=np.triu(np.ones((T, T), dtype=bool), 1))
        image = ax.imshow(shown, cmap="Blues", vmin=0.0, vmax=max(1.0, float(A.max())))
        ax.set_xticks(range(T), tokens, fontsize="small", rotation=90)
        ax.set_yticks(range(T), [f"{t}  Σ={A[i].sum():.2f}" for i, t in enumerate(tokens)], fontsize="small")
        ax.set_title(name)
        ax.set_xlabel(say("key"))
        fig.colorbar(image, ax=ax, shrink=0.8)
    fig.suptitle(say("fig_title", layer=n.pattern_layer, head=n.pattern_head))
    return [save(fig, out / "dropout_rows.png")]
