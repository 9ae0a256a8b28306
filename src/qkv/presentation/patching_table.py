"""The activation-patching table as text (qkv patch): layers down, positions (or heads) across.

It reads the kind-"patching" document (qkv.analysis.patch.Patching.to_json) and says, in zh or en,
what was patched, the metric of the clean and the corrupted run, every patched metric with its share
(patched - corrupted) / (clean - corrupted), a caution when the two runs differ too little for those
shares to mean much (the document's gap_small), and the pieces that move the metric most.
"""

from __future__ import annotations

from qkv.analysis.patch import GAP_LOGITS
from qkv.presentation.hook_words import named
from qkv.presentation.i18n import lang_of, translator
from qkv.presentation.text import render as render_blocks

STRONGEST = 3
SITE_KEYS = {  # each site's one-line description, by its literal key
    "resid_pre": "site_resid_pre",
    "attn_out": "site_attn_out",
    "mlp_out": "site_mlp_out",
    "z": "site_z",
}


def grid(doc: dict, key: str) -> list | None:
    """doc[key] ("values" or "normalized") as rows of layers: a whole-layer document (axes ["layer"],
    one number per layer) becomes one column, so every document reads as (n_layers, width)."""
    got = doc[key]
    return [[v] for v in got] if got is not None and len(doc["axes"]) == 1 else got


def tokens(doc: dict, run: str) -> list[str]:
    """The tokens of one run ("clean" or "corrupted"); a document patched from ids without a tokenizer
    has none, and shows each id as #id."""
    said = doc["tokens"][run]
    return said if said is not None else [f"#{i}" for i in doc["ids"][run]]


def across(doc: dict) -> str:
    """What the columns are: "pos", "head", or "whole" (one column: the whole layer's activation)."""
    return doc["axes"][1] if len(doc["axes"]) == 2 else "whole"


def _num(x: float, digits: int = 3) -> str:
    s = f"{x:.{digits}f}"
    return s[1:] if s.startswith("-") and not s.strip("-0.") else s  # no "-0.000"


def _token(doc: dict, i: int) -> str:
    """Position i's token in the clean text, and the corrupted one's after a slash where they differ."""
    a, b = tokens(doc, "clean")[i], tokens(doc, "corrupted")[i]
    return a if a == b else f"{a}/{b}"


def _caution(doc: dict, say) -> str:
    """The line that says the shares are unreliable: the gap, and the bar it fell under for a logit difference."""
    gap = _num(abs(doc["clean"] - doc["corrupted"]))
    if doc["answer_id"] is not None:
        return say("gap_small", gap=gap, limit=_num(GAP_LOGITS, 1))
    return say("gap_small_spread", gap=gap)


def render(doc: dict, lang: str | None = None, markdown: bool = False) -> str:
    """The document as aligned text (or Markdown), in `lang`."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    say = translator(lang, "patching")
    values, norm = grid(doc, "values"), grid(doc, "normalized")
    kind = across(doc)
    clean, corrupted = tokens(doc, "clean"), tokens(doc, "corrupted")
    T = len(clean)
    blocks = [("title", say("title", site=named(doc["site"], lang)))]
    site = say("site_whole", site=doc["site"]) if kind == "whole" else say(SITE_KEYS[doc["site"]])
    intro = [site, say("clean_text", text=" ".join(clean))]
    intro.append(say("corrupted_text", text=" ".join(corrupted)))
    if doc["answer"] is not None:
        pos = doc["position"]
        chosen = translator(lang, "tokenizer")  # the token each typed word became, with its id: "␣Mary (id 8141)"
        answer, wrong = (chosen("chosen", token=doc[k], id=doc[f"{k}_id"]) for k in ("answer", "wrong"))
        intro.append(say("metric", answer=answer, wrong=wrong, pos=pos, tok=_token(doc, pos)))
    intro.append(say("runs", clean=_num(doc["clean"]), corrupted=_num(doc["corrupted"])))
    intro.append(say("cells") if norm is not None else say("cells_equal"))
    blocks += [("p", "\n".join(intro[:-1])), ("p", intro[-1])]
    if norm is not None and doc.get("gap_small"):
        blocks.append(("p", _caution(doc, say)))

    width = len(values[0]) if values else 0
    head = [say({"pos": "corner_pos", "head": "corner_head", "whole": "corner_whole"}[kind])]
    if kind == "whole":
        head.append(say("whole"))
    else:
        head += (
            [say("head", head=h) for h in range(width)]
            if kind == "head"
            else [f"{i} {_token(doc, i)}" for i in range(T)]
        )
    rows = []
    for L, row in enumerate(values):
        cells = [_num(v) + (f" ({_num(norm[L][i], 2)})" if norm is not None else "") for i, v in enumerate(row)]
        rows.append([say("layer", layer=L), *cells])
    blocks.append(("table", head, rows, set(range(1, width + 1))))

    effect = sorted(
        ((abs(v - doc["corrupted"]), L, i) for L, row in enumerate(values) for i, v in enumerate(row)),
        key=lambda e: (-e[0], e[1], e[2]),
    )
    lines = [say("strongest")]
    for _, L, i in effect[:STRONGEST]:
        share = say("share", share=_num(norm[L][i], 2)) if norm is not None else ""
        value = _num(values[L][i])
        if kind == "whole":
            lines.append("  " + say("piece_whole", layer=L, value=value, share=share))
        elif kind == "head":
            lines.append("  " + say("piece_head", layer=L, head=i, value=value, share=share))
        else:
            lines.append("  " + say("piece_pos", layer=L, pos=i, tok=_token(doc, i), value=value, share=share))
    blocks.append(("p", "\n".join(lines)))
    return render_blocks(blocks, markdown)
