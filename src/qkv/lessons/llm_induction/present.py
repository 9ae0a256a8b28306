"""Lesson "llm-induction", said and drawn: the induction heads of a real LLM, and what switching them off
does to the in-context loss (numbers from qkv.lessons.llm_induction.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.common.text import commas, pad
from qkv.lessons.llm_induction.result import Losses, Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator

MODES = ("zero", "mean")  # qkv.lessons.llm_induction.measure.MODES


def title(lang: str) -> str:
    return translator(lang, "lessons.llm_induction")("title")


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def mode_names(lang: str) -> dict[str, str]:
    say = translator(lang, "lessons.llm_induction")
    return {"zero": say("mode_zero"), "mean": say("mode_mean")}


def _heads_table(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.llm_induction")
    lines = ["  " + pad(say("col_head"), 8) + pad(say("col_induction"), 12, True) + pad(say("col_previous"), 12, True)]
    for h in n.top:
        lines.append("  " + pad(head_name(h.layer, h.head), 8) + f"{h.score:>12.3f}{h.previous:>12.3f}")
    return "\n".join(lines)


def _row(name: str, losses: list[Losses]) -> str:
    """One condition: first, second, gap; for several draws their mean and range."""

    def cell(values: list[float]) -> str:
        if len(values) == 1:
            return f"{values[0]:>22.2f}"
        return f"{np.mean(values):>8.2f} [{min(values):.2f}, {max(values):.2f}]".rjust(22)

    cols = [cell([x.first for x in losses]), cell([x.second for x in losses]), cell([x.gap for x in losses])]
    return "  " + pad(name, 26) + "".join(cols)


def _loss_table(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.llm_induction")
    mode = mode_names(lang)
    head = "  " + pad("", 26) + "".join(pad(c, 22, True) for c in (say("col_first"), say("col_second"), say("col_gap")))
    rows = [head, _row(say("row_clean"), [n.clean])]
    for m in MODES:
        rows.append(_row(say("row_top", k=len(n.top), mode=mode[m]), [n.ablations[m].top]))
        rows.append(
            _row(say("row_random", k=len(n.top), mode=mode[m], r=len(n.ablations[m].random)), n.ablations[m].random)
        )
    return "\n".join(rows)


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.llm_induction")
    zero, mean = n.ablations["zero"], n.ablations["mean"]
    best = n.top[0]
    return {
        "model": n.model_name or say("unnamed"),
        "n_layers": n.n_layers,
        "n_heads": n.n_heads,
        "n_total": n.n_layers * n.n_heads,
        "n_seqs": n.n_seqs,
        "half": n.half,
        "T": 1 + 2 * n.half,
        "baseline": n.baseline,
        "scoring": n.scoring,
        "n_scoring": n.n_scoring,
        "scoring_layers": commas([str(L) for L in n.scoring_layers], lang) if n.scoring_layers else "–",
        "k": len(n.top),
        "best": head_name(best.layer, best.head),
        "best_score": best.score,
        "heads_table": _heads_table(n, lang),
        "loss_table": _loss_table(n, lang),
        "n_random": len(zero.random),
        "clean_first": n.clean.first,
        "clean_second": n.clean.second,
        "clean_gap": n.clean.gap,
        "zero_second": zero.top.second,
        "zero_gap": zero.top.gap,
        "zero_rand_max": max(x.second for x in zero.random),
        "zero_rand_mean": float(np.mean([x.second for x in zero.random])),
        "mean_second": mean.top.second,
        "mean_gap": mean.top.gap,
        "mean_rand_max": max(x.second for x in mean.random),
    }


def text(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.llm_induction")
    f = _fields(n, lang)
    zero, mean = n.ablations["zero"], n.ablations["mean"]
    beats = all(a.top.second > max(x.second for x in a.random) for a in (zero, mean))
    verdict = say("verdict_holds", **f) if beats else say("verdict_fails", **f)
    context = say("context_helps", **f) if n.clean.gap < 0 else say("context_no", **f)
    return say("text", **f, context=context, verdict=verdict)


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.llm_induction")("headline", **_fields(n, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    """Left: every head's induction score (layers × heads); right: the second-repeat loss of each condition."""
    say = translator(lang, "lessons.llm_induction")
    mode = mode_names(lang)
    fig = new_figure((12, 4.8))
    left, right = fig.subplots(1, 2)
    image = left.imshow(np.array(n.induction), aspect="auto", cmap="viridis", origin="lower")
    fig.colorbar(image, ax=left)
    left.set_xlabel(say("fig_head"))
    left.set_ylabel(say("fig_layer"))
    left.set_title(say("fig_scores_title"), fontsize="medium")
    labels, values, spread = [say("row_clean")], [n.clean.second], [0.0]
    for m in MODES:
        a = n.ablations[m]
        seconds = [x.second for x in a.random]
        labels += [say("bar_top", mode=mode[m]), say("bar_random", mode=mode[m])]
        values += [a.top.second, float(np.mean(seconds))]
        spread += [0.0, float(np.std(seconds))]
    x = np.arange(len(labels))
    right.bar(x, values, yerr=spread, color=["gray", "tab:red", "tab:blue", "tab:red", "tab:blue"], alpha=0.8)
    right.axhline(n.clean.first, color="black", ls=":", lw=1, label=say("fig_first"))
    right.set_xticks(x)
    right.set_xticklabels(labels, fontsize="small")
    right.set_ylabel(say("fig_loss_y"))
    right.set_title(say("fig_loss_title", k=len(n.top)), fontsize="medium")
    right.legend(fontsize="small")
    right.grid(alpha=0.3, axis="y")
    fig.suptitle(say("fig_title", model=n.model_name or say("unnamed")))
    return [save(fig, out / "llm_induction.png")]
