"""Lesson "context", said and drawn: 苹果 in two sentences, stage by stage, trained against untrained
(numbers from qkv.apps.lessons.context.measure)."""

from __future__ import annotations

from pathlib import Path

from ..figures import new_figure, save
from ..i18n import translator
from ..text import width


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


def _fields(n: dict, lang: str) -> dict:
    say = translator(lang, "lessons.context")
    last = list(n["cosine"])[-1]
    same = n["untrained_next_fruit"][0][0] == n["untrained_next_company"][0][0]
    return {
        **n,
        "fruit": n["sentences"]["fruit"],
        "company": n["sentences"]["company"],
        "cos_table": _table(n["cosine"], n["untrained_cosine"], lang, 4),
        "attn_table": _table(n["attn_out_cosine"], n["untrained_attn_out_cosine"], lang, 4),
        "probe_table": _table(n["probe_accuracy"], n["untrained_probe_accuracy"], lang, 3),
        "cmin": n["cosine"][n["min_cosine_stage"]],
        "cmin_at": stage_name(n["min_cosine_stage"], lang),
        "cue_f": n["cue_weight_fruit"][n["cue_layer"]],
        "cue_c": n["cue_weight_company"][n["cue_layer"]],
        "cue_layer": n["cue_layer"][1:],
        "p_embed": n["probe_accuracy"]["embed"],
        "best": stage_name(n["best_probe_stage"], lang),
        "nf": _preds(n["next_fruit"]),
        "nc": _preds(n["next_company"]),
        "unf": _preds(n["untrained_next_fruit"]),
        "unc": _preds(n["untrained_next_company"]),
        "clast": n["cosine"][last],
        "ucos_last": n["untrained_cosine"][last],
        "u_same": say("same_first") if same else "",
        "f1": n["next_fruit"][0][0],
        "c1": n["next_company"][0][0],
    }


def text(n: dict, lang: str) -> str:
    return translator(lang, "lessons.context")("text", **_fields(n, lang))


def headline(n: dict, lang: str) -> str:
    return translator(lang, "lessons.context")("headline", **_fields(n, lang))


def figures(n: dict, out: Path, lang: str) -> list[Path]:
    """The cosine of the two 苹果 vectors, and the probe's accuracy, stage by stage."""
    say = translator(lang, "lessons.context")
    paths = []
    for trained, untrained, ylabel, heading, fname, chance in (
        (
            n["cosine"],
            n["untrained_cosine"],
            say("cos_y"),
            say("cos_title", a=n["sentences"]["fruit"], b=n["sentences"]["company"]),
            "context_cosine.png",
            None,
        ),
        (
            n["probe_accuracy"],
            n["untrained_probe_accuracy"],
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
    return paths
