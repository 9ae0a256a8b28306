"""Lesson "context", said and drawn: 苹果 in two sentences, stage by stage, trained against untrained
(numbers from qkv.lessons.context.measure)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from qkv.lessons.common.text import commas, then
from qkv.lessons.context.result import Patch, Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator
from qkv.presentation.text import width, wrap

SENSES = ("fruit", "company")  # the two sentences, as qkv.lessons.context.measure.SENSES names them
COLUMNS = 100  # the patching paragraph is wrapped at this many display columns (a Chinese character: 2)
NO_START = set("，。；：、）」』！？”’")  # punctuation that never starts a line
NO_END = set("（「『“‘")  # ... and that never ends one


def title(lang: str) -> str:
    return translator(lang, "lessons.context")("title")


def stage_name(label: str, lang: str) -> str:
    """'embed' / 'L2 in' / 'L3 out' / 'L1' (a layer) in the chosen language."""
    say = translator(lang, "lessons.context")
    if label == "embed":
        return say("stage_embed")
    layer, *side = label[1:].split()
    if not side:
        return say("stage_layer", layer=layer)
    return say("stage_in" if side == ["in"] else "stage_out", layer=layer)


def _pad(text: str, columns: int, right: bool = False) -> str:
    fill = " " * max(0, columns - width(text))
    return fill + text if right else text + fill


def _table(rows: dict, other: dict, lang: str, digits: int) -> str:
    say = translator(lang, "lessons.context")
    lines = [
        "  " + _pad(say("col_stage"), 12) + _pad(say("col_trained"), 10, True) + _pad(say("col_untrained"), 10, True)
    ]
    lines += ["  " + _pad(stage_name(k, lang), 12) + f"{rows[k]:>10.{digits}f}{other[k]:>10.{digits}f}" for k in rows]
    return "\n".join(lines)


def _preds(pairs) -> str:
    return ", ".join(f"{w} {p:.3f}" for w, p in pairs)


def _wrap(text: str, lang: str) -> str:
    """The text in lines of at most COLUMNS display columns: English between words (a Chinese word in
    it stays whole), Chinese anywhere but with no line starting with closing punctuation (it goes back
    to the line before) or ending with opening punctuation (it goes on to the next)."""
    if lang != "zh":
        return textwrap.fill(text, COLUMNS, break_long_words=False, break_on_hyphens=False)
    lines = wrap(text, COLUMNS).split("\n")
    for k in range(1, len(lines)):
        while lines[k][:1] in NO_START and lines[k]:
            lines[k - 1], lines[k] = lines[k - 1] + lines[k][0], lines[k][1:].lstrip()
        while lines[k - 1][-1:] in NO_END and lines[k - 1]:
            lines[k - 1], lines[k] = lines[k - 1][:-1], lines[k - 1][-1] + lines[k]
    return "\n".join(lines)


def _pct(x: float) -> str:
    """A share as a percentage with one decimal (no "-0.0%")."""
    return f"{round(100 * x, 1) + 0.0:.1f}%"


def _share_table(p: Patch, lang: str) -> str:
    """Each head's share (fruit sentence / company sentence), one row per layer."""
    say = translator(lang, "lessons.context")
    rows = p.fruit.share
    cell = 16
    lines = ["  " + _pad("", 8) + "".join(_pad(say("col_head", head=h), cell, True) for h in range(len(rows[0])))]
    for layer, row in enumerate(rows):
        cells = [f"{_pct(f)} / {_pct(c)}" for f, c in zip(row, p.company.share[layer])]
        lines.append("  " + _pad(say("stage_layer", layer=layer), 8) + "".join(_pad(x, cell, True) for x in cells))
    return "\n".join(lines)


