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
from qkv.core.geometry import hull_polygon, pca_2d, project

from .i18n import check_lang, t

FORMATS = (".png", ".svg")

@dataclass(frozen=True)
class HullFigure:
    """What `hull_figure` wrote: the file, the caption under the picture, and whether PCA was used."""

    path: Path
    title: str
    caption: str
    projected: bool


def hull_caption(d: int, lang: str = "en", caption: str | None = None) -> str:
    """The caption: the given one (or the default), plus the PCA note when d > 2."""
    text = caption if caption is not None else t("hull.caption", lang)
    if d > 2:
        text = text + "\n" + t("hull.projected", lang, d=d)
    return text


def _wrap(text: str, width: int) -> str:
    """Break lines at `width` columns, a Chinese character counting as two; Latin words stay whole."""
    import re
    import unicodedata

    def cols(piece: str) -> int:
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in piece)

    lines = []
    for paragraph in text.split("\n"):
        line = ""
        for piece in re.findall(r"[^\s\u3000-\u9fff\uff00-\uffef]+\s*|[\u3000-\u9fff\uff00-\uffef]|\s+", paragraph):
            if line and cols(line + piece.rstrip()) > width:
                lines.append(line.rstrip())
                line = piece.lstrip()
            else:
                line += piece
        lines.append(line.rstrip())
    return "\n".join(lines)


def hull_figure(values, z, weights, path, labels=None, title=None, caption=None, lang: str = "en") -> HullFigure:
    """Draw values (n, d), their hull, z (d,) and the weights (n,) to `path` (.png or .svg)."""
    from . import fonts

    check_lang(lang)
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"figure file must end in .png or .svg, got {path.name!r}")
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

    fonts.setup_matplotlib()
    import matplotlib.pyplot as plt

    P, mean, components = pca_2d(V)
    zp = project(z, mean, components)[0]
    title = title if title is not None else t("hull.title", lang)
    caption = hull_caption(d, lang, caption)

    fig, ax = plt.subplots(figsize=(6.4, 6.4))
    try:
        poly = hull_polygon(P)
        if len(poly) >= 3:
            ax.fill(poly[:, 0], poly[:, 1], color="tab:blue", alpha=0.15, label=t("hull.hull", lang))
            ax.plot(*np.vstack([poly, poly[:1]]).T, color="tab:blue", lw=1)
        elif len(poly) == 2:
            ax.plot(poly[:, 0], poly[:, 1], color="tab:blue", lw=6, alpha=0.25, label=t("hull.hull", lang))
        top = max(float(np.abs(a).max()), 1e-12)
        for j in range(n):  # line widths ∝ a_j
            ax.plot([zp[0], P[j, 0]], [zp[1], P[j, 1]], color="tab:orange", lw=0.5 + 5 * abs(a[j]) / top, alpha=0.7)
        ax.scatter(P[:, 0], P[:, 1], s=60, color="tab:blue", zorder=3)
        for j in range(n):
            ax.annotate(f"{labels[j]}\na = {fmt(a[j], 3)}", P[j], textcoords="offset points", xytext=(8, 6),
                        fontsize=10, zorder=4)
        shown_z = "(" + ", ".join(fmt(c, 3) for c in z) + ")" if d <= 4 else ""
        ax.scatter([zp[0]], [zp[1]], s=140, marker="*", color="tab:red", zorder=5,
                   label=(t("hull.z", lang) + " " + shown_z).strip())
        ax.annotate("z", zp, textcoords="offset points", xytext=(8, -14), color="tab:red",
                    fontsize=11, zorder=5)
        ax.set_aspect("equal", adjustable="datalim")
        ax.margins(0.2)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=9)
        ax.set_title(title)
        if d > 2:
            ax.set_xlabel("PC1")
            ax.set_ylabel("PC2")
        wrapped = _wrap(caption, 90)
        fig.text(0.5, 0.01, wrapped, ha="center", va="bottom", fontsize=9)
        fig.tight_layout(rect=(0, 0.02 + 0.025 * (wrapped.count("\n") + 1), 1, 1))
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)
    return HullFigure(path=path, title=title, caption=caption, projected=d > 2)
