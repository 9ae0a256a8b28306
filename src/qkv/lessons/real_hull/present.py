"""Lesson "real-hull", said and drawn: z inside its values' hull on every head of a real encoder, and
what W_O, the residual and the post-norm LayerNorm do to that (numbers from qkv.lessons.real_hull.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.common.text import then
from qkv.lessons.real_hull.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator
from qkv.presentation.plot_hull import hull_figure

COLUMNS = (
    "z",
    "zW",
    "x_zW",
    "sum",
    "mid",
)  # the figure's columns: z, then the stages of qkv.lessons.real_hull.measure.STAGES


def title(lang: str) -> str:
    return translator(lang, "lessons.real_hull")("title")


def column_names(lang: str) -> dict[str, str]:
    """Each column of COLUMNS as the figure labels it."""
    say = translator(lang, "lessons.real_hull")
    return {
        "z": say("fig_z"),
        "zW": say("fig_zW"),
        "x_zW": say("fig_x_zW"),
        "sum": say("fig_sum"),
        "mid": say("fig_mid"),
    }


def dist(x: float) -> str:
    """A hull distance as the text shows it."""
    return "0" if x == 0 else f"{x:.3g}"


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.real_hull")
    out, k = n.outside, n.n_total
    low, high, median = n.min_distance, n.max_distance, n.median_distance
    return {
        "model": n.model_name or say("unnamed"),
        "text": n.text,
        "T": len(n.tokens),
        "query": n.query,
        "position": n.position,
        "n_total": k,
        "n_layers": n.n_layers,
        "n_heads": n.n_heads,
        "d_head": n.d_head,
        "d_model": n.d_model,
        "z_points": n.z_points,
        "z_outside": n.z_outside,
        "z_inside": n.z_points - n.z_outside,
        "z_max": dist(n.z_max_distance),
        "norm_x_min": min(n.norm_x),
        "norm_x_max": max(n.norm_x),
        "norm_zW_median": n.norm_zW_median,
        "norm_zW_max": n.norm_zW_max,
        "ln_gap": f"{n.ln_gap:.1g}",
        "mid_min_head": head_name(n.mid_min.layer, n.mid_min.head),
        "mid_min_weight": n.mid_min.max_weight,
        "mid_max_head": head_name(n.mid_max.layer, n.mid_max.head),
        "mid_max_weight": n.mid_max.max_weight,
        "ex_head": head_name(n.example.layer, n.example.head),
        "cue": n.cue,
        "cue_weight": n.example.cue_weight,
        # each stage of n.stages: how many heads are outside and inside its hull, and the distances
        "zW_outside": out["zW"],
        "zW_inside": k - out["zW"],
        "zW_max": dist(high["zW"]),
        "x_zW_outside": out["x_zW"],
        "x_zW_min": dist(low["x_zW"]),
        "x_zW_max": dist(high["x_zW"]),
        "sum_outside": out["sum"],
        "sum_inside": k - out["sum"],
        "sum_max": dist(high["sum"]),
        "mid_outside": out["mid"],
        "mid_inside": k - out["mid"],
        "mid_min": dist(low["mid"]),
        "mid_max": dist(high["mid"]),
        "mid_median": dist(median["mid"]),
    }


def _steps(n: Result, f: dict, lang: str) -> list[str]:
    """One paragraph per stage, the wording chosen by whether the stage came out inside or outside."""
    say = translator(lang, "lessons.real_hull")
    out, k = n.outside, n.n_total
    steps = [say("z_all" if n.z_outside == 0 else "z_some", **f)]
    steps.append(say("zW_all" if out["zW"] == 0 else "zW_some", **f))
    steps.append(say("x_all" if out["x_zW"] == k else "x_some", **f))
    steps.append(say("sum_all" if out["sum"] == 0 else "sum_some", **f))
    mid = [say("mid_all" if out["mid"] == k else "mid_some", **f), say("mid_why", **f)]
    steps.append(then(mid, lang))
    return steps


def text(n: Result, lang: str) -> str:
    f = _fields(n, lang)
    return translator(lang, "lessons.real_hull")("text", **f, steps="\n\n".join(_steps(n, f, lang)))


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.real_hull")("headline", **_fields(n, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    say = translator(lang, "lessons.real_hull")
    ex = n.example
    head = hull_figure(
        ex.values,
        ex.z,
        ex.weights,
        out / "real_hull_head.png",
        labels=n.tokens,
        lang=lang,
        title=say("head_title", head=head_name(ex.layer, ex.head), query=n.query),
    )
    return [_distances_figure(n, out / "real_hull_distances.png", lang), head.path]


def _distances_figure(n: Result, path: Path, lang: str) -> Path:
    """Every head's L1 distance to the hull at each stage (0: inside), on a symmetric-log axis."""
    say = translator(lang, "lessons.real_hull")
    rng = np.random.default_rng(0)  # horizontal jitter only, so the dots of one stage do not hide each other
    fig = new_figure((8.5, 4.8))
    ax = fig.subplots()
    for x, col in enumerate(COLUMNS):
        d = np.array(n.distances[col]).reshape(-1)  # (n_layers * n_heads,)
        ax.scatter(x + rng.uniform(-0.22, 0.22, len(d)), d, s=12, alpha=0.7)
        inside = int((d == 0).sum())
        ax.annotate(
            say("fig_inside", inside=inside, total=len(d)),
            (x, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(0, -14),
            textcoords="offset points",
            ha="center",
            fontsize="small",
        )
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_ylim(-1e-4, max(1.0, float(np.max(n.distances["x_zW"]))) * 8)
    ax.set_xticks(range(len(COLUMNS)))
    column = column_names(lang)
    ax.set_xticklabels([column[c] for c in COLUMNS], fontsize="small")
    ax.set_ylabel(say("fig_y"))
    ax.set_title(say("fig_title", model=n.model_name or say("unnamed"), query=n.query), fontsize="medium")
    ax.grid(alpha=0.3, axis="y")
    return save(fig, path)
