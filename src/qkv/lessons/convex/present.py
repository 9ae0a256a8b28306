"""Lesson "convex", said and drawn: the worked example's hull, a real head's hull, and the residual
update x + z·W_O[h] outside it (numbers from qkv.lessons.convex.measure.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.analysis.numbers import fmt
from qkv.lessons.convex.result import Plane, Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator
from qkv.presentation.plot_hull import draw_hull, hull_figure


def dist(x: float) -> str:
    """How a hull distance appears in the text and the headline."""
    return "0" if x == 0 else f"{x:.3g}"


def vec(x) -> str:
    """A vector in closed form where it has one: (1/2, 1/4, 1/4), (ln 2, 0, 0)."""
    return "(" + ", ".join(fmt(float(c)) for c in np.ravel(x)) + ")"


def title(lang: str) -> str:
    return translator(lang, "lessons.convex")("title")


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.convex")

    def where(inside: bool, d: float) -> tuple[str, str, str]:  # (side, distance, both in one phrase)
        side = say("inside" if inside else "outside")
        return side, dist(d), say("where", side=side, d=dist(d))

    ex_side, ex_d, ex_at = where(n.example_inside, n.example_distance)
    z_side, z_d, z_at = where(n.z_inside, n.z_distance)
    zW_side, zW_d, zW_at = where(n.zW_inside, n.zW_distance)
    x_side, x_d, x_at = where(n.residual_inside, n.residual_distance)
    mid_side, mid_d, mid_at = where(n.resid_mid_inside, n.resid_mid_distance)
    return {
        **n.to_numbers(),
        "s": vec(n.example_scores),
        "a": vec(n.example_weights),
        "z": vec(n.example_z),
        "tok": n.tokens[n.position],
        "w": ", ".join(f"{t} {p:.3f}" for t, p in zip(n.tokens, n.weights)),
        "ex_side": ex_side,
        "ex_d": ex_d,
        "ex_at": ex_at,
        "z_side": z_side,
        "z_d": z_d,
        "z_at": z_at,
        "zW_side": zW_side,
        "zW_d": zW_d,
        "zW_at": zW_at,
        "x_side": x_side,
        "x_d": x_d,
        "x_at": x_at,
        "mid_side": mid_side,
        "mid_d": mid_d,
        "mid_at": mid_at,
    }


def text(n: Result, lang: str) -> str:
    return translator(lang, "lessons.convex")("text", **_fields(n, lang))


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.convex")("headline", **_fields(n, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    say = translator(lang, "lessons.convex")
    labels = [f"v{j + 1} {vec(v)}" for j, v in enumerate(n.example_values)]
    example = hull_figure(
        n.example_values, n.example_z, n.example_weights, out / "convex_example.png", labels=labels, lang=lang
    )
    head = hull_figure(
        n.values,
        n.z,
        n.weights,
        out / "convex_head.png",
        labels=n.tokens,
        lang=lang,
        title=say("head_title", **_fields(n, lang)),
    )
    return [example.path, head.path, _residual_figure(n.plane, n.tokens, out / "convex_residual.png", lang)]


def _residual_figure(plane: Plane, tokens, path, lang: str) -> Path:
    """The values v_j W_O[h], z W_O[h] (inside) and x + z W_O[h] (outside), in the plane measure chose."""
    say = translator(lang, "lessons.convex")
    P = np.array(plane.values)  # (T, 2)
    (zx, zy), (xx, xy), (ox, oy) = plane.zW, plane.x_new, plane.x
    fig = new_figure((7.5, 6))
    ax = fig.subplots()
    draw_hull(ax, P, say("fig_hull"))
    ax.scatter(P[:, 0], P[:, 1], s=30, color="tab:blue", zorder=3)
    for (px, py), t in zip(P, tokens):
        ax.annotate(t, (px, py), xytext=(3, 3), textcoords="offset points", fontsize="small")
    ax.scatter([zx], [zy], marker="*", s=160, color="tab:green", zorder=4, label=say("fig_zW"))
    ax.scatter([xx], [xy], marker="*", s=160, color="tab:red", zorder=4, label=say("fig_x_new"))
    ax.scatter([ox], [oy], marker="o", s=40, color="0.4", zorder=4, label=say("fig_x"))
    ax.annotate("", xy=(xx, xy), xytext=(ox, oy), arrowprops=dict(arrowstyle="->", color="0.4"))
    ax.axvline(plane.nearest[0], color="tab:red", ls="--", lw=0.8, label=say("fig_plane"))
    ax.set_xlabel(say("fig_x_axis"))
    ax.set_ylabel(say("fig_y_axis"))
    ax.set_title(say("fig_title"))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return save(fig, path)
