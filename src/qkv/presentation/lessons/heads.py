"""Lesson "heads", said and drawn: the mean attention weight each head puts on the cue verb, the
previous token, the start and itself (numbers from qkv.apps.lessons.heads.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..figures import new_figure, save
from ..i18n import translator
from .common import listing, then


def _best(n: dict, c: str) -> dict:
    layer, head = n[f"best_{c}"]
    return {"layer": layer, "head": head, "mass": n[f"best_{c}_mass"], "ratio": n[f"best_{c}_ratio"]}


def headline(n: dict, lang: str) -> str:
    say = translator(lang, "lessons.heads")
    parts = [say("headline_part", short=say(f"short_{c}"), **_best(n, c)) for c in n["categories"]]
    return say("headline", **n, parts=listing(parts, lang))


def text(n: dict, lang: str) -> str:
    """The verdict: did the categories peak in different heads, and does any head watch the cue verb?"""
    say = translator(lang, "lessons.heads")
    lines = [say("line", label=say(f"label_{c}"), **_best(n, c)) for c in n["categories"]]
    k = len(n["categories"])
    verdict = [
        say("split_all" if n["distinct_heads"] == k else "split_some", categories=k, distinct_heads=n["distinct_heads"])
    ]
    cue, previous = n["best_cue_mass"], n["best_previous_mass"]
    if cue < previous / 2:
        verdict.append(say("cue_weak", cue=cue, previous=previous))
    verdict.append(say("learned"))
    return say("text", **n, lines="\n".join(lines), verdict=then(verdict, lang))


def figures(n: dict, out: Path, lang: str) -> list[Path]:
    """One heat map per category: layers down, heads across, the mean weight in each cell."""
    say = translator(lang, "lessons.heads")
    fig = new_figure((3.2 * len(n["categories"]) + 1, 3.6))
    axes = fig.subplots(1, len(n["categories"]), squeeze=False)[0]
    image = None
    for ax, c in zip(axes, n["categories"]):
        M = np.array(n[f"mass_{c}"])  # (n_layers, n_heads)
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
        ax.set_title(say(f"label_{c}"), fontsize="medium")
    fig.colorbar(image, ax=list(axes), shrink=0.8, label=say("colorbar"))
    fig.suptitle(say("fig_title", baseline=n["baseline"]))
    return [save(fig, out / "heads_mass.png")]
