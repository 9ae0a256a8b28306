"""Lesson "llm-apple", said and drawn: apple the fruit and apple the company inside a real LLM (numbers
from qkv.lessons.llm_apple.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.common.text import commas, pad, then
from qkv.lessons.llm_apple.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator


def title(lang: str) -> str:
    return translator(lang, "lessons.llm_apple")("title")


def stage_name(label: str, lang: str) -> str:
    say = translator(lang, "lessons.llm_apple")
    return say("stage_embed") if label == "embed" else say("stage_block", layer=label[1:])


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def _stage_table(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.llm_apple")
    cols = (say("col_across"), say("col_within"), say("col_gap"), say("col_probe"))
    lines = ["  " + pad(say("col_stage"), 10) + "".join(pad(c, 10, True) for c in cols)]
    for s, label in enumerate(n.stages):
        cells = (n.across[s], n.within[s], n.gap[s], n.probe[s])
        lines.append("  " + pad(stage_name(label, lang), 10) + "".join(f"{x:>10.3f}" for x in cells))
    return "\n".join(lines)


def _next_table(n: Result, lang: str) -> str:
    """Each pair: the fruit sentence and the company sentence with their most probable next tokens."""
    half = len(n.texts) // 2
    lines = []
    for p in range(half):
        for i in (p, half + p):
            guesses = ", ".join(f"{t!r} {q:.2f}" for t, q in zip(n.next[i].tokens, n.next[i].p))
            lines.append(f"  {pad(n.texts[i], 50)} → {guesses}")
    return "\n".join(lines)


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.llm_apple")
    half = len(n.texts) // 2
    top = n.top_heads[0]
    last = len(n.stages) - 1
    differ = sum(n.next[p].tokens[0] != n.next[half + p].tokens[0] for p in range(half))
    return {
        "model": n.model_name or say("unnamed"),
        "n_layers": n.n_layers,
        "n_heads": n.n_heads,
        "d_model": n.d_model,
        "word": n.word,
        "word_ids": n.word_ids,
        "other_case_ids": n.other_case_ids,
        "n_pairs": half,
        "n_sentences": len(n.texts),
        "last": n.n_layers - 1,
        "fruit_example": n.texts[0],
        "company_example": n.texts[half],
        "k_folds": n.k_folds,
        "test_pairs": len(n.folds[0]) // 2,
        "stage_table": _stage_table(n, lang),
        "next_table": _next_table(n, lang),
        "emb_across": n.across[0],
        "emb_probe": n.probe[0],
        "parted": stage_name(n.parted_stage, lang) if n.parted_stage else "",
        "parted_probe": n.probe[n.stages.index(n.parted_stage)] if n.parted_stage else 0.0,
        "first_full": _first_full(n, lang),
        "max_gap": max(n.gap),
        "max_gap_stage": stage_name(n.max_gap_stage, lang),
        "last_across": n.across[last],
        "last_within": n.within[last],
        "last_probe": n.probe[last],
        "top_heads": commas([f"{head_name(h.layer, h.head)} ({h.weight:.3f})" for h in n.top_heads], lang),
        "top_head": head_name(top.layer, top.head),
        "top_weight": top.weight,
        "mean_cue": n.mean_cue_weight,
        "uniform_cue": n.uniform_cue_weight,
        "differ": differ,
    }


def _first_full(n: Result, lang: str) -> str:
    """The first stage from which the probe is right on every held-out sentence ("" if none)."""
    full = [s for s in range(len(n.stages)) if all(a == 1.0 for a in n.probe[s:])]
    return stage_name(n.stages[full[0]], lang) if full else ""


def _verdicts(n: Result, f: dict, lang: str) -> tuple[str, str]:
    say = translator(lang, "lessons.llm_apple")
    layers = [say("emb_same", **f)]
    layers.append(say("parted", **f) if f["parted"] else say("not_parted", **f))
    if f["first_full"]:
        layers.append(say("full", **f))
    layers.append(say("gap", **f))
    heads = [say("heads", **f)]
    heads.append(say("heads_sink", **f) if n.mean_cue_weight < n.uniform_cue_weight else say("heads_even", **f))
    return then(layers, lang), then(heads, lang)


def text(n: Result, lang: str) -> str:
    f = _fields(n, lang)
    layers, heads = _verdicts(n, f, lang)
    return translator(lang, "lessons.llm_apple")("text", **f, verdict_layers=layers, verdict_heads=heads)


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.llm_apple")("headline", **_fields(n, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    """Left: cosines across and within by stage; middle: the held-out probe; right: each head's weight
    on the cue word (layers × heads)."""
    say = translator(lang, "lessons.llm_apple")
    x = np.arange(len(n.stages))
    fig = new_figure((14, 4.6))
    left, middle, right = fig.subplots(1, 3)
    left.plot(x, n.across, "o-", ms=3, label=say("col_across"))
    left.plot(x, n.within, "s--", ms=3, label=say("col_within"))
    middle.plot(x, n.probe, "o-", ms=3, color="tab:green")
    middle.axhline(0.5, color="gray", lw=0.8, ls=":")
    middle.set_ylim(0.3, 1.05)
    for ax, y in ((left, say("fig_cos_y")), (middle, say("fig_probe_y"))):
        ticks = x[:: max(1, len(x) // 8)]
        ax.set_xticks(ticks)
        ax.set_xticklabels([stage_name(n.stages[i], lang) for i in ticks], fontsize="small")
        ax.set_xlabel(say("fig_x"))
        ax.set_ylabel(y)
        ax.grid(alpha=0.3)
    left.legend(fontsize="small")
    image = right.imshow(np.array(n.cue_weights), aspect="auto", cmap="viridis", origin="lower")
    fig.colorbar(image, ax=right)
    right.set_xlabel(say("fig_head"))
    right.set_ylabel(say("fig_layer"))
    left.set_title(say("fig_cos_title"), fontsize="medium")
    middle.set_title(say("fig_probe_title", k_folds=n.k_folds), fontsize="medium")
    right.set_title(say("fig_heads_title"), fontsize="medium")
    fig.suptitle(say("fig_title", model=n.model_name or say("unnamed"), n_pairs=len(n.texts) // 2))
    return [save(fig, out / "llm_apple.png")]
