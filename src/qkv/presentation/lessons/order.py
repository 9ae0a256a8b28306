"""Lesson "order", said and drawn: permutation equivariance, the order probes by kind of position, and
RoPE's shift invariance (numbers from qkv.apps.lessons.order.measure)."""

from __future__ import annotations

from pathlib import Path

from ..figures import new_figure, save
from ..i18n import translator

# (measured deviation, colour): blue where the symmetry holds, red where it is broken
DEVIATIONS = (
    ("perm_none", "C0"),
    ("perm_none_causal", "C3"),
    ("perm_learned", "C3"),
    ("rope_shift_dev", "C0"),
    ("additive_shift_dev", "C3"),
)


def headline(n: dict, lang: str) -> str:
    return translator(lang, "lessons.order")("headline", **n)


def text(n: dict, lang: str) -> str:
    """The two-layer model without positions gets the sentence its measured accuracy calls for."""
    say = translator(lang, "lessons.order")
    return say("text", **n, leak=say("leak_found" if n["acc_none2"] >= 0.6 else "leak_none", **n))


def figures(n: dict, out: Path, lang: str) -> list[Path]:
    say = translator(lang, "lessons.order")
    fig = new_figure((12, 4.8))
    left, right = fig.subplots(1, 2)
    accs = [100 * n[f"acc_{x}"] for x in n["runs"]]
    bars = left.bar([say(f"run_{x}") for x in n["runs"]], accs, color=["C7", "C0", "C1", "C2", "C3"])
    left.bar_label(bars, [f"{a:.0f}%" for a in accs])
    left.axhline(50, color="k", ls="--", lw=1, label=say("chance"))
    left.legend(loc="upper left", fontsize="small")
    left.set_ylim(0, 122)
    left.set_ylabel(say("probes_y"))
    left.set_title(say("probes_title", pairs=n["pairs"]))
    left.tick_params(axis="x", labelsize="small")
    values = [max(n[key], 1e-12) for key, _ in DEVIATIONS]
    bars = right.barh([say(key) for key, _ in DEVIATIONS], values, color=[c for _, c in DEVIATIONS])
    right.bar_label(bars, [f"{n[key]:.1e}" for key, _ in DEVIATIONS], padding=3, fontsize="small")
    right.set_xscale("log")
    right.set_xlim(1e-16, 1e3)
    right.invert_yaxis()
    right.tick_params(axis="y", labelsize="small")
    right.set_xlabel(say("change_x"))
    right.set_title(say("change_title"))
    return [save(fig, out / "order.png")]
