"""What every figure shares: a CJK-capable matplotlib Figure, PNG or SVG by suffix, short labels,
a caption under the plots, and point labels that do not overlap.

The plotting functions (plot_*) take plain arrays; qkv.apps.figure loads checkpoints and
runs traces, qkv.presentation.draw hands them the arrays. Their words come from the message catalogue (areas figures.*).

Text never overlaps text: `caption` writes each line of a caption as its own Text, one line height
(LINE × the font size) apart, so lines of Chinese, whose glyphs are taller than a Latin font's, do not
run into each other; and `save` first spreads the labels of points (annotations placed at a data
point with an offset in points, no arrow): a label that would overlap another text, the legend or
leave its axes moves to the nearest free spot around its point (`spread_labels`), then the layout is
frozen so that nothing moves when the file is written.
"""

from __future__ import annotations

from pathlib import Path

from qkv.core.io.files import check_folder_of, replacing
from qkv.core.io.refusal import Refusal
from qkv.presentation.text import wrap

SUFFIXES = (".png", ".svg")
_NO_START = set("，。；：、）」』！？”’")
LINE = 1.5  # a caption line's height, in font sizes: room for CJK glyphs, which reach above Latin capitals


def check_path(path) -> Path:
    """The output path, if its suffix names a format we write (.png or .svg) and its folder is there;
    a one-line refusal otherwise (the folder is not made: a mistyped one is said, as explain --html says it)."""
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        raise Refusal.of("errors.figure_cannot_write", path=p)
    return check_folder_of(p)


def new_figure(figsize=(6.4, 4.8)):
    """A matplotlib Figure that draws Chinese with the CJK font.

    It is not registered with pyplot, so there is no global state to clean up: once saved and
    dropped it is freed (safe in a web server's threads too)."""
    from qkv.presentation import fonts

    fonts.setup_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def save(fig, path) -> Path:
    """Write the figure as PNG or SVG (by suffix), whole or not at all: a file already at `path` stays
    as it was if the writing fails (core/io/files.replacing). Returns the path.

    Nothing needs closing: the Figure was never given to pyplot, so dropping it frees it."""
    p = check_path(path)
    spread_labels(fig)
    with replacing(p) as f:
        fig.savefig(f, format=p.suffix.lower()[1:], dpi=150)
    return p


def short(label: str, width: int = 8) -> str:
    """A token label short enough for an axis: long tokens end in an ellipsis."""
    return label if len(label) <= width else label[: width - 1] + "…"


def column_labels(ax, ticks, labels: list[str], rotate: bool, **kw) -> None:
    """An x axis's labels, vertical when `rotate`: labels of Chinese or Japanese characters (and full-width
    marks) are stacked upright, one character under the other, as vertical Chinese is written (turned on
    its side, 三 reads as 川); other labels are turned a quarter."""
    upright = rotate and all(label and all(ord(c) >= 0x2E80 for c in label) for label in labels)
    if upright:
        labels = ["\n".join(label) for label in labels]
    ax.set_xticks(ticks, labels, rotation=90 if rotate and not upright else 0, **kw)


