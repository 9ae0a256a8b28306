"""Tokenizers with a list of strings as vocabulary: one token per character, or per word."""

from __future__ import annotations

import re
from collections import Counter

from .base import FORMAT_VERSION, _ListTokenizer

# Word tokens: a run of whitespace, a run of word characters, or one other
# character. Every character falls in exactly one class, so nothing is lost.
_WORD_RE = re.compile(r"\s+|\w+|[^\w\s]")
# Chinese (Han) characters, the ones jieba knows how to group into words.
_CJK_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


class CharTokenizer(_ListTokenizer):
    """One token per character (code point), vocabulary sorted by code point."""

    kind = "char"
    noun = "character"

    @classmethod
    def train(cls, text: str) -> CharTokenizer:
        return cls(sorted(set(text)))

    def split(self, text: str) -> list[str]:
        return list(text)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "version": FORMAT_VERSION, "chars": self.tokens}


class WordTokenizer(_ListTokenizer):
    """Words, single punctuation marks and whitespace runs as tokens.

    The vocabulary is ordered by descending frequency, then alphabetically.
    With ``vocab_size`` only the most frequent words are kept; there is no
    ``<unk>`` token, so encoding a word outside the vocabulary raises
    ``UnknownTokenError``. With ``segment="jieba"`` runs of Chinese are cut
    into words by jieba instead of being one token per run. With
    ``whitespace=False`` spaces and tabs are not tokens (see the module's
    docstring for what then round-trips).
    """

    kind = "word"
    noun = "word"

    def __init__(self, tokens: list[str], use_jieba: bool = False, whitespace: bool = True):
        super().__init__(tokens)
        self.use_jieba = use_jieba
        self.whitespace = whitespace
        self._jieba = _import_jieba() if use_jieba else None

    @classmethod
    def train(cls, text: str, vocab_size: int | None = None, use_jieba: bool = False,
              whitespace: bool = True) -> WordTokenizer:
        counts = Counter(_split_words(text, _import_jieba() if use_jieba else None, whitespace))
        tokens = sorted(counts, key=lambda t: (-counts[t], t))
        if vocab_size is not None:
            tokens = tokens[:vocab_size]
        if not tokens:
            raise ValueError("cannot build a word tokenizer from text without words")
        return cls(tokens, use_jieba, whitespace)

    def split(self, text: str) -> list[str]:
        return _split_words(text, self._jieba, self.whitespace)

    def separator(self, prev: int | None, id: int) -> bytes:
        if self.whitespace or prev is None:
            return b""
        words = not self.tokens[self._check_id(prev)].isspace() and not self.tokens[self._check_id(id)].isspace()
        return b" " if words else b""

    def respace(self, text: str) -> str | None:
        """`text` as a space-separated corpus would write it: each run the vocabulary does not know
        cut into its words, longest first (我投资了苹果 -> 我 投资了 苹果), and one space between
        words. None when some piece cannot be cut into known words, or spaces are not tokens."""
        if self.whitespace and " " not in self.ids:
            return None
        longest = max(len(t) for t in self.tokens)
        words = []
        for piece in self.split(text):
            if piece.isspace():
                continue
            while piece:
                cut = next((n for n in range(min(longest, len(piece)), 0, -1) if piece[:n] in self.ids), 0)
                if not cut:
                    return None
                words.append(piece[:cut])
                piece = piece[cut:]
        return " ".join(words) if words else None

    def to_dict(self) -> dict:
        segment = "jieba" if self.use_jieba else "none"
        return {"kind": self.kind, "version": FORMAT_VERSION, "segment": segment, "whitespace": self.whitespace,
                "words": self.tokens}


def _split_words(text: str, jieba=None, whitespace: bool = True) -> list[str]:
    pieces = _WORD_RE.findall(text)
    out = []
    for p in pieces:
        if not whitespace and p.isspace():  # keep only the line breaks of a whitespace run
            p = "".join(c for c in p if c in "\r\n")
            if p:
                out.append(p)
        elif jieba is not None and _CJK_RE.search(p):  # jieba keeps every character, so this is lossless
            out.extend(w for w in jieba.lcut(p, HMM=False) if w)
        else:
            out.append(p)
    return out


def _import_jieba():
    try:
        import jieba
    except ImportError:
        raise ValueError("this word tokenizer segments Chinese and needs jieba: pip install jieba") from None
    jieba.setLogLevel(60)  # silence "Building prefix dict..." messages
    return jieba
