"""Lesson "order", said and drawn: permutation equivariance, the order probes by kind of position, and
RoPE's shift invariance (numbers from qkv.lessons.order.measure)."""

from __future__ import annotations

from pathlib import Path

from qkv.lessons.order.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator


def title(lang: str) -> str:
    return translator(lang, "lessons.order")("title")


def _fields(n: Result) -> dict:
    """The numbers, with each trained model's under the names the messages use: acc_none2 is
    n.models["none2"].acc."""
    m = n.models
    return {
        **n.to_numbers(),
        "acc_none": m["none"].acc,
        "acc_none2": m["none2"].acc,
        "acc_learned": m["learned"].acc,
        "acc_sinusoidal": m["sinusoidal"].acc,
        "acc_rope": m["rope"].acc,
        "apart_none": m["none"].apart,
        "pair_diff_none": m["none"].pair_diff,
    }


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.order")("headline", **_fields(n))


def text(n: Result, lang: str) -> str:
    """The two-layer model without positions gets the sentence its measured accuracy calls for."""
    say = translator(lang, "lessons.order")
    f = _fields(n)
    return say("text", **f, leak=say("leak_found" if f["acc_none2"] >= 0.6 else "leak_none", **f))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    say = translator(lang, "lessons.order")
    run = {  # the runs' names (qkv.lessons.order.measure.RUNS) as the figure labels them
        "none": say("run_none"),
        "none2": say("run_none2"),
        "learned": say("run_learned"),
        "sinusoidal": say("run_sinusoidal"),
        "rope": say("run_rope"),
    }
    # (measured deviation, its label, colour): blue where the symmetry holds, red where it is broken
    deviations = (
        (n.perm_none, say("perm_none"), "C0"),
        (n.perm_none_causal, say("perm_none_causal"), "C3"),
        (n.perm_learned, say("perm_learned"), "C3"),
        (n.rope_shift_dev, say("rope_shift_dev"), "C0"),
        (n.additive_shift_dev, say("additive_shift_dev"), "C3"),
    )
    fig = new_figure((12, 4.8))
    left, right = fig.subplots(1, 2)
    accs = [100 * n.models[x].acc for x in n.runs]
    bars = left.bar([run[x] for x in n.runs], accs, color=["C7", "C0", "C1", "C2", "C3"])
    left.bar_label(bars, [f"{a:.0f}%" for a in accs])
    left.axhline(50, color="k", ls="--", lw=1, label=say("chance"))
    left.legend(loc="upper left", fontsize="small")
    left.set_ylim(0, 122)
    left.set_ylabel(say("probes_y"))
    left.set_title(say("probes_title", pairs=n.pairs))
    left.tick_params(axis="x", labelsize="small")
    values = [max(value, 1e-12) for value, _, _ in deviations]
    bars = right.barh([label for _, label, _ in deviations], values, color=[c for _, _, c in deviations])
    right.bar_label(bars, [f"{value:.1e}" for value, _, _ in deviations], padding=3, fontsize="small")
    right.set_xscale("log")
    right.set_xlim(1e-16, 1e3)
    right.invert_yaxis()
    right.tick_params(axis="y", labelsize="small")
    right.set_xlabel(say("change_x"))
    right.set_title(say("change_title"))
    return [save(fig, out / "order.png")]
