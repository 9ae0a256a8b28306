"""The explorer's "model" document for a translation model (an encoder-decoder): its shape, and source
sentences from qkv's corpus it can read, so that the page opens on one.

The sentences are in the model's source language: the one its checkpoint records (model.languages,
from config.json's task, written by `qkv train --task translate`), else the one whose sentences it translates
into the other language (a greedy translation of a Chinese sentence holding no Chinese: the source
is Chinese). Held-out sentences come first (the model never trained on them), one of each kind:
苹果 as a fruit and as a company, 小米, who did what to whom, a drug, a job, a plain sentence.
"""

from __future__ import annotations

import re

from qkv.analysis.model_info import model_info
from qkv.core.decode.translate import translate
from qkv.core.io.document import header

# (kind, tags the pair must have) in the order offered
WANTED = [
    ("sense", {("word", "苹果"), ("sense", "food")}),
    ("sense", {("word", "苹果"), ("sense", "company")}),
    ("sense", {("word", "小米")}),
    ("order", set()),
    ("drug", set()),
    ("job", set()),
    ("plain", set()),
]
_CJK = re.compile("[\u3400-\u9fff]")


def source_lang(model, tokenizer, name: str = "") -> str:
    """ "zh" or "en": the language the model translates from (see the module docstring)."""
    languages = getattr(model, "languages", None)  # (source, target) as its checkpoint records them
    if languages is not None and languages[0] in ("zh", "en"):
        return languages[0]
    probe = next((p for p in _pairs() if _fits(tokenizer, model.cfg.n_ctx, p.zh)), None)
    if probe is None:
        return "zh"
    try:
        out = translate(model, tokenizer, probe.text("zh"))
    except ValueError:
        return "zh"
    return "en" if _CJK.search(out) else "zh"


def _pairs():
    from qkv.core.text.corpus import pairs

    return pairs("heldout") + pairs("train", n_sentences=2000)


def _fits(tokenizer, n_ctx: int, words) -> bool:
    return len(words) < n_ctx and all(w in tokenizer.ids for w in words)


def examples(model, tokenizer, lang: str) -> list[str]:
    """Up to one source sentence of each WANTED kind that the model can read."""
    out, candidates = [], [p for p in _pairs() if _fits(tokenizer, model.cfg.n_ctx, p.side(lang))]
    for kind, tags in WANTED:
        hit = next((p for p in candidates if p.kind == kind and tags <= set(p.tags) and p.text(lang) not in out), None)
        if hit is not None:
            out.append(hit.text(lang))
    return out or [p.text(lang) for p in candidates[:3]]


def translation_model_doc(model, tokenizer, name: str = "", first: str | None = None) -> dict:
    """The "model" document of a translation model: `first` (if given) leads its examples; no comparison."""
    lang = source_lang(model, tokenizer, name)
    shown = ([first] if first else []) + examples(model, tokenizer, lang)
    return {
        **header("model"),
        "model": model_info(model, tokenizer, name),
        "examples": list(dict.fromkeys(shown)),
        "compare": None,
        "source_lang": lang,
    }
