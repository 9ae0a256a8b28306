"""Tokenizers with a list of strings as vocabulary: one token per character, or per word."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from qkv.core.io.refusal import phrase
from qkv.core.text.tokenizers.base import FORMAT_VERSION, MAX_LISTED, UnknownTokenError, _ListTokenizer, unknown_error
from qkv.core.text.tokenizers.bestpath import best_cut, zipf_costs
from qkv.core.text.tokenizers.nearest import fold_ascii, nearest_words

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

    def encode_array(self, text: str):
        """encode(text) as a numpy array of int64, the same ids found by a table indexed by code point
        (ids[c] = table[ord(c)]) rather than a dict per character: for long texts (qkv tokenize).
        A character outside the vocabulary is refused as encode refuses it."""
        import numpy as np

        if getattr(self, "_table", None) is None:
            codes = [ord(c) for c in self.tokens]
            self._table = np.full(max(codes, default=0) + 1, -1, dtype=np.int64)  # (highest code point + 1,)
            self._table[codes] = np.arange(len(codes))
        points = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")  # (len(text),): each character's code point
        ids = self._table[np.minimum(points, len(self._table) - 1)]
        if (ids < 0).any() or (points >= len(self._table)).any():
            return np.asarray(self.encode(text), dtype=np.int64)  # raises: names the unknown characters
        return ids

    def to_dict(self) -> dict:
        return {"kind": self.kind, "version": FORMAT_VERSION, "chars": self.tokens}


class WordTokenizer(_ListTokenizer):
    """Words, single punctuation marks and whitespace runs as tokens.

    The vocabulary is ordered by descending frequency, then alphabetically.
    With ``vocab_size`` only the most frequent words are kept. Without a
    fallback there is no ``<unk>`` token, so encoding a word outside the
    vocabulary raises ``UnknownTokenError``. With ``segment="jieba"`` runs of
    Chinese are cut into words by jieba instead of being one token per run.
    With ``whitespace=False`` spaces and tabs are not tokens (see the module's
    docstring for what then round-trips).

    ``fold_case=True`` lowercases ASCII letters (A-Z) before anything else, for a vocabulary
    learnt from lowercase text: "I ate" reads as "i ate", and decodes as "i ate" (only text
    without ASCII capitals round-trips; other scripts keep their case).

    ``fallback=True`` makes every text encodable, under the words (see `cut`): a piece
    that is not a word of the vocabulary is cut into known words, the most probable split
    (bestpath.py: 老师说明天下午 -> 老师 说 明天 下午, 我吃了苹果 -> 我 吃了 苹果), what no word
    covers becomes single-character tokens (`chars`: every character the training text holds
    that is not itself a word), and a character that is not even that becomes the tokens of its
    UTF-8 bytes: 256 byte tokens, the last ids, shown ``<0xE5>``.
    `decode` turns byte tokens back into bytes, with no space before a UTF-8 continuation byte
    (0x80-0xBF) that follows a byte, so a character spelled in bytes comes back whole. Training
    text is all words, so a model learns the character and byte tokens only from spelled training
    ids (`spelling.Spelled`). `token_kind` says which of the three an id is.
    """

    kind = "word"
    noun = "word"

    def __init__(
        self,
        tokens: list[str],
        use_jieba: bool = False,
        whitespace: bool = True,
        chars: Sequence[str] = (),
        fallback: bool = False,
        fold_case: bool = False,
    ):
        if chars and not fallback:
            raise ValueError("character tokens (field 'chars') come only with a fallback")
        if set(chars) & set(tokens) or any(len(c) != 1 for c in chars) or len(set(chars)) != len(chars):
            raise ValueError("field 'chars' must hold distinct single characters that are not also words")
        self.n_words, self.n_chars = len(tokens), len(chars)
        names = [byte_name(b) for b in range(N_BYTES)] if fallback else []
        super().__init__([*tokens, *chars, *names])
        self.byte_base = self.n_words + self.n_chars  # ids byte_base .. byte_base + 255: the bytes 0x00 .. 0xFF
        if fallback:
            self.ids = {t: i for i, t in enumerate(self.tokens[: self.byte_base])}  # a byte's name is no word
            self._bytes[self.byte_base :] = [bytes([b]) for b in range(N_BYTES)]
        self.use_jieba = use_jieba
        self.whitespace = whitespace
        self.fallback = fallback
        self.fold_case = fold_case
        self._jieba = _import_jieba() if use_jieba else None
        self._longest = max(map(len, self.tokens[: self.byte_base]), default=1)
        self._cost, self._byte_cost = zipf_costs(self.byte_base, N_BYTES if fallback else 0)
        self._cuts: dict[str, list[int]] = {}  # piece -> its ids (see MAX_CACHED)
        self._cached = 0  # characters and ids held in _cuts

    @classmethod
    def train(
        cls,
        text: str,
        vocab_size: int | None = None,
        use_jieba: bool = False,
        whitespace: bool = True,
        fallback: bool = False,
        fold_case: bool = False,
    ) -> WordTokenizer:
        counts = cls.count(text, use_jieba, whitespace, fold_case)
        return cls.from_counts(counts, vocab_size, use_jieba, whitespace, fallback, fold_case)

    @staticmethod
    def count(text: str, use_jieba: bool = False, whitespace: bool = True, fold_case: bool = False) -> Counter:
        """How often each piece (word, mark, whitespace run) occurs in `text`: the counts of several
        texts cut where no piece spans the cut (qkv.core.text.stream) add up to the whole text's."""
        text = fold_ascii(text) if fold_case else text
        return Counter(_split_words(text, _import_jieba() if use_jieba else None, whitespace))

    @classmethod
    def from_counts(
        cls,
        counts: Counter,
        vocab_size: int | None = None,
        use_jieba: bool = False,
        whitespace: bool = True,
        fallback: bool = False,
        fold_case: bool = False,
    ) -> WordTokenizer:
        """The tokenizer `train` makes of a text whose pieces occur `counts` times: the most frequent first."""
        tokens = sorted(counts, key=lambda t: (-counts[t], t))
        if vocab_size is not None:
            tokens = tokens[:vocab_size]
        if not tokens:
            raise ValueError("cannot build a word tokenizer from text without words")
        kept = set(tokens)
        chars = sorted({c for p in counts for c in p} - kept) if fallback else []
        return cls(tokens, use_jieba, whitespace, chars, fallback, fold_case)

    def split(self, text: str) -> list[str]:
        return _split_words(fold_ascii(text) if self.fold_case else text, self._jieba, self.whitespace)

    def encode(self, text: str) -> list[int]:
        if not self.fallback:
            pieces = self.split(text)
            try:
                return [self.ids[p] for p in pieces]
            except KeyError:
                raise self._unknown([p for p in dict.fromkeys(pieces) if p not in self.ids]) from None
        out: list[int] = []
        for piece in self.split(text):
            i = self.ids.get(piece)
            out.extend(self.cut(piece) if i is None else (i,))
        return out

    def parts(self, piece: str) -> list[tuple[str, int | None]]:
        """`piece` cut into known strings, the most probable split (bestpath.best_cut, costs from the
        vocabulary's ranks): (part, id) pairs, id None for a character no token holds."""
        unknown = lambda c: self._byte_cost * len(c.encode("utf-8", "surrogatepass"))
        return best_cut(piece, self.ids, self._longest, self._cost, unknown)

    def cut(self, piece: str) -> list[int]:
        """The ids of `piece` cut into its most probable words (`parts`); with a fallback, a character
        no token covers becomes its UTF-8 bytes, without one it raises UnknownTokenError."""
        ids = self._cuts.get(piece)
        if ids is None:
            ids = []
            for part, i in self.parts(piece):
                if i is not None:
                    ids.append(i)
                elif self.fallback:
                    ids.extend(self.byte_base + b for b in part.encode("utf-8", "surrogatepass"))
                else:
                    raise self._unknown([piece])
            self._cached += len(piece) + len(ids)
            if self._cached > MAX_CACHED:  # full: start again (a server reads texts without end)
                self._cuts.clear()
                self._cached = len(piece) + len(ids)
            self._cuts[piece] = ids
        return list(ids)

    def unknown_runs(self, piece: str) -> list[list[tuple[str, int | None]]]:
        """The runs of `piece` that no word of the vocabulary covers, each as its (part, id) pairs
        (id None: a character no token holds). `piece` is cut as `parts` cuts it; in a piece
        without Chinese characters (a word of a spaced script) the whole piece is one run."""
        if self.ids.get(piece, self.n_words) < self.n_words:
            return []
        parts = self.parts(piece)
        if not _CJK_RE.search(piece):
            return [parts] if any(i is None or i >= self.n_words for _, i in parts) else []
        runs: list[list[tuple[str, int | None]]] = []
        run: list[tuple[str, int | None]] = []
        for part, i in parts:
            if i is not None and i < self.n_words:
                runs, run = runs + [run] if run else runs, []
            else:
                run.append((part, i))
        return runs + [run] if run else runs

    def _unknown(self, pieces: list[str]) -> UnknownTokenError:
        """The error for pieces that are not words: it names only what no known word covers, with the
        nearest known words; pieces that are all known words once cut are shown cut."""
        missing = list(
            dict.fromkeys("".join(p for p, _ in run) for piece in pieces for run in self.unknown_runs(piece))
        )
        words = self.tokens[: self.n_words]
        if missing:
            listed = [
                phrase("errors.nearest_words", piece=repr(m), words=nearest_words(words, m) or phrase("errors.no_near"))
                for m in missing[:MAX_LISTED]
            ]
        else:
            listed = [
                phrase(
                    "errors.cut_words",
                    piece=repr(p),
                    cut=" ".join(part for part, _ in self.parts(p)),
                )
                for p in pieces[:MAX_LISTED]
            ]
        return unknown_error(listed, len(missing or pieces), "word")

    def token_kind(self, id: int) -> str:
        """ "word" (a word of the training text), "char" (a character kept for the fallback) or "byte"."""
        i = self._check_id(id)
        return "word" if i < self.n_words else "char" if i < self.byte_base else "byte"

    def display(self, id: int) -> str:
        i = self._check_id(id)
        return self.tokens[i] if i >= self.byte_base else super().display(i)

    def separator(self, prev: int | None, id: int) -> bytes:
        if self.whitespace or prev is None:
            return b""
        a, b = self._check_id(prev), self._check_id(id)
        if a >= self.byte_base and 0x80 <= b - self.byte_base < 0xC0:  # a continuation byte: the same character
            return b""
        space = lambda i: i < self.byte_base and self.tokens[i].isspace()
        return b"" if space(a) or space(b) else b" "

    def respace(self, text: str) -> str | None:
        """`text` as a space-separated corpus would write it: each run the vocabulary does not know
        cut into its most probable words (我投资了苹果 -> 我 投资了 苹果), and one space between
        words. None when some piece cannot be cut into known words, or spaces are not tokens."""
        if self.whitespace and " " not in self.ids:
            return None
        words = []
        for piece in self.split(text):
            if piece.isspace():
                continue
            for part, i in self.parts(piece):
                if i is None:
                    return None
                words.append(part)
        return " ".join(words) if words else None

    def to_dict(self) -> dict:
        segment = "jieba" if self.use_jieba else "none"
        out = {
            "kind": self.kind,
            "version": FORMAT_VERSION,
            "segment": segment,
            "whitespace": self.whitespace,
            "words": self.tokens[: self.n_words],
        }
        if self.fallback or self.fold_case:  # fields of format 2; a file without them stays readable as format 1
            out.update(
                version=WORD_FORMAT_VERSION,
                fold_case=self.fold_case,
                fallback="bytes" if self.fallback else "none",
                chars=self.tokens[self.n_words : self.byte_base],
            )
        return out


N_BYTES = 256
# the cuts remembered, as characters of their pieces plus their ids: at most ~40 bytes each (a str's
# character, an id's list slot and int), so ~10 MB per tokenizer, however long or many the texts
MAX_CACHED = 1 << 18
WORD_FORMAT_VERSION = 2  # a word tokenizer with fold_case or a fallback


def byte_name(b: int) -> str:
    """How a byte token is shown: <0xE5>."""
    return f"<0x{b:02X}>"


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
