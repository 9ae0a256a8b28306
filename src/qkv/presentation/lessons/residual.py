"""Lesson "residual", said and drawn: four deep stacks with and without residuals and LayerNorm, their
losses, the numbers at initialisation that explain them, and the loss curves (numbers from
qkv.apps.lessons.residual.measure)."""

from __future__ import annotations

from pathlib import Path

from ..figures import new_figure, save
from ..i18n import translator
from .common import listing, then
from .curves import draw_curves


def _g(x: float) -> str:
    return f"{x:.2g}" if x == 0 or 1e-3 <= abs(x) < 1e4 else f"{x:.1e}"


def _stuck(n: dict, name: str) -> bool:
    """Still no better than word frequencies (within 0.1 nats) at the end."""
    return n[f"val_loss_{name}"] > n["unigram_loss"] - 0.1


def headline(n: dict, lang: str) -> str:
    say = translator(lang, "lessons.residual")
    parts = [say("headline_part", label=say(f"label_{x}"), val=n[f"val_loss_{x}"]) for x in n["variants"]]
    return say("headline", **n, parts=listing(parts, lang))


def _why_stuck(n: dict, x: str, again: bool, lang: str) -> str:
    """The measured reason a variant did not learn: its tokens collapsed, its gradient vanished, or both.
    `again`: the collapse was already explained for an earlier variant."""
    say = translator(lang, "lessons.residual")
    cos, grad = n[f"cos_last_{x}"], n[f"grad_first_{x}"]
    why = []
    if cos > 0.9 and again:
        why.append(say("collapsed_again", cos=cos))
    elif cos > 0.9:
        collapsed = say("collapsed", cos=cos)
        why.append(say("collapsed_big_grad", collapsed=collapsed, grad=_g(grad)) if grad >= 1e-3 else collapsed)
    if grad < 1e-6:
        why.append(say("vanished", grad=_g(grad)))
    return say(
        "stuck", label=say(f"label_{x}"), unigram_loss=n["unigram_loss"], why=listing(why or [say("no_cause")], lang)
    )


def _verdicts(n: dict, lang: str) -> str:
    say = translator(lang, "lessons.residual")
    out = [say("best", label=say(f"label_{n['best']}"), val=n[f"val_loss_{n['best']}"])]
    explained = False
    for x in n["variants"]:
        if _stuck(n, x):
            out.append(_why_stuck(n, x, explained, lang))
            explained = explained or n[f"cos_last_{x}"] > 0.9
    if not _stuck(n, "residual"):
        gap = n["val_gap_residual"]
        out.append(say("layernorm_helps", **n, gap=abs(gap), direction=say("above" if gap > 0 else "below")))
    return then(out, lang)


def text(n: dict, lang: str) -> str:
    say = translator(lang, "lessons.residual")
    rows = [
        say(
            "row",
            label=say(f"label_{x}"),
            early=n[f"early_loss_{x}"],
            early_step=n["early_step"],
            train=n[f"train_loss_{x}"],
            val=n[f"val_loss_{x}"],
            rms=_g(n[f"rms_last_{x}"]),
            cos=n[f"cos_last_{x}"],
            grad_first=_g(n[f"grad_first_{x}"]),
            grad_last=_g(n[f"grad_last_{x}"]),
        )
        for x in n["variants"]
    ]
    return say("text", **n, rows="\n".join(rows), verdicts=_verdicts(n, lang))


def figures(n: dict, out: Path, lang: str) -> list[Path]:
    say = translator(lang, "lessons.residual")
    fig = new_figure((8, 5))
    ax = fig.subplots()
    draw_curves(ax, {say(f"label_{x}"): (n[f"losses_{x}"], n[f"val_loss_{x}"]) for x in n["variants"]}, lang, window=15)
    ax.axhline(n["unigram_loss"], color="k", ls=":", lw=1, label=say("unigram"))
    ax.legend(fontsize="small")
    ax.set_title(say("fig_title", **n))
    return [save(fig, out / "residual_loss.png")]
