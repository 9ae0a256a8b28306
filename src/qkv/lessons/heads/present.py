"""Lesson "heads", said and drawn: the mean attention weight each head puts on the cue verb, the
previous token, the start and itself (numbers from qkv.lessons.heads.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.common.text import listing, then
from qkv.lessons.heads.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator

CLEAR_RATIO = 2  # a head "looks at" a category when it gives it at least this many times the uniform share


def title(lang: str) -> str:
    return translator(lang, "lessons.heads")("title")


def labels(lang: str) -> dict[str, str]:
    """Each category's name in a sentence, by the names of qkv.lessons.heads.measure.CATEGORIES."""
    say = translator(lang, "lessons.heads")
    return {
        "cue": say("label_cue"),
        "previous": say("label_previous"),
        "start": say("label_start"),
        "self": say("label_self"),
    }


def shorts(lang: str) -> dict[str, str]:
    """Each category's short name (the headline, the explorer's head labels), by the same names."""
    say = translator(lang, "lessons.heads")
    return {
        "cue": say("short_cue"),
        "previous": say("short_previous"),
        "start": say("short_start"),
        "self": say("short_self"),
    }


def headline(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.heads")
    short = shorts(lang)
    parts = [say("headline_part", short=short[c], **n.best[c].to_numbers()) for c in n.categories]
    return say("headline", **n.to_numbers(), parts=listing(parts, lang))


def text(n: Result, lang: str) -> str:
    """The verdict: did the categories peak in different heads, and does any head watch the cue verb?"""
    say = translator(lang, "lessons.heads")
    label = labels(lang)
    lines = [say("line", label=label[c], **n.best[c].to_numbers()) for c in n.categories]
    k = len(n.categories)
    verdict = [
        say("split_all" if n.distinct_heads == k else "split_some", categories=k, distinct_heads=n.distinct_heads)
    ]
    faint = [label[c] for c in n.categories if n.best[c].ratio < CLEAR_RATIO]
    if faint:  # a category no head clearly prefers is no job a head took on
        verdict.append(say("faint", names=say("and").join(faint), ratio=CLEAR_RATIO))
    cue, previous = n.best["cue"].mass, n.best["previous"].mass
    if cue < previous / 2:
        verdict.append(say("cue_weak", cue=cue, previous=previous))
    verdict.append(say("learned"))
    return say("text", **n.to_numbers(), lines="\n".join(lines), verdict=then(verdict, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    """One heat map per category: layers down, heads across, the mean weight in each cell."""
    say = translator(lang, "lessons.heads")
    label = labels(lang)
    fig = new_figure((3.2 * len(n.categories) + 1, 3.6))
    axes = fig.subplots(1, len(n.categories), squeeze=False)[0]
    image = None
    for ax, c in zip(axes, n.categories):
        M = np.array(n.mass[c])  # (n_layers, n_heads)
        image = ax.imshow(M, cmap="Blues", vmin=0.0, vmax=1.0)
        for L in range(M.shape[0]):
            for H in range(M.shape[1]):
                ax.text(
                    H,
                    L,
                    f"{M[L, H]:.2f}",
                    ha="center",
                    va="center",
                    fontsize="small",
                    color="white" if M[L, H] > 0.6 else "black",
                )
        ax.set_xticks(range(M.shape[1]))
        ax.set_yticks(range(M.shape[0]))
        ax.set_xlabel(say("head"))
        ax.set_ylabel(say("layer"))
        ax.set_title(label[c], fontsize="medium")
    fig.colorbar(image, ax=list(axes), shrink=0.8, label=say("colorbar"))
    fig.suptitle(say("fig_title", baseline=n.baseline))
    return [save(fig, out / "heads_mass.png")]
