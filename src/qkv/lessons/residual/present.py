"""Lesson "residual", said and drawn: four deep stacks with and without residuals and LayerNorm, their
losses, the numbers at initialisation that explain them, and the loss curves (numbers from
qkv.lessons.residual.measure)."""

from __future__ import annotations

from pathlib import Path

from qkv.lessons.common.curves import draw_curves
from qkv.lessons.common.text import listing, then
from qkv.lessons.residual.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator


def title(lang: str) -> str:
    return translator(lang, "lessons.residual")("title")


def labels(lang: str) -> dict[str, str]:
    """Each variant's name, by the names of qkv.lessons.residual.measure.VARIANTS."""
    say = translator(lang, "lessons.residual")
    return {
        "both": say("label_both"),
        "residual": say("label_residual"),
        "norm": say("label_norm"),
        "neither": say("label_neither"),
    }


def _g(x: float) -> str:
    return f"{x:.2g}" if x == 0 or 1e-3 <= abs(x) < 1e4 else f"{x:.1e}"


def _stuck(n: Result, name: str) -> bool:
    """Still no better than word frequencies (within 0.1 nats) at the end."""
    return n.models[name].val_loss > n.unigram_loss - 0.1


def headline(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.residual")
    label = labels(lang)
    parts = [say("headline_part", label=label[x], val=n.models[x].val_loss) for x in n.variants]
    return say("headline", **n.to_numbers(), parts=listing(parts, lang))


def _why_stuck(n: Result, x: str, again: bool, lang: str) -> str:
    """The measured reason a variant did not learn: its tokens collapsed, its gradient vanished, or both.
    `again`: the collapse was already explained for an earlier variant."""
    say = translator(lang, "lessons.residual")
    cos, grad = n.models[x].cos_last, n.models[x].grad_first
    why = []
    if cos > 0.9 and again:
        why.append(say("collapsed_again", cos=cos))
    elif cos > 0.9:
        collapsed = say("collapsed", cos=cos)
        why.append(say("collapsed_big_grad", collapsed=collapsed, grad=_g(grad)) if grad >= 1e-3 else collapsed)
    if grad < 1e-6:
        why.append(say("vanished", grad=_g(grad)))
    return say("stuck", label=labels(lang)[x], unigram_loss=n.unigram_loss, why=listing(why or [say("no_cause")], lang))


def _verdicts(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.residual")
    out = [say("best", label=labels(lang)[n.best], val=n.models[n.best].val_loss)]
    explained = False
    for x in n.variants:
        if _stuck(n, x):
            out.append(_why_stuck(n, x, explained, lang))
            explained = explained or n.models[x].cos_last > 0.9
    if not _stuck(n, "residual"):
        gap = n.val_gap_residual
        out.append(
            say(
                "layernorm_helps",
                gap=abs(gap),
                direction=say("above" if gap > 0 else "below"),
                early_loss_residual=n.models["residual"].early_loss,
                early_loss_both=n.models["both"].early_loss,
                early_step=n.early_step,
                grad_ratio_residual=n.grad_ratio_residual,
            )
        )
    return then(out, lang)


def text(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.residual")
    label, models = labels(lang), n.models
    rows = [
        say(
            "row",
            label=label[x],
            early=models[x].early_loss,
            early_step=n.early_step,
            train=models[x].train_loss,
            val=models[x].val_loss,
            rms=_g(models[x].rms_last),
            cos=models[x].cos_last,
            grad_first=_g(models[x].grad_first),
            grad_last=_g(models[x].grad_last),
        )
        for x in n.variants
    ]
    return say("text", **n.to_numbers(), rows="\n".join(rows), verdicts=_verdicts(n, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    say = translator(lang, "lessons.residual")
    fig = new_figure((8, 5))
    ax = fig.subplots()
    label, models = labels(lang), n.models
    runs = {label[x]: (models[x].losses, models[x].val_loss) for x in n.variants}
    draw_curves(ax, runs, lang, window=15)
    ax.axhline(n.unigram_loss, color="k", ls=":", lw=1, label=say("unigram"))
    ax.legend(fontsize="small")
    ax.set_title(say("fig_title", **n.to_numbers()))
    return [save(fig, out / "residual_loss.png")]
