"""How closely a word tokenizer's split of unspaced Chinese follows a reader's: of the words a reader
cuts (jieba, by default) that the vocabulary holds as one token, the share the tokenizer keeps as
that one token.

    agreement(tok, ["老师说明天下午三点在图书馆见面。"])
    -> {"words": 10, "kept": 10, "share": 1.0, "missed": []}

A reader's word "is kept" when one token of the tokenizer's split starts where the word starts and
ends where it ends. Longest-first cutting reads 老师说明天下午 as 老师 / 说明 / 天下 / 午 and so
loses 说, 明天 and 下午; the most probable split (core/text/tokenizers/bestpath.py) keeps them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from qkv.core.text.tokenizers.nearest import fold_ascii
from qkv.core.text.tokenizers.unknown import part_kinds
from qkv.core.text.tokenizers.words import _CJK_RE as HAN
from qkv.core.text.tokenizers.words import WordTokenizer


def token_spans(tok: WordTokenizer, text: str) -> set[tuple[int, int]]:
    """The (start, end) character offsets in `text` of each token `tok` reads it as (a character
    read as UTF-8 bytes counts as one span: its bytes together)."""
    folded = fold_ascii(text) if tok.fold_case else text
    spans, at = set(), 0
    for piece in tok.split(text):
        at = folded.index(piece, at)
        for part, _ in part_kinds(tok, piece):
            spans.add((at, at + len(part)))
            at += len(part)
    return spans


def agreement(tok: WordTokenizer, texts: Iterable[str], cut: Callable[[str], list[str]] | None = None) -> dict:
    """{"words": reader's words the vocabulary holds whole, "kept": those read as that one token,
    "share": kept / words, "missed": [(word, text), ...], and "han_words", "han_kept", "han_share": the
    same over the words that hold a Chinese character (no punctuation, digits or Latin words, which
    any cut keeps)}. `cut`: a text -> a reader's words, in order and covering it (default: jieba.lcut,
    the words a jieba user sees)."""
    if cut is None:
        import jieba

        jieba.setLogLevel(60)
        cut = jieba.lcut
    words = kept = han_words = han_kept = 0
    missed = []
    for text in texts:
        spans, at = token_spans(tok, text), 0
        for w in cut(text):
            key = fold_ascii(w) if tok.fold_case else w
            if w.strip() and tok.ids.get(key, tok.byte_base) < tok.byte_base:
                words += 1
                han = bool(HAN.search(w))
                han_words += han
                if (at, at + len(w)) in spans:
                    kept += 1
                    han_kept += han
                else:
                    missed.append((w, text))
            at += len(w)
    return {
        "words": words,
        "kept": kept,
        "share": kept / words if words else 1.0,
        "missed": missed,
        "han_words": han_words,
        "han_kept": han_kept,
        "han_share": han_kept / han_words if han_words else 1.0,
    }


__all__ = ["agreement", "token_spans"]
