"""Cross-attention as an alignment: rows = the target words (the word each decoder step writes),
columns = the source words, colour = the weight A[i, j] = softmax_j(q_i·k_j / √d_head).

Every row adds up to 1 and nothing is masked: each target step sees the whole source. One head is
drawn large, numbers in the cells when the sentences are short; without a head, the heads averaged
come first and every head of the layer beside it. The corpus's gold alignment, when known, is
drawn over every panel as red squares: a head that aligns words puts its largest weights inside them.
"""

from __future__ import annotations

import math

import numpy as np

from qkv.presentation.figures import check_path, new_figure, save
from qkv.presentation.i18n import lang_of, translator
from qkv.presentation.plot_attention import CMAP, _tick_labels
from qkv.presentation.text import wrap

GOLD = "#d62728"


def _check(patterns: np.ndarray, source, target) -> np.ndarray:
    A = np.asarray(patterns, dtype=float)
    if A.ndim not in (2, 3):
        raise ValueError(
            f"patterns must have shape (T_target, T_source) or (n_heads, T_target, T_source); got {A.shape}"
        )
    if A.shape[-1] != len(source) or A.shape[-2] != len(target):
        raise ValueError(
            f"{len(target)} target and {len(source)} source labels for a {A.shape[-2]} x {A.shape[-1]} matrix"
        )
    return A


def _panel(ax, A, source, target, gold, annotate: bool, left: bool, bottom: bool, room: int) -> object:
    image = ax.imshow(A, cmap=CMAP, vmin=0.0, vmax=1.0, interpolation="nearest", aspect="auto")
    ax.tick_params(length=0)
    ax.set_xticks([])
    ax.set_yticks([])
    if bottom:
        _tick_labels(ax, source, "x", rotate=max(len(s) for s in source) > 2, width=10, room=room)
    if left:
        _tick_labels(ax, target, "y", width=10, room=room)
    if annotate:
        size = "small" if max(A.shape) <= 10 else "x-small"
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                ax.text(
                    j,
                    i,
                    f"{A[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=size,
                    color="white" if A[i, j] > 0.6 else "black",
                )
    if gold:
        from matplotlib.patches import Rectangle

        for i, j in gold:
            ax.add_patch(Rectangle((j - 0.42, i - 0.42), 0.84, 0.84, fill=False, edgecolor=GOLD, linewidth=1.5))
    return image


def alignment_figure(
    patterns,
    source,
    target,
    path,
    layer: int,
    head: int | None = None,
    gold=None,
    lang: str | None = None,
    note: str | None = None,
    annotate: bool | None = None,
):
    """Draw cross-attention to `path` (.png or .svg); returns the path.

    patterns: (T_target, T_source) for one head `head`, or (n_heads, T_target, T_source) for every
    head of decoder layer `layer` (head None: the mean first, then each head). source, target: the
    labels of the columns and rows. gold: (target row, source column) cells of the gold alignment, or
    None. note: a line under the picture (e.g. why no gold alignment is drawn)."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    say = translator(lang, "figures.alignment")
    check_path(path)
    A = _check(patterns, source, target)
    source, target = [str(s) for s in source], [str(s) for s in target]
    gold = [(int(i), int(j)) for i, j in gold] if gold else []
    panels = _panels(A, layer, head, say)
    Tt, Ts = A.shape[-2], A.shape[-1]
    cols = 1 if len(panels) == 1 else min(len(panels), 3 if len(panels) > 4 else len(panels))
    rows = math.ceil(len(panels) / cols)
    cell = 0.45 if len(panels) == 1 else 0.28
    w, h = max(3.0, cell * Ts + 1.2), max(2.6, cell * Tt + 1.0)
    size = (cols * w + 1.4, rows * h + 1.6)
    fig = new_figure(size)
    axes = fig.subplots(rows, cols, squeeze=False)
    annotate = (len(panels) == 1 and max(Tt, Ts) <= 16) if annotate is None else annotate
    image = _draw_panels(axes, panels, cols, rows, source, target, gold, annotate, say)
    fig.colorbar(image, ax=axes, shrink=0.8, label=say("weight"))
    if len(panels) > 1:
        fig.suptitle(say("grid_title", layer=layer))
    _caption(fig, size, [say("caption")] + ([say("gold")] if gold else []) + ([note] if note else []))
    return save(fig, path)


def _draw_panels(axes, panels, cols: int, rows: int, source, target, gold, annotate: bool, say):
    """Each panel in its place of the grid (the spare axes hidden), labelled on the outer edges; the last image."""
    image = None
    for n, ax in enumerate(axes.flat):
        if n >= len(panels):
            ax.set_axis_off()
            continue
        matrix, title = panels[n]
        r, c = divmod(n, cols)
        image = _panel(
            ax,
            matrix,
            source,
            target,
            gold,
            annotate,
            left=c == 0,
            bottom=r == rows - 1 or n + cols >= len(panels),
            room=40 if len(panels) == 1 else 24,
        )
        ax.set_title(title, fontsize="medium" if len(panels) == 1 else "small")
        if c == 0:
            ax.set_ylabel(say("target"))
        if r == rows - 1 or n + cols >= len(panels):
            ax.set_xlabel(say("source"))
    return image


def _panels(A, layer: int, head: int | None, say) -> list[tuple]:
    """(matrix, title) of each panel: the one head, or the heads' mean then each head."""
    if A.ndim == 2:
        return [(A, say("head_title", layer=layer, head=head))]
    return [(A.mean(0), say("mean_title", n=A.shape[0]))] + [(A[h], say("head", head=h)) for h in range(A.shape[0])]


def _caption(fig, size, lines: list[str]) -> None:
    """The caption's lines under the panels, wrapped to the figure's width, with room left for them."""
    caption = wrap("\n".join(lines), int(size[0] * 14))
    fig.text(0.5, 0.005, caption, ha="center", va="bottom", fontsize=8)
    bottom = 0.01 + 0.16 * (caption.count("\n") + 1) / size[1]  # room for the caption's lines
    fig.get_layout_engine().set(rect=(0, bottom, 1, 1 - bottom))