def _patch_fields(n: Result, lang: str) -> dict:
    """The fields of the patching paragraph and of the headline's last part."""
    say = translator(lang, "lessons.context")
    if n.patch is None:  # this model's tokenizer cannot pair the two sentences (qkv.lessons.context.measure.can_patch)
        skipped = say("patch_skipped", pf=n.patch_sentences["fruit"], pc=n.patch_sentences["company"])
        return {"patch_paragraph": _wrap(skipped, lang), "headline_patch": ""}
    p, cue, bh, bl = n.patch, n.patch_cue_head, n.patch_best_head, n.patch_best_layer
    mean = lambda d: (d["fruit"] + d["company"]) / 2
    fields = {
        "pf": n.patch_sentences["fruit"],
        "pc": n.patch_sentences["company"],
        "patch_len": n.patch_lengths["fruit"],
        "clean_tv": p.clean_tv,
        "fw": commas(p.words["fruit"], lang),
        "cw": commas(p.words["company"], lang),
        "m_ff": p.mass["fruit"]["fruit"],
        "m_fc": p.mass["fruit"]["company"],
        "m_cf": p.mass["company"]["fruit"],
        "m_cc": p.mass["company"]["company"],
        "share_table": _share_table(p, lang),
        "cue_layer": cue.layer,
        "cue_head": cue.head,
        "cue_wf": cue.cue["fruit"],
        "cue_wc": cue.cue["company"],
        "cue_sf": _pct(cue.share["fruit"]),
        "cue_sc": _pct(cue.share["company"]),
        "bh_layer": bh.layer,
        "bh_head": bh.head,
        "bh_sf": _pct(bh.share["fruit"]),
        "bh_sc": _pct(bh.share["company"]),
        "bh_tf": bh.tv["fruit"],
        "bh_tc": bh.tv["company"],
        "bl_layer": bl.layer,
        "bl_sf": _pct(bl.share["fruit"]),
        "bl_sc": _pct(bl.share["company"]),
        "bl_tf": bl.tv["fruit"],
        "bl_tc": bl.tv["company"],
        "sum_f": _pct(bl.head_sum["fruit"]),
        "sum_c": _pct(bl.head_sum["company"]),
        "rest": _pct(n.patch_rest_layers),
    }
    one_head, one_layer = mean(bh.share) > 0.5, mean(bl.share) > 0.5
    verdicts = [
        say("patch_one_head_decides" if one_head else "patch_no_head_decides", **fields),
        say("patch_layer_switches" if one_layer else "patch_layer_weak", **fields),
        say("patch_rest_small" if n.patch_rest_layers < 0.1 else "patch_rest_large", **fields),
    ]
    fields["patch_paragraph"] = "\n".join(
        [_wrap(say("patch_intro", **fields), lang), fields["share_table"], _wrap(then(verdicts, lang), lang)]
    )
    fields["headline_patch"] = say("headline_patch", **fields)
    return fields


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.context")
    last = list(n.cosine)[-1]
    same = n.untrained_next_fruit[0][0] == n.untrained_next_company[0][0]
    return {
        **n.to_numbers(),
        "fruit": n.sentences["fruit"],
        "company": n.sentences["company"],
        "cos_table": _table(n.cosine, n.untrained_cosine, lang, 4),
        "attn_table": _table(n.attn_out_cosine, n.untrained_attn_out_cosine, lang, 4),
        "probe_table": _table(n.probe_accuracy, n.untrained_probe_accuracy, lang, 3),
        "cmin": n.cosine[n.min_cosine_stage],
        "cmin_at": stage_name(n.min_cosine_stage, lang),
        "cue_f": n.cue_weight_fruit[n.cue_layer],
        "cue_c": n.cue_weight_company[n.cue_layer],
        "cue_layer": n.cue_layer[1:],
        "p_embed": n.probe_accuracy["embed"],
        "best": stage_name(n.best_probe_stage, lang),
        "nf": _preds(n.next_fruit),
        "nc": _preds(n.next_company),
        "unf": _preds(n.untrained_next_fruit),
        "unc": _preds(n.untrained_next_company),
        "clast": n.cosine[last],
        "ucos_last": n.untrained_cosine[last],
        "u_same": say("same_first") if same else "",
        "f1": n.next_fruit[0][0],
        "c1": n.next_company[0][0],
        **_patch_fields(n, lang),
    }


