"""Lesson "llm-hull", said and drawn: every head's z inside the hull of its values in a real LLM, and
x + z W_O outside it (numbers from qkv.lessons.llm_hull.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.common.text import pad
from qkv.lessons.llm_hull.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator
from qkv.presentation.plot_hull import hull_figure


def title(lang: str) -> str:
    return translator(lang, "lessons.llm_hull")("title")


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def dist(x: float) -> str:
    """A hull distance as the text shows it."""
    return "0" if x == 0 else f"{x:.3g}"


def _table(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.llm_hull")
    cols = (say("col_tokens"), say("col_min_a"), say("col_sum"), say("col_rebuild"), say("col_lp"))
    lines = ["  " + pad(say("col_text"), 6) + "".join(pad(c, 13, True) for c in cols)]
    for i, t in enumerate(n.texts):
        cells = (f"{t.min_weight:.3g}", f"{t.max_sum_error:.1e}", f"{t.max_rebuild_error:.1e}", dist(t.max_lp_distance))
        lines.append("  " + pad(str(i + 1), 6) + f"{len(t.tokens):>13}" + "".join(f"{c:>13}" for c in cells))
    return "\n".join(lines)


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.llm_hull")
    n_total = n.n_layers * n.n_heads
    x = np.array(n.x_zW_distances)
    return {
        "model": n.model_name or say("unnamed"),
        "n_layers": n.n_layers,
        "n_heads": n.n_heads,
        "n_kv_heads": n.n_kv_heads,
        "group": n.n_heads // max(1, n.n_kv_heads),
        "d_head": n.d_head,
        "d_model": n.d_model,
        "n_total": n_total,
        "n_texts": len(n.texts),
        "texts": "\n".join(f"  {i + 1}. {t.text}" for i, t in enumerate(n.texts)),
        "n_positions": n.n_positions,
        "table": _table(n, lang),
        "min_weight": min(t.min_weight for t in n.texts),
        "sum_error": f"{max(t.max_sum_error for t in n.texts):.1e}",
        "rebuild_error": f"{max(t.max_rebuild_error for t in n.texts):.1e}",
        "lp_checked": n_total * len(n.texts),
        "lp_outside": sum(t.lp_outside for t in n.texts),
        "lp_max": dist(max(t.max_lp_distance for t in n.texts)),
        "tol": f"{n.tol:g}",
        "x_outside": n.x_zW_outside,
        "x_min": n.x_zW_min,
        "x_median": float(np.median(x)),
        "first_text": n.texts[0].text,
        "last_token": n.texts[0].tokens[-1],
        "ex_head": head_name(n.example.layer, n.example.head),
        "ex_max": max(n.example.weights),
    }


def text(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.llm_hull")
    f = _fields(n, lang)
    exact = f["min_weight"] >= 0 and f["lp_outside"] == 0
    inside = say("inside_all", **f) if exact else say("inside_some", **f)
    outside = say("outside_all", **f) if f["x_outside"] == f["n_total"] else say("outside_some", **f)
    return say("text", **f, inside=inside, outside=outside)


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.llm_hull")("headline", **_fields(n, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    say = translator(lang, "lessons.llm_hull")
    ex = n.example
    head = hull_figure(
        ex.values,
        ex.z,
        ex.weights,
        out / "llm_hull_head.png",
        labels=n.texts[0].tokens,
        lang=lang,
        title=say("head_title", head=head_name(ex.layer, ex.head), token=n.texts[0].tokens[-1]),
    )
    return [_distances_figure(n, out / "llm_hull_distances.png", lang), head.path]


def _distances_figure(n: Result, path: Path, lang: str) -> Path:
    """Per layer, every head: z's distance to conv{v_j} (the linear program, every sentence) and the margin
    by which x + z W_O lies outside conv{v_j W_O}."""
    say = translator(lang, "lessons.llm_hull")
    fig = new_figure((9, 4.6))
    ax = fig.subplots()
    layers = np.arange(n.n_layers)
    for i, t in enumerate(n.texts):
        d = np.array(t.lp_distances)  # (n_layers, n_heads)
        ax.scatter(np.repeat(layers, n.n_heads) + 0.1 * i, d.reshape(-1), s=10, marker="o", color="tab:blue",
                   label=say("fig_z") if i == 0 else None)  # fmt: skip
    x = np.array(n.x_zW_distances)
    ax.scatter(np.repeat(layers, n.n_heads), x.reshape(-1), s=10, marker="^", color="tab:red", label=say("fig_x"))
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel(say("fig_layer"))
    ax.set_ylabel(say("fig_y"))
    ax.set_title(say("fig_title", model=n.model_name or say("unnamed")), fontsize="medium")
    ax.legend(fontsize="small", loc="center right")
    ax.grid(alpha=0.3)
    return save(fig, path)
