"""Lesson "why-v", said and drawn: two pairs of models, z = A·V against z = A·K, their losses, probe
accuracies and loss curves (numbers from qkv.lessons.why_v.measure)."""

from __future__ import annotations

from pathlib import Path

from qkv.lessons.common.curves import draw_curves
from qkv.lessons.common.text import listing
from qkv.lessons.why_v.result import Model, Pair, Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator

NAMES = {"v": "A·V", "k": "A·K"}  # the kinds of qkv.lessons.why_v.measure.KINDS, as the rows name them


def title(lang: str) -> str:
    return translator(lang, "lessons.why_v")("title")


def _row(m: Model) -> dict:
    """One model's numbers under the names the row message uses."""
    return {
        "train": m.train_loss,
        "val": m.val_loss,
        "params": m.params,
        "sense": m.acc.sense,
        "association": m.acc.association,
        "order": m.acc.order,
    }


def headline(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.why_v")
    parts = [
        say(
            "headline",
            width=pair.d_head,
            val_v=pair.v.val_loss,
            val_k=pair.k.val_loss,
            association_v=pair.v.acc.association,
            association_k=pair.k.acc.association,
            order_v=pair.v.acc.order,
            order_k=pair.k.acc.order,
        )
        for pair in n.pairs
    ]
    return listing(parts, lang)


def _verdict(n: Result, pair: Pair, lang: str) -> str:
    """One sentence per pair, its conclusion chosen by the measured numbers."""
    say = translator(lang, "lessons.why_v")
    gap, acc_v, acc_k = pair.val_gap, pair.v.mean_acc, pair.k.mean_acc
    better, worse = gap > 0.01 and acc_v >= acc_k, gap < -0.01 and acc_v <= acc_k
    verdict = say(
        "pair",
        width=pair.d_head,
        gap=abs(gap),
        direction=say("higher" if gap >= 0 else "lower"),
        early_from=n.early_from,
        early_to=n.early_to,
        early=pair.early_gap,
        acc_v=acc_v,
        acc_k=acc_k,
    )
    return say("verdict", pair=verdict, conclusion=say("better" if better else "worse" if worse else "close"))


def text(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.why_v")
    rows = [
        say("row", width=pair.d_head, kind=name, **_row(kind))
        for pair in n.pairs
        for kind, name in ((pair.v, NAMES["v"]), (pair.k, NAMES["k"]))
    ]
    wide, narrow = (pair.d_head for pair in n.pairs)
    probes = n.probes
    return say(
        "text",
        **n.to_numbers(),
        wide=wide,
        narrow=narrow,
        sense_probes=probes.sense.count,
        association_probes=probes.association.count,
        order_probes=probes.order.count,
        sense_chance=probes.sense.chance,
        association_chance=probes.association.chance,
        order_chance=probes.order.chance,
        rows="\n".join(rows),
        verdicts="\n".join(_verdict(n, pair, lang) for pair in n.pairs),
    )


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    say = translator(lang, "lessons.why_v")
    fig = new_figure((12, 5))
    axes = fig.subplots(1, len(n.pairs))
    for ax, pair in zip(axes, n.pairs):
        runs = {
            "z = A·V": (pair.v.losses, pair.v.val_loss),
            say("k_label"): (pair.k.losses, pair.k.val_loss),
        }
        draw_curves(ax, runs, lang, zoom_from=100)
        ax.set_title(say("width_title", width=pair.d_head))
    fig.suptitle(say("fig_title"))
    return [save(fig, out / "why_v_loss.png")]
