"""An explanation shown: the document of qkv.analysis.explain as text or Markdown, in Chinese or English.

    ex = explain(model, tokenizer, "患者 服用 华法林 后 出现 黑便", layer=1, head=0, lang="zh")
    print(ex.to_text()); ex.to_markdown(); ex.to_json()      # Jupyter shows ex as markdown

Every sentence comes from the message catalogue (area "explain"; a translation model's, kind
"translation", area "translation": qkv.presentation.translation_text); every number from the document.
The document becomes a list of blocks (titles, paragraphs, tables) that text.render lays out.
"""

from __future__ import annotations

import math

from qkv.analysis import cross_attention as cross
from qkv.analysis import explain as analysis
from qkv.core.io.finite import non_finite_note
from qkv.core.text.tokenizers.wordpiece import JOIN
from qkv.presentation.explain_steps import head_steps, next_token
from qkv.presentation.i18n import check_lang, lang_of, t, translator
from qkv.presentation.text import render
from qkv.presentation.translation_text import translation_blocks


def explain(
    model,
    tokenizer,
    text: str,
    layer: int | None = None,
    head: int | None = None,
    token: int | None = None,
    top: int = 5,
    lang: str | None = None,
) -> Explanation:
    """qkv.analysis.explain.explain, returned as an Explanation that renders itself in `lang`; for a
    translation model (an encoder-decoder) qkv.analysis.cross_attention.explain_translation: what each target word
    of the translation reads in the source, `layer` and `head` a decoder layer's cross-attention head,
    `token` a target step. lang None: the language qkv speaks when it is shown (qkv.set_lang, QKV_LANG)."""
    if lang is not None:
        check_lang(lang)
    if model.family.translates:
        return Explanation(cross.explain_translation(model, tokenizer, text, layer, head, token, top), lang)
    return Explanation(analysis.explain(model, tokenizer, text, layer, head, token, top), lang)


class Explanation:
    """An explain document (a JSON-ready dict) and the language to show it in: text, Markdown or JSON
    (None: the language qkv speaks at the time it is shown, i18n.get_lang)."""

    def __init__(self, data: dict, lang: str | None = None):
        self.lang = None if lang is None else check_lang(lang)
        self.data = {**data, "lang": lang_of(self.lang)}

    def to_json(self) -> dict:
        return {**self.data, "lang": lang_of(self.lang)}

    def to_text(self, lang: str | None = None) -> str:
        """Plain text, tables aligned in columns (a Chinese character is two columns wide)."""
        return render(_blocks(self.data, lang_of(lang or self.lang)), markdown=False)

    def to_markdown(self, lang: str | None = None) -> str:
        """Markdown: headings, paragraphs and tables, with markup characters escaped."""
        return render(_blocks(self.data, lang_of(lang or self.lang)), markdown=True)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def __str__(self) -> str:
        return self.to_text()


def _blocks(d: dict, lang: str) -> list:
    """The document `d` as text.render blocks in `lang`: title, notes, the steps (one head) or the
    table of heads (a summary), then the next-token prediction (or, for an encoder, why there is none)."""
    if d.get("kind") == "translation":
        blocks = translation_blocks(d, check_lang(lang))
        return blocks[:1] + _dtype_note(d, lang) + blocks[1:]
    say = translator(check_lang(lang), "explain")
    n = len(d["tokens"])
    out = [("title", _title(d, say)), *_dtype_note(d, lang)]
    note = non_finite_note(d)
    if note:
        out.append(("p", say("not_finite", **note)))
    if d["cropped"]:
        out.append(("p", say("crop", n=n + d["cropped"], ctx=d["model"]["n_ctx"], drop=d["cropped"])))
    if any("␣" in token for token in d["tokens"]):
        out.append(("p", say("space")))
    if any(token.startswith(JOIN) for token in d["tokens"]):
        out.append(("p", say("join")))
    if not d["model"].get("causal", True):
        out.append(("p", say("bidirectional")))
    gemma = translator(check_lang(lang), "gemma")  # a sliding window's and a soft-cap's sentences
    out += head_steps(d, say, gemma=gemma) if d["mode"] == "head" else _heads_table(d, say)
    if "window" in d:  # sliding-window layers: a smaller most-even spread
        w = d["window"]
        layers = gemma("layer_sep").join(str(L) for L in w["layers"])
        out.append(("p", gemma("explain_window_entropy", layers=layers, w=w["size"], max=math.log2(w["size"]))))
    return out + next_token(d, say, lang)


def _dtype_note(d: dict, lang: str) -> list:
    """Under the title: what the numbers were computed in, when it is not float32 (--dtype bfloat16)."""
    dtype = d["model"].get("dtype", "float32")
    return [] if dtype == "float32" else [("p", t("bf16.computed_in", lang, dtype=dtype))]


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


def _heads_table(d: dict, say) -> list:
    """A summary: for every head, the token it attends to most and the entropy of its row."""
    rows = [
        [
            str(h["layer"]),
            str(h["head"]),
            f"{h['top_pos']} {h['top_token']}",
            f"{h['top_weight']:.4f}",
            f"{h['entropy_bits']:.3f}",
        ]
        for h in d["heads"]
    ]
    head = [say(c) for c in ("c_layer", "c_head", "c_most", "c_weight", "c_ent")]
    visible = len(d["tokens"]) if not d["model"]["causal"] else d["token"] + 1
    return [("table", head, rows, {0, 1, 3, 4}), ("p", say("sum_note", max=d["max_entropy_bits"], n=visible))]
