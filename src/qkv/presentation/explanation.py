"""An explanation shown: the document of qkv.analysis.explain as text or Markdown, in Chinese or English.

    ex = explain(model, tokenizer, "患者 服用 华法林 后 出现 黑便", layer=1, head=0, lang="zh")
    print(ex.to_text()); ex.to_markdown(); ex.to_json()      # Jupyter shows ex as markdown

Every sentence comes from the message catalogue (area "explain"); the numbers come from the document.
"""

from __future__ import annotations

import unicodedata

from qkv.analysis import explain as analysis

from .i18n import check_lang, t


def explain(model, tokenizer, text: str, layer: int | None = None, head: int | None = None,
            token: int | None = None, top: int = 5, lang: str = "en") -> "Explanation":
    """qkv.analysis.explain.explain, returned as an Explanation that renders itself in `lang`."""
    check_lang(lang)
    return Explanation(analysis.explain(model, tokenizer, text, layer, head, token, top), lang)


def _num(x: float) -> str:
    return f"{x:.2e}" if x != 0 and abs(x) < 1e-3 else f"{x:.4f}"


class Explanation:
    """An explain document (a JSON-ready dict) and the language to show it in: text, Markdown or JSON."""

    def __init__(self, data: dict, lang: str = "en"):
        self.data = {**data, "lang": check_lang(lang)}

    def to_json(self) -> dict:
        return self.data

    def to_text(self) -> str:
        return _render(_blocks(self.data), markdown=False)

    def to_markdown(self) -> str:
        return _render(_blocks(self.data), markdown=True)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def __str__(self) -> str:
        return self.to_text()


# ---- rendering: a list of blocks ("p", line) | ("table", headers, rows, right-aligned columns)

def _blocks(d: dict) -> list:
    lang, pos, q = d["lang"], d["token"], d["query"]
    n, b = len(d["tokens"]), []
    if d["mode"] == "head":
        b.append(("title", t("explain.title_head", lang, layer=d["layer"], head=d["head"], pos=pos, tok=q, n=n)))
    else:
        key, kw = ("scope_all", {}) if d["layer"] is None and d["head"] is None else \
            ("scope_layer", {"layer": d["layer"]}) if d["layer"] is not None else ("scope_head", {"head": d["head"]})
        b.append(("title", t("explain.title_sum", lang, scope=t(f"explain.{key}", lang, **kw), pos=pos, tok=q, n=n)))
    if d["cropped"]:
        b.append(("p", t("explain.crop", lang, n=n + d["cropped"], ctx=d["model"]["n_ctx"], drop=d["cropped"])))
    if any("␣" in t for t in d["tokens"]):
        b.append(("p", t("explain.space", lang)))
    if d["mode"] == "head":
        att, z, r = d["attention"], d["z"], d["residual"]
        b.append(("p", t("explain.step1", lang, tok=q, d=d["model"]["d_head"], s=att["scale"])))
        rows = [[str(x["pos"]), x["token"], f"{x['dot']:.4f}", f"{x['scaled']:.4f}", f"{x['weight']:.4f}",
                 t("explain.largest", lang) if x["pos"] == att["argmax"] else ""] for x in att["rows"]]
        b.append(("table", [t("explain.c_pos", lang), t("explain.c_tok", lang), "q·k", "q·k/√d_head", t("explain.c_weight", lang), ""],
                  rows, {0, 2, 3, 4}))
        b.append(("p", t("explain.step1_end", lang, sum=att["weight_sum"], tok=att["rows"][att["argmax"]]["token"])))
        first = "[" + ", ".join(f"{c:.3f}" for c in z["first"]) + (", …]" if z["d_head"] > len(z["first"]) else "]")
        b.append(("p", t("explain.step2", lang, norm=z["norm"], first=first, d=z["d_head"], err=z["check"])))
        b.append(("p", t("explain.step2_tab", lang)))
        rows = [[str(x["pos"]), x["token"], f"{x['weight']:.4f}", f"{x['v_norm']:.4f}", f"{x['contribution']:.4f}",
                 f"{100 * x['share']:.1f}%"] for x in z["values"]]
        b.append(("table", [t("explain.c_pos", lang), t("explain.c_tok", lang), "A_j", "|v_j|", "A_j·|v_j|", t("explain.c_share", lang)],
                  rows, {0, 2, 3, 4, 5}))
        b.append(("p", t("explain.step3", lang)))
        pre = r["norm"] == "pre"
        rows = [[t("explain.r_x", lang), f"{r['x']:.4f}"], [t("explain.r_head", lang), f"{r['head_out']:.4f}"],
                [t("explain.r_attn", lang), f"{r['attn_out']:.4f}"],
                [t("explain.r_sum" if pre else "explain.r_sum_post", lang), f"{r['x_plus_attn']:.4f}"]]
        if not pre:
            b.append(("p", t("explain.step3_post", lang)))
            rows.append([t("explain.r_mid", lang), f"{r['resid_mid']:.4f}"])
        b.append(("table", [t("explain.c_qty", lang), t("explain.c_norm", lang)], rows, {1}))
    else:
        rows = [[str(h["layer"]), str(h["head"]), f"{h['top_pos']} {h['top_token']}", f"{h['top_weight']:.4f}",
                 f"{h['entropy_bits']:.3f}"] for h in d["heads"]]
        b.append(("table", [t(f"explain.{c}", lang) for c in ("c_layer", "c_head", "c_most", "c_weight", "c_ent")], rows, {0, 1, 3, 4}))
        vis = len(d["tokens"]) if not d["model"]["causal"] else pos + 1
        b.append(("p", t("explain.sum_note", lang, max=d["max_entropy_bits"], n=vis)))
    nx = d["next"]
    b.append(("p", t("explain.next", lang, step=t("explain.step4", lang) if d["mode"] == "head" else "", n=d["model"]["n_layers"],
                      pos=pos, k=len(nx["top"]))))
    b.append(("table", [t("explain.c_rank", lang), t("explain.c_tok", lang), t("explain.c_prob", lang)],
              [[str(t["rank"]), t["token"], _num(t["prob"])] for t in nx["top"]], {0, 2}))
    if nx["actual"]:
        a = nx["actual"]
        b.append(("p", t("explain.actual", lang, tok=a["token"], p=_num(a["prob"]), r=a["rank"])))
    return b


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in s)


def _md_escape(s: str) -> str:
    return "".join("\\" + c if c in "\\`*_[]<>|#" else c for c in s)


def _render(blocks: list, markdown: bool) -> str:
    out = []
    for block in blocks:
        if block[0] == "title":
            out += [("### " + _md_escape(block[1])) if markdown else block[1], ""]
        elif block[0] == "p":
            out += [_md_escape(block[1]) if markdown else block[1], ""]
        else:
            _, head, rows, right = block
            if markdown:
                out.append("| " + " | ".join(_md_escape(h) for h in head) + " |")
                out.append("|" + "|".join("---:" if i in right else "---" for i in range(len(head))) + "|")
                out += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
            else:
                widths = [max(_width(x) for x in col) for col in zip(head, *rows)]
                pad = lambda s, i: (" " * (widths[i] - _width(s)) + s) if i in right else s + " " * (widths[i] - _width(s))
                out += ["  " + "  ".join(pad(c, i) for i, c in enumerate(row)).rstrip() for row in [head, *rows]]
            out.append("")
    return "\n".join(out).rstrip() + "\n"
