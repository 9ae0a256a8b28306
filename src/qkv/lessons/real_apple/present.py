"""Lesson "real-apple", said and drawn: apple as fruit and as company in a pretrained encoder, against the
same architecture with random or shuffled weights (numbers from qkv.lessons.real_apple.measure)."""

from __future__ import annotations

from pathlib import Path

from qkv.lessons.common.text import commas, then
from qkv.lessons.real_apple.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator
from qkv.presentation.text import width

MODELS = ("pretrained", "random", "shuffled")


def title(lang: str) -> str:
    return translator(lang, "lessons.real_apple")("title")


def model_names(lang: str) -> dict[str, str]:
    """Each model of MODELS (qkv.lessons.real_apple.measure.MODELS) as the tables and the figure name it."""
    say = translator(lang, "lessons.real_apple")
    return {"pretrained": say("model_pretrained"), "random": say("model_random"), "shuffled": say("model_shuffled")}


def _pad(text: str, columns: int, right: bool = False) -> str:
    fill = " " * max(0, columns - width(text))
    return fill + text if right else text + fill


def stage_name(label: str, lang: str) -> str:
    say = translator(lang, "lessons.real_apple")
    return say("stage_embed") if label == "embed" else say("stage_block", layer=label[1:])


def _cos_table(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.real_apple")
    name = model_names(lang)
    head1 = "  " + _pad("", 12) + "".join(_pad(name[m], 18, True) for m in MODELS)
    head2 = (
        "  " + _pad(say("col_stage"), 12) + (_pad(say("col_across"), 9, True) + _pad(say("col_within"), 9, True)) * 3
    )
    rows = []
    for s, label in enumerate(n.stages):
        cells = "".join(f"{n.models[m].across[s]:>9.3f}{n.models[m].within[s]:>9.3f}" for m in MODELS)
        rows.append("  " + _pad(stage_name(label, lang), 12) + cells)
    return "\n".join([head1, head2, *rows])


def _probe_table(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.real_apple")
    name = model_names(lang)
    lines = ["  " + _pad(say("col_stage"), 12) + "".join(_pad(name[m], 12, True) for m in MODELS)]
    for s, label in enumerate(n.stages):
        lines.append(
            "  " + _pad(stage_name(label, lang), 12) + "".join(f"{n.models[m].probe[s]:>12.3f}" for m in MODELS)
        )
    return "\n".join(lines)


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.real_apple")
    pre, rand, shuf = (n.models[m] for m in MODELS)
    return {
        "model": n.model_name or say("unnamed"),
        "n_layers": n.n_layers,
        "last_layer": n.n_layers - 1,
        "d_model": n.d_model,
        "n_heads": n.n_heads,
        "token_id": n.token_id,
        "pieces": " ".join(n.pieces),
        "n_fruit": n.n_fruit,
        "n_company": n.n_company,
        "fruit_example": n.examples["fruit"],
        "company_example": n.examples["company"],
        "ridge": f"{n.ridge:g}",
        "k_folds": n.k_folds,
        "test_n": len(n.folds[0]),
        "train_n": len(n.labels) - len(n.folds[0]),
        "init_std": f"{n.init_std:g}",
        "seed": n.seed,
        "position_counts": commas(
            [say("position_count", position=p, count=c) for p, c in n.position_counts.items()], lang
        ),
        "cos_table": _cos_table(n, lang),
        "probe_table": _probe_table(n, lang),
        # the pretrained model (pre_), the random one (rand_), the shuffled one (shuf_)
        "pre_best": pre.best_probe,
        "pre_best_stage": stage_name(pre.best_probe_stage, lang),
        "pre_min_gap": pre.min_block_gap,
        "pre_max_gap": pre.max_gap,
        "pre_max_gap_stage": stage_name(pre.max_gap_stage, lang),
        "pre_min_cos": pre.min_cosine,
        "pre_min_probe": pre.min_block_probe,
        "pre_across_last": pre.across[-1],
        "pre_within_last": pre.within[-1],
        "pre_emb_probe": pre.probe[0],
        "pre_emb_gap": pre.gap[0],
        "rand_best": rand.best_probe,
        "rand_best_stage": stage_name(rand.best_probe_stage, lang),
        "rand_abs_gap": rand.max_abs_gap,
        "shuf_best": shuf.best_probe,
        "shuf_best_stage": stage_name(shuf.best_probe_stage, lang),
        "shuf_abs_gap": shuf.max_abs_gap,
    }


def _verdicts(n: Result, f: dict, lang: str) -> tuple[str, str]:
    """(what the cosines show, what the probe shows), each chosen by the measured numbers."""
    say = translator(lang, "lessons.real_apple")
    pre, rand, shuf = (n.models[m] for m in MODELS)
    cos = [say("cos_embed", **f)]
    cos.append(say("cos_pre_holds", **f) if pre.min_block_gap > 0 else say("cos_pre_fails", **f))
    flat = max(rand.max_abs_gap, shuf.max_abs_gap) < pre.min_block_gap / 2
    cos.append(say("cos_controls_flat", **f) if flat else say("cos_controls", **f))
    probe = [say("probe_embed", **f)]
    probe.append(say("probe_pre_all", **f) if pre.min_block_probe >= 0.9 else say("probe_pre", **f))
    probe.append(say("probe_random", **f))
    probe.append(say("probe_shuffled", **f))
    if max(rand.best_probe, shuf.best_probe) < pre.min_block_probe:
        probe.append(say("probe_training", **f))
    return then(cos, lang), then(probe, lang)


def text(n: Result, lang: str) -> str:
    f = _fields(n, lang)
    cos, probe = _verdicts(n, f, lang)
    return translator(lang, "lessons.real_apple")("text", **f, verdict_cos=cos, verdict_probe=probe)


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.real_apple")("headline", **_fields(n, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    """Left: the across (solid) and within (dashed) cosines by stage; right: the probe's held-out accuracy."""
    say = translator(lang, "lessons.real_apple")
    name = model_names(lang)
    ticks = [stage_name(s, lang) for s in n.stages]
    colors = {"pretrained": "tab:blue", "random": "tab:orange", "shuffled": "tab:green"}
    fig = new_figure((11, 4.8))
    left, right = fig.subplots(1, 2)
    for m in MODELS:
        r = n.models[m]
        left.plot(ticks, r.across, "o-", color=colors[m], label=say("fig_across", model=name[m]))
        left.plot(ticks, r.within, "s--", color=colors[m], alpha=0.7, label=say("fig_within", model=name[m]))
        right.plot(ticks, r.probe, "o-", color=colors[m], label=name[m])
    right.axhline(0.5, color="gray", lw=0.8, ls=":", label=say("fig_chance"))
    right.set_ylim(0.3, 1.03)
    left.set_ylabel(say("fig_cos_y"))
    right.set_ylabel(say("fig_probe_y"))
    left.set_title(say("fig_cos_title"), fontsize="medium")
    right.set_title(say("fig_probe_title", k_folds=n.k_folds), fontsize="medium")
    for ax in (left, right):
        ax.set_xlabel(say("fig_x"))
        ax.grid(alpha=0.3)
    left.legend(fontsize="small", ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    right.legend(fontsize="small", ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    fig.suptitle(say("fig_title", model=n.model_name or say("unnamed"), n_fruit=n.n_fruit, n_company=n.n_company))
    return [save(fig, out / "real_apple.png")]
