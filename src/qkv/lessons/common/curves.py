"""Loss curves of the models a lesson trained (why-v, residual): each run's batch losses, their
moving average and its final validation loss, on one axis."""

from __future__ import annotations

import math

from qkv.presentation.i18n import translator
from qkv.presentation.plot_training import moving_average


def draw_curves(
    ax, runs: dict[str, tuple[list[float], float]], lang: str, window: int = 25, zoom_from: int | None = None
) -> None:
    """runs: label -> (batch losses, final validation loss). Draws each run's losses (light), their
    moving average (solid) and the validation loss (a square at the last step). `zoom_from` limits the
    y axis to what the averages show from that step on (the first steps' drop would flatten the rest)."""
    say = translator(lang, "lessons.common")
    shown = []
    for n, (label, (losses, val_loss)) in enumerate(runs.items()):
        colour = f"C{n % 10}"
        steps = list(range(1, len(losses) + 1))
        smooth = moving_average(losses, window)
        ax.plot(steps, losses, color=colour, alpha=0.2, lw=0.7)
        ax.plot(steps, smooth, color=colour, lw=1.6, label=label)
        ax.plot([len(losses)], [val_loss], "s", color=colour, ms=7, mfc="white")
        if zoom_from is not None:
            shown += [v for v in smooth[zoom_from:] if math.isfinite(v)] + [val_loss]
    shown = [v for v in shown if math.isfinite(v)]
    if shown:
        low, high = min(shown), max(shown)
        pad = 0.08 * (high - low) + 1e-3
        ax.set_ylim(low - pad, high + pad)
    ax.set_xlabel(say("curves_x"))
    ax.set_ylabel(say("curves_y"))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
