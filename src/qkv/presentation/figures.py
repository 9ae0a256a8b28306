"""What every figure shares: a CJK-capable matplotlib Figure, PNG or SVG by suffix, short labels.

The plotting functions (plot_*) take plain arrays; qkv.presentation.draw reads checkpoints and
traces and hands them the arrays. Their words come from the message catalogue (areas figures.*).
"""

from __future__ import annotations

from pathlib import Path

SUFFIXES = (".png", ".svg")


def check_path(path) -> Path:
    """The output path, if its suffix names a format we write (.png or .svg); ValueError otherwise."""
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        raise ValueError(f"cannot write a figure to {p}: the file name must end in .png or .svg")
    return p


def new_figure(figsize=(6.4, 4.8)):
    """A matplotlib Figure that draws Chinese with the CJK font.

    It is not registered with pyplot, so there is no global state to clean up: once saved and
    dropped it is freed (safe in a web server's threads too)."""
    from . import fonts

    fonts.setup_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def save(fig, path) -> Path:
    """Write the figure as PNG or SVG (by suffix). Returns the path.

    Nothing needs closing: the Figure was never given to pyplot, so dropping it frees it."""
    p = check_path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, format=p.suffix.lower()[1:], dpi=150)
    return p


def short(label: str, width: int = 8) -> str:
    """A token label short enough for an axis: long tokens end in an ellipsis."""
    return label if len(label) <= width else label[: width - 1] + "…"


def label_step(n: int, room: int = 24) -> int:
    """Show every k-th label so that at most `room` labels share an axis."""
    return max(1, -(-n // room))
