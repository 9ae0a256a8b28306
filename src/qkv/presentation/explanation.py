"""An explanation shown: the document of qkv.analysis.explain as text or Markdown, in Chinese or English.

    ex = explain(model, tokenizer, "患者 服用 华法林 后 出现 黑便", layer=1, head=0, lang="zh")
    print(ex.to_text()); ex.to_markdown(); ex.to_json()      # Jupyter shows ex as markdown

Every sentence comes from the message catalogue (area "explain"); every number from the document.
The document becomes a list of blocks (titles, paragraphs, tables) that text.render lays out.
"""

from __future__ import annotations

from qkv.analysis import explain as analysis
from qkv.core.tokenizers.wordpiece import JOIN  # how a WordPiece piece that continues a word is shown

from .i18n import check_lang, translator
from .text import render


def explain(model, tokenizer, text: str, layer: int | None = None, head: int | None = None,
            token: int | None = None, top: int = 5, lang: str = "en") -> "Explanation":
    """qkv.analysis.explain.explain, returned as an Explanation that renders itself in `lang`."""
    check_lang(lang)
    return Explanation(analysis.explain(model, tokenizer, text, layer, head, token, top), lang)


class Explanation:
    """An explain document (a JSON-ready dict) and the language to show it in: text, Markdown or JSON."""

    def __init__(self, data: dict, lang: str = "en"):
        self.data = {**data, "lang": check_lang(lang)}

    def to_json(self) -> dict:
        return self.data

    def to_text(self, lang: str | None = None) -> str:
        """Plain text, tables aligned in columns (a Chinese character is two columns wide)."""
        return render(_blocks(self.data, lang or self.data["lang"]), markdown=False)

    def to_markdown(self, lang: str | None = None) -> str:
        """Markdown: headings, paragraphs and tables, with markup characters escaped."""
        return render(_blocks(self.data, lang or self.data["lang"]), markdown=True)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def __str__(self) -> str:
        return self.to_text()


def _num(x: float) -> str:
    """A probability: four decimals, or scientific notation when it is tiny."""
    return f"{x:.2e}" if x != 0 and abs(x) < 1e-3 else f"{x:.4f}"


def _blocks(d: dict, lang: str) -> list:
    """The document `d` as text.render blocks in `lang`: title, notes, the steps (one head) or the
    table of heads (a summary), then the next-token prediction (or, for an encoder, why there is none)."""
    say = translator(check_lang(lang), "explain")
    n = len(d["tokens"])
    out = [("title", _title(d, say))]
    if d["cropped"]:
        out.append(("p", say("crop", n=n + d["cropped"], ctx=d["model"]["n_ctx"], drop=d["cropped"])))
    if any("␣" in token for token in d["tokens"]):
        out.append(("p", say("space")))
    if any(token.startswith(JOIN) for token in d["tokens"]):
        out.append(("p", say("join")))
    if not d["model"].get("causal", True):
        out.append(("p", say("bidirectional")))
    out += _head_steps(d, say) if d["mode"] == "head" else _heads_table(d, say)
    return out + _next_token(d, say)


def _title(d: dict, say) -> str:
    where = dict(pos=d["token"], tok=d["query"], n=len(d["tokens"]))
    if d["mode"] == "head":
        return say("title_head", layer=d["layer"], head=d["head"], **where)
    if d["layer"] is None and d["head"] is None:
        scope = say("scope_all")
    elif d["layer"] is not None:
        scope = say("scope_layer", layer=d["layer"])
    else:
        scope = say("scope_head", head=d["head"])
    return say("title_sum", scope=scope, **where)


def _head_steps(d: dict, say) -> list:
    """Steps 1–3 for one head: the weights, the mix of the values, the residual stream."""
    att, z, r = d["attention"], d["z"], d["residual"]
    out = [("p", say("step1", tok=d["query"], d=d["model"]["d_head"], s=att["scale"]))]
    rows = [[str(x["pos"]), x["token"], f"{x['dot']:.4f}", f"{x['scaled']:.4f}", f"{x['weight']:.4f}",
             say("largest") if x["pos"] == att["argmax"] else ""] for x in att["rows"]]
    out.append(("table", [say("c_pos"), say("c_tok"), "q·k", "q·k/√d_head", say("c_weight"), ""], rows, {0, 2, 3, 4}))
    out.append(("p", say("step1_end", sum=att["weight_sum"], tok=att["rows"][att["argmax"]]["token"])))
    first = "[" + ", ".join(f"{c:.3f}" for c in z["first"]) + (", …]" if z["d_head"] > len(z["first"]) else "]")
    out.append(("p", say("step2", norm=z["norm"], first=first, d=z["d_head"], err=z["check"])))
    out.append(("p", say("step2_tab")))
    rows = [[str(x["pos"]), x["token"], f"{x['weight']:.4f}", f"{x['v_norm']:.4f}", f"{x['contribution']:.4f}",
             f"{100 * x['share']:.1f}%"] for x in z["values"]]
    out.append(("table", [say("c_pos"), say("c_tok"), "A_j", "|v_j|", "A_j·|v_j|", say("c_share")], rows, {0, 2, 3, 4, 5}))
    out.append(("p", say("step3")))
    pre = r["norm"] == "pre"
    rows = [[say("r_x"), f"{r['x']:.4f}"], [say("r_head"), f"{r['head_out']:.4f}"], [say("r_attn"), f"{r['attn_out']:.4f}"],
            [say("r_sum" if pre else "r_sum_post"), f"{r['x_plus_attn']:.4f}"]]
    if not pre:
        out.append(("p", say("step3_post")))
        rows.append([say("r_mid"), f"{r['resid_mid']:.4f}"])
    out.append(("table", [say("c_qty"), say("c_norm")], rows, {1}))
    return out


def _heads_table(d: dict, say) -> list:
    """A summary: for every head, the token it attends to most and the entropy of its row."""
    rows = [[str(h["layer"]), str(h["head"]), f"{h['top_pos']} {h['top_token']}", f"{h['top_weight']:.4f}",
             f"{h['entropy_bits']:.3f}"] for h in d["heads"]]
    head = [say(c) for c in ("c_layer", "c_head", "c_most", "c_weight", "c_ent")]
    visible = len(d["tokens"]) if not d["model"]["causal"] else d["token"] + 1
    return [("table", head, rows, {0, 1, 3, 4}), ("p", say("sum_note", max=d["max_entropy_bits"], n=visible))]


def _next_token(d: dict, say) -> list:
    """The model's top next tokens at the query's position, and the one that actually follows; for a
    model without LM head (an encoder), one line that says why there are none."""
    nx = d["next"]
    if nx is None:
        return [("p", say("no_next"))]
    step = say("step4") if d["mode"] == "head" else ""
    out = [("p", say("next", step=step, n=d["model"]["n_layers"], pos=d["token"], k=len(nx["top"]))),
           ("table", [say("c_rank"), say("c_tok"), say("c_prob")],
            [[str(x["rank"]), x["token"], _num(x["prob"])] for x in nx["top"]], {0, 2})]
    if nx["actual"]:
        a = nx["actual"]
        out.append(("p", say("actual", tok=a["token"], p=_num(a["prob"]), r=a["rank"])))
    return out