def label_step(n: int, room: int = 24) -> int:
    """Show every k-th label so that at most `room` labels share an axis."""
    return max(1, -(-n // room))


def caption(fig, text: str, columns: int = 90, fontsize: float = 9) -> float:
    """Write `text` centred under the plots, wrapped at `columns` display columns (a Chinese character
    counts two), one Text per line, LINE font sizes apart; the layout keeps the plots above it.
    Returns the share of the figure's height the caption takes."""
    lines = wrap(text, columns).split("\n")
    for n in range(1, len(lines)):  # Chinese punctuation never starts a line: it ends the one before
        while lines[n][:1] in _NO_START and lines[n] and lines[n - 1]:
            lines[n - 1], lines[n] = lines[n - 1] + lines[n][0], lines[n][1:]
    height = fig.get_figheight() * 72  # points
    margin, step = 4.0, fontsize * LINE
    for i, line in enumerate(reversed(lines)):  # the last line at the bottom
        if line.strip():
            fig.text(0.5, (margin + i * step) / height, line, ha="center", va="bottom", fontsize=fontsize)
    bottom = (2 * margin + len(lines) * step) / height
    fig.get_layout_engine().set(rect=(0, bottom, 1, 1 - bottom))
    return bottom


# candidate places of a label around its point, nearest first: (dx, dy) in points, alignment
_AROUND = [(1, 1, "left", "bottom"), (1, -1, "left", "top"), (-1, 1, "right", "bottom"), (-1, -1, "right", "top"),
           (0, 1.3, "center", "bottom"), (0, -1.3, "center", "top"), (1.3, 0, "left", "center"),
           (-1.3, 0, "right", "center")]  # fmt: skip
_RINGS = (3, 6, 10, 15, 21)


def point_labels(ax) -> list:
    """The annotations of `ax` that label a data point: text at an offset in points, no arrow."""
    from matplotlib.text import Annotation

    return [
        a
        for a in ax.texts
        if isinstance(a, Annotation)
        and a.arrow_patch is None
        and a.xycoords == "data"
        and a.anncoords == "offset points"
        and a.get_visible()
        and a.get_text().strip()
    ]


def _overlap(a, b) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def spread_labels(fig) -> None:
    """Move each point label that overlaps another text, a legend or the edge of its axes to the first
    free place around its point (`_AROUND` on rings of `_RINGS` points), or else to the least crowded
    one; then freeze the layout and each legend where they are. A figure without point labels is left
    as it is."""
    labelled = [(ax, point_labels(ax)) for ax in fig.axes]
    if not any(labels for _, labels in labelled):
        return
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)  # the figure's canvas from now on: text can be measured
    fig.draw_without_rendering()  # runs the layout: every position is final
    renderer = fig.canvas.get_renderer()
    taken = [t.get_window_extent(renderer) for t in fig.texts if t.get_visible() and t.get_text().strip()]
    for ax, labels in labelled:
        legend = ax.get_legend()
        if legend is not None:
            taken.append(legend.get_window_extent(renderer))
            _pin_legend(ax, legend, renderer)
        others = [t for t in ax.texts if t not in labels and t.get_visible() and t.get_text().strip()]
        taken += [t.get_window_extent(renderer) for t in others]
        if ax.title.get_text():
            taken.append(ax.title.get_window_extent(renderer))
        inside = ax.get_window_extent(renderer)
        dots = _markers(ax, fig.dpi)
        for label in labels:
            own = ax.transData.transform(label.xy)
            near = [b for c, b in dots if abs(c[0] - own[0]) > 0.5 or abs(c[1] - own[1]) > 0.5]  # not its own point
            taken.append(_place(label, taken + near, inside, renderer))
    try:
        fig.set_layout_engine("none")  # nothing moves when the file is written
    except RuntimeError:  # a colorbar made under the old engine: keep it (its labels were placed anyway)
        pass


def _markers(ax, dpi: float) -> list:
    """(centre, box) in display pixels of every scatter marker of `ax`: a label should not hide a point."""
    from matplotlib.collections import PathCollection
    from matplotlib.transforms import Bbox

    out = []
    for c in ax.collections:
        if not isinstance(c, PathCollection):
            continue
        sizes = c.get_sizes() if len(c.get_sizes()) else [36.0]
        for n, xy in enumerate(c.get_offset_transform().transform(c.get_offsets())):
            r = (float(sizes[n % len(sizes)]) ** 0.5) / 2 * dpi / 72  # s is the area in points²
            out.append((xy, Bbox.from_extents(xy[0] - r, xy[1] - r, xy[0] + r, xy[1] + r)))
    return out


def _place(label, taken, inside, renderer):
    """Put `label` at its own offset if that is free, else at the best candidate; returns its box."""
    dx0, dy0 = label.xyann
    tries = [(dx0, dy0, label.get_horizontalalignment(), label.get_verticalalignment())]
    tries += [(sx * r, sy * r, ha, va) for r in _RINGS for sx, sy, ha, va in _AROUND]
    best = None
    for dx, dy, ha, va in tries:
        label.xyann = (dx, dy)
        label.set_horizontalalignment(ha)
        label.set_verticalalignment(va)
        box = label.get_window_extent(renderer)
        outside = box.width * box.height - _overlap(box, inside)
        cost = sum(_overlap(box, t) for t in taken) + outside
        if best is None or cost < best[0]:
            best = (cost, dx, dy, ha, va, box)
        if cost <= 0:
            break
    _, dx, dy, ha, va, box = best
    label.xyann = (dx, dy)
    label.set_horizontalalignment(ha)
    label.set_verticalalignment(va)
    return box


def _pin_legend(ax, legend, renderer) -> None:
    """Keep a legend where the layout put it ("best" would look again once the labels have moved)."""
    box = legend.get_window_extent(renderer).transformed(ax.transAxes.inverted())
    legend.set_loc("lower left")
    legend.borderaxespad = 0
    legend.set_bbox_to_anchor((box.x0, box.y0), transform=ax.transAxes)
