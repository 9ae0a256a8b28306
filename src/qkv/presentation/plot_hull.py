"""The picture of the convex-hull claim: z = Σ_j a_j v_j sits inside the hull of the values.

`hull_figure` draws the values v_j (labelled, each with its weight a_j), their convex hull
(shaded), the output z, and a line from z to each value whose width is proportional to a_j.
Values with more than two coordinates are first projected by PCA, y = (x − mean) Cᵀ; the map is
linear, so Σ a_j y_j is the projection of z and z stays inside the projected hull.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qkv.analysis.numbers import fmt
from qkv.core.see.hull import hull_polygon, pca_2d, project
from qkv.presentation.figures import caption as write_caption
from qkv.presentation.figures import check_path, new_figure, save
from qkv.presentation.i18n import lang_of, t, translator

MAX_DRAWN = 1e300  # |v| beyond this: the picture's margins would pass the largest float (1.8e308)


@dataclass(frozen=True)
class HullFigure:
    """What `hull_figure` wrote: the file, the caption under the picture, and whether PCA was used."""

    path: Path
    title: str
    caption: str
    projected: bool


def check_drawable(values) -> None:
    """A one-line ValueError for values the picture cannot hold (non-finite, or beyond ±MAX_DRAWN)."""
    V = np.asarray(values, dtype=float)
    if not (np.all(np.isfinite(V)) and np.abs(V).max() <= MAX_DRAWN):
        raise ValueError(
            f"the figure cannot draw values beyond ±{MAX_DRAWN:g} (its margins would pass the largest "
            "float): scale the values down"
        )


def hull_caption(d: int, lang: str | None = None, caption: str | None = None) -> str:
    """The caption: the given one (or the default), plus the PCA note when d > 2."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    text = caption if caption is not None else t("figures.hull.caption", lang)
    if d > 2:
        text = text + "\n" + t("figures.hull.projected", lang, d=d)
    return text


def draw_hull(ax, points2d, label: str) -> np.ndarray:
    """Shade the convex hull of 2-D points on `ax` (a thick segment when they are collinear); returns
    its vertices (geometry.hull_polygon)."""
    poly = hull_polygon(points2d)
    if len(poly) >= 3:
        ax.fill(poly[:, 0], poly[:, 1], color="tab:blue", alpha=0.15, label=label)
        ax.plot(*np.vstack([poly, poly[:1]]).T, color="tab:blue", lw=1)
    elif len(poly) == 2:
        ax.plot(poly[:, 0], poly[:, 1], color="tab:blue", lw=6, alpha=0.25, label=label)
    return poly


def hull_figure(values, z, weights, path, labels=None, title=None, caption=None, lang: str | None = None) -> HullFigure:
    """Draw values (n, d), their hull, z (d,) and the weights (n,) to `path` (.png or .svg)."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    say = translator(lang, "figures.hull")
    path = check_path(path)
    V = np.asarray(values, dtype=float)
    V = V[:, None] if V.ndim == 1 else V
    z = np.asarray(z, dtype=float).reshape(-1)
    a = np.asarray(weights, dtype=float).reshape(-1)
    if V.ndim != 2 or V.shape[0] == 0 or z.shape != (V.shape[1],) or a.shape != (V.shape[0],):
        raise ValueError(f"hull_figure needs values (n, d), z (d,), weights (n,); got {V.shape}, {z.shape}, {a.shape}")
    n, d = V.shape
    labels = list(labels) if labels is not None else [f"v{j + 1}" for j in range(n)]
    if len(labels) != n:
        raise ValueError(f"{len(labels)} labels for {n} values")
    check_drawable(V)

    P, mean, components = pca_2d(V)  # (n, 2), (d,), (2, d)
    zp = project(z, mean, components)[0]  # (2,)
    title = title if title is not None else say("title")
    caption = hull_caption(d, lang, caption)

    fig = new_figure((6.4, 6.4))
    ax = fig.subplots()
    draw_hull(ax, P, say("hull"))
    top = max(float(np.abs(a).max()), 1e-12)
    for j in range(n):  # line widths ∝ a_j
        ax.plot([zp[0], P[j, 0]], [zp[1], P[j, 1]], color="tab:orange", lw=0.5 + 5 * abs(a[j]) / top, alpha=0.7)
    ax.scatter(P[:, 0], P[:, 1], s=60, color="tab:blue", zorder=3)
    for j in range(n):
        ax.annotate(
            f"{labels[j]}\na = {fmt(a[j], 3)}", P[j], textcoords="offset points", xytext=(8, 6), fontsize=10, zorder=4
        )
    shown_z = "(" + ", ".join(fmt(c, 3) for c in z) + ")" if d <= 4 else ""
    ax.scatter([zp[0]], [zp[1]], s=140, marker="*", color="tab:red", zorder=5, label=(say("z") + " " + shown_z).strip())
    ax.annotate("z", zp, textcoords="offset points", xytext=(8, -14), color="tab:red", fontsize=11, zorder=5)
    ax.set_aspect("equal", adjustable="datalim")
    ax.margins(0.2)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=9)
    ax.set_title(title)
    if d > 2:
        ax.set_xlabel(t("words_zh.pc1", lang))  # 第一主成分 PC1: the name a learner looks up, beside its words
        ax.set_ylabel(t("words_zh.pc2", lang))
    write_caption(fig, caption, 90, fontsize=9)  # one Text per line: the lines never run into each other
    save(fig, path)
    return HullFigure(path=path, title=title, caption=caption, projected=d > 2)
