"""Lesson "why-v", said and drawn: two pairs of models, z = A·V against z = A·K, their losses, probe
accuracies and loss curves (numbers from qkv.apps.lessons.why_v.measure)."""

from __future__ import annotations

from pathlib import Path

from ..figures import new_figure, save
from ..i18n import translator
from .common import listing
from .curves import draw_curves

NAMES = {"v": "A·V", "k": "A·K"}
PHENOMENA = ("sense", "association", "order")


def _model(n: dict, key: str) -> dict:
    """One model's numbers under the names the row message uses."""
    return {
        "train": n[f"train_loss_{key}"],
        "val": n[f"val_loss_{key}"],
        "params": n[f"params_{key}"],
        **{ph: n[f"{ph}_acc_{key}"] for ph in PHENOMENA},
    }


def headline(n: dict, lang: str) -> str:
    say = translator(lang, "lessons.why_v")
    parts = [
        say(
            "headline",
            width=w,
            val_v=n[f"val_loss_v{w}"],
            val_k=n[f"val_loss_k{w}"],
            **{f"{ph}_{kind}": n[f"{ph}_acc_{kind}{w}"] for ph in PHENOMENA for kind in NAMES},
        )
        for w in n["widths"]
    ]
    return listing(parts, lang)


def _verdict(n: dict, width: int, lang: str) -> str:
    """One sentence per pair, its conclusion chosen by the measured numbers."""
    say = translator(lang, "lessons.why_v")
    gap, acc_v, acc_k = n[f"val_gap{width}"], n[f"mean_acc_v{width}"], n[f"mean_acc_k{width}"]
    better, worse = gap > 0.01 and acc_v >= acc_k, gap < -0.01 and acc_v <= acc_k
    pair = say(
        "pair",
        width=width,
        gap=abs(gap),
        direction=say("higher" if gap >= 0 else "lower"),
        early_from=n["early_from"],
        early_to=n["early_to"],
        early=n[f"early_gap{width}"],
        acc_v=acc_v,
        acc_k=acc_k,
    )
    return say("verdict", pair=pair, conclusion=say("better" if better else "worse" if worse else "close"))


def text(n: dict, lang: str) -> str:
    say = translator(lang, "lessons.why_v")
    rows = [
        say("row", width=w, kind=name, **_model(n, f"{key}{w}")) for w in n["widths"] for key, name in NAMES.items()
    ]
    wide, narrow = n["widths"]
    return say(
        "text",
        **n,
        wide=wide,
        narrow=narrow,
        rows="\n".join(rows),
        verdicts="\n".join(_verdict(n, w, lang) for w in n["widths"]),
    )


def figures(n: dict, out: Path, lang: str) -> list[Path]:
    say = translator(lang, "lessons.why_v")
    fig = new_figure((12, 5))
    axes = fig.subplots(1, len(n["widths"]))
    for ax, w in zip(axes, n["widths"]):
        runs = {
            "z = A·V": (n[f"losses_v{w}"], n[f"val_loss_v{w}"]),
            say("k_label"): (n[f"losses_k{w}"], n[f"val_loss_k{w}"]),
        }
        draw_curves(ax, runs, lang, zoom_from=100)
        ax.set_title(say("width_title", width=w))
    fig.suptitle(say("fig_title"))
    return [save(fig, out / "why_v_loss.png")]
