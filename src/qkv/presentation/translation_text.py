"""A translation model's explanation shown: the document of qkv.analysis.cross_attention as text.render blocks.

The source and its translation, which cross-attention head is followed and why, a table of the
source word each target word reads most, then each target word's row in full (token | q·k |
weight), then one target step step by step exactly as a GPT's query is shown (qkv.presentation.
explain_steps) with the source words as keys, and the words the model would write there.
Messages: area "translation", which words some of area "explain"'s messages for cross-attention;
the others are explain's.
"""

from __future__ import annotations

from qkv.presentation.explain_steps import head_steps, next_token
from qkv.presentation.i18n import catalogue, translator


def _say(lang: str):
    """A translator for area "translation" that falls back to area "explain" for the names it lacks."""
    own, base, names = translator(lang, "translation"), translator(lang, "explain"), catalogue(lang, "translation")
    return lambda name, **fields: (own if name in names else base)(name, **fields)


def translation_blocks(d: dict, lang: str) -> list:
    """The translation document `d` (kind "translation") as blocks in `lang`."""
    say = translator(lang, "translation")
    steps = _say(lang)
    L, H, n_src = d["layer"], d["head"], len(d["source"]["tokens"])
    out = [
        ("title", say("title", layer=L, head=H)),
        ("p", say("source", n=n_src, text=d["text"])),
        ("p", say("translated" if d["translated"] else "given", n=len(d["target"]["ids"]) - 1, text=d["translation"])),
    ]
    if not d["finished"]:
        out.append(("p", say("unfinished", ctx=d["model"]["n_ctx"])))
    out.append(("p", say("rows")))
    bits = d["heads"][H]["entropy_bits"]
    if d["head_choice"] == "sharpest":
        out.append(("p", say("sharpest", head=H, layer=L, bits=bits, max=d["max_entropy_bits"], n=n_src)))
    else:
        out.append(("p", say("entropies", layer=L, max=d["max_entropy_bits"], n=n_src)))
    out.append(
        (
            "table",
            [say("c_head"), say("c_entropy")],
            [[str(h["head"]) + (" ◀" if h["head"] == H else ""), f"{h['entropy_bits']:.3f}"] for h in d["heads"]],
            {1},
        )
    )
    out += _overview(d, say, H) + _per_word(d, say, H)
    out.append(("title", say("steps_title", pos=d["token"], tok=d["query"], reads=d["query_reads"], layer=L, head=H)))
    hull = d["z"]["hull"]
    verdict = say("hull_in", n=n_src) if hull["inside"] else say("hull_out", n=n_src, dist=hull["distance"])
    return out + head_steps(d, steps, after_values=[("p", verdict)]) + next_token(d, steps)


def _overview(d: dict, say, H: int) -> list:
    """One row per target step: what it reads, and the source word head H and the mean of the heads weigh most."""
    out = [("p", say("overview", head=H))]
    rows = [
        [
            str(r["pos"]),
            r["token"],
            r["reads"],
            f"{r['top_pos']} {r['top_token']}",
            f"{r['top_weight']:.4f}",
            f"{r['mean_top_pos']} {r['mean_top_token']}",
            f"{r['mean_top_weight']:.4f}",
        ]
        for r in d["reads"]
    ]
    out.append(
        (
            "table",
            [
                say("c_step"),
                say("c_written"),
                say("c_after"),
                say("c_most", head=H),
                say("c_weight"),
                say("c_mean"),
                say("c_weight"),
            ],
            rows,
            {0, 4, 6},
        )
    )
    return out


def _per_word(d: dict, say, H: int) -> list:
    """For each target step, head H's q·k and weight of every source word (the largest marked)."""
    out = [("p", say("per_word", head=H))]
    for r in d["reads"]:
        out.append(("p", say("word", pos=r["pos"], tok=r["token"], reads=r["reads"])))
        table = [
            [x["token"], f"{x['dot']:.4f}", f"{x['weight']:.4f}", "◀" if x["pos"] == r["top_pos"] else ""]
            for x in r["rows"]
        ]
        out.append(("table", [say("c_source"), "q·k", say("c_weight"), ""], table, {1, 2}))
    return out
