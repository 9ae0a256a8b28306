"""Lesson "real-heads", said and drawn: the attention mass of every head of a real encoder on [CLS],
[SEP], the previous and next token, the same token elsewhere and itself (numbers from
qkv.lessons.real_heads.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.common.text import commas, then
from qkv.lessons.real_heads.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator


def title(lang: str) -> str:
    return translator(lang, "lessons.real_heads")("title")


def labels(lang: str) -> dict[str, str]:
    """Each kind of key in a sentence, by the names of qkv.lessons.real_heads.measure.CATEGORIES."""
    say = translator(lang, "lessons.real_heads")
    return {
        "cls": say("label_cls"),
        "sep": say("label_sep"),
        "previous": say("label_previous"),
        "next": say("label_next"),
        "same": say("label_same"),
        "self": say("label_self"),
    }


def shorts(lang: str) -> dict[str, str]:
    """Each kind of key as the figure's columns name it, by the same names."""
    say = translator(lang, "lessons.real_heads")
    return {
        "cls": say("short_cls"),
        "sep": say("short_sep"),
        "previous": say("short_previous"),
        "next": say("short_next"),
        "same": say("short_same"),
        "self": say("short_self"),
    }


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def _lines(n: Result, lang: str) -> str:
    """One line per category: the heads above the threshold with their mass, or the best head when none is."""
    say = translator(lang, "lessons.real_heads")
    label = labels(lang)
    lines = []
    for c in n.categories:
        found = [s for s in n.specialised if s.category == c]
        if len(found) == 1:
            s = found[0]
            lines.append(say("line_one", label=label[c], head=head_name(s.layer, s.head), mass=s.mass))
        elif found:
            heads = commas([f"{head_name(s.layer, s.head)} {s.mass:.3f}" for s in found], lang)
            lines.append(say("line_some", label=label[c], count=len(found), heads=heads))
        else:
            b = n.best[c]
            lines.append(say("line_none", label=label[c], head=head_name(b.layer, b.head), mass=b.mass))
    return "\n".join(lines)


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.real_heads")
    best = n.best
    return {
        "model": n.model_name or say("unnamed"),
        "n_layers": n.n_layers,
        "n_heads": n.n_heads,
        "n_total": n.n_layers * n.n_heads,
        "n_sentences": n.n_sentences,
        "example": n.example,
        "n_queries": n.queries["cls"],
        "n_same_queries": n.queries["same"],
        "baseline": n.baseline,
        "threshold": n.threshold,
        "n_specialised_heads": n.n_specialised_heads,
        "lines": _lines(n, lang),
        "n_cls": n.n_specialised["cls"],
        "cls_layers": commas([str(L) for L in n.cls_layers] or ["-"], lang),
        "best_cls": head_name(best["cls"].layer, best["cls"].head),
        "best_cls_mass": best["cls"].mass,
        "best_sep": head_name(best["sep"].layer, best["sep"].head),
        "best_sep_mass": best["sep"].mass,
        "best_previous": head_name(best["previous"].layer, best["previous"].head),
        "best_previous_mass": best["previous"].mass,
        "best_next": head_name(best["next"].layer, best["next"].head),
        "best_next_mass": best["next"].mass,
        "best_same": head_name(best["same"].layer, best["same"].head),
        "best_same_mass": best["same"].mass,
        "best_self": head_name(best["self"].layer, best["self"].head),
        "best_self_mass": best["self"].mass,
    }


def _verdict(n: Result, f: dict, lang: str) -> str:
    """What the list shows, sentence by sentence, each chosen by the numbers."""
    say = translator(lang, "lessons.real_heads")
    best, k = n.best, n.n_specialised
    parts = []
    if best["previous"].mass > 0.9:
        parts.append(say("previous_head", **f))
    if best["next"].mass > n.threshold:
        parts.append(say("next_head", **f))
    others = sum(v for c, v in k.items() if c != "cls")
    if k["cls"] > others:
        parts.append(say("cls_many", **f))
    if best["sep"].mass <= n.threshold and best["self"].mass <= n.threshold and best["same"].mass <= n.threshold:
        parts.append(say("weak_rest", **f))
    parts.append(say("caveat"))
    return then(parts, lang)


def text(n: Result, lang: str) -> str:
    f = _fields(n, lang)
    return translator(lang, "lessons.real_heads")("text", **f, verdict=_verdict(n, f, lang))


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.real_heads")("headline", **_fields(n, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    """A heat map with one row per head (layer by layer) and one column per category."""
    say = translator(lang, "lessons.real_heads")
    cats = n.categories
    M = np.stack([np.array(n.mass[c]).reshape(-1) for c in cats], 1)  # (n_layers * n_heads, 6)
    n_heads = n.n_heads
    fig = new_figure((6.2, 0.19 * len(M) + 1.6))
    ax = fig.subplots()
    image = ax.imshow(M, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    for r in range(M.shape[0]):
        for c in range(M.shape[1]):
            ax.text(
                c,
                r,
                f"{M[r, c]:.2f}",
                ha="center",
                va="center",
                fontsize=6,
                color="white" if M[r, c] > 0.6 else "black",
            )
    for L in range(1, n.n_layers):
        ax.axhline(L * n_heads - 0.5, color="0.3", lw=0.8)
    ax.set_yticks(range(len(M)))
    ax.set_yticklabels([head_name(r // n_heads, r % n_heads) for r in range(len(M))], fontsize=6)
    ax.set_xticks(range(len(cats)))
    short = shorts(lang)
    ax.set_xticklabels([short[c] for c in cats], fontsize="small")
    ax.xaxis.tick_top()
    fig.colorbar(image, ax=ax, shrink=0.5, label=say("colorbar"))
    ax.set_title(say("fig_title", model=n.model_name or say("unnamed"), n_sentences=n.n_sentences), fontsize="medium")
    return [save(fig, out / "real_heads.png")]