def text(n: Result, lang: str) -> str:
    return translator(lang, "lessons.context")("text", **_fields(n, lang))


def headline(n: Result, lang: str) -> str:
    say, fields = translator(lang, "lessons.context"), _fields(n, lang)
    return say("headline", **fields) + fields["headline_patch"]


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    """The cosine of the two 苹果 vectors, and the probe's accuracy, stage by stage."""
    say = translator(lang, "lessons.context")
    paths = []
    for trained, untrained, ylabel, heading, fname, chance in (
        (
            n.cosine,
            n.untrained_cosine,
            say("cos_y"),
            say("cos_title", a=n.sentences["fruit"], b=n.sentences["company"]),
            "context_cosine.png",
            None,
        ),
        (
            n.probe_accuracy,
            n.untrained_probe_accuracy,
            say("probe_y"),
            say("probe_title"),
            "context_probe.png",
            0.5,
        ),
    ):
        ticks = [stage_name(k, lang) for k in trained]
        fig = new_figure((6.4, 4))
        ax = fig.subplots()
        ax.plot(ticks, list(trained.values()), "o-", label=say("trained"))
        ax.plot(ticks, [untrained[k] for k in trained], "s--", label=say("untrained"))
        if chance is not None:
            ax.axhline(chance, color="gray", lw=0.8, ls=":", label=say("chance"))
            ax.set_ylim(0.3, 1.03)
        ax.set_xlabel(say("x"))
        ax.set_ylabel(ylabel)
        ax.set_title(heading)
        ax.grid(alpha=0.3)
        ax.legend()
        paths.append(save(fig, out / fname))
    if n.patch is not None:
        paths.append(_patch_figure(n, out, lang))
    return paths


def _patch_figure(n: Result, out: Path, lang: str) -> Path:
    """Each head's share (two heat maps, one per sentence that is run) and each whole layer's (bars), in %."""
    from matplotlib.ticker import PercentFormatter

    say = translator(lang, "lessons.context")
    p = n.patch
    fig = new_figure((10, 4))
    axes = fig.subplots(1, 3, width_ratios=[1, 1, 1.1])
    L, H = len(p.fruit.share), len(p.fruit.share[0])
    for ax, sense in zip(axes[:2], SENSES):
        table = p.runs()[sense].share
        image = ax.imshow(table, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        for layer in range(L):
            for head in range(H):
                v = table[layer][head]
                ax.text(head, layer, str(round(100 * v)), ha="center", va="center", color="w" if v < 0.6 else "k")
        ax.set_xticks(range(H), [str(h) for h in range(H)])
        ax.set_yticks(range(L), [str(layer) for layer in range(L)])
        ax.set_xlabel(say("patch_x_head"))
        ax.set_ylabel(say("patch_y_layer"))
        ax.set_title(say("patch_map_title", run=n.patch_sentences[sense]), fontsize="medium")
    fig.colorbar(image, ax=axes[1], format=PercentFormatter(1.0))
    ax = axes[2]
    width = 0.38
    for k, sense in enumerate(SENSES):
        xs = [layer + (k - 0.5) * width for layer in range(L)]
        ax.bar(xs, p.runs()[sense].layer_share, width, label=n.patch_sentences[sense])
    ax.set_xticks(range(L), [say("stage_layer", layer=layer) for layer in range(L)])
    ax.set_ylim(min(0.0, *p.fruit.layer_share, *p.company.layer_share) - 0.02, 1.05)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_title(say("patch_layer_title"), fontsize="medium")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize="small", loc="center left")
    fig.suptitle(say("patch_share"))
    return save(fig, out / "context_patch.png")
