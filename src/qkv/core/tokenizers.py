"""Turn text into token ids and back.

Three tokenizers, from simplest to the one real GPTs use:

* ``CharTokenizer``: one token per Unicode character.
* ``WordTokenizer``: words, single punctuation marks and runs of whitespace
  (Chinese runs can be cut into words with the optional ``jieba`` package).
* ``BPETokenizer``: byte-level BPE as in GPT-2, trained with Hugging Face
  ``tokenizers``. It can encode any string, because every byte is a token.

All of them satisfy ``decode(encode(s)) == s`` exactly (but see ``whitespace=False`` below), and
``b"".join(t.separator(p, i) + t.token_bytes(i) for p, i in zip([None, *ids], ids)).decode("utf-8")
== t.decode(ids)``, which lets generated text be streamed one token at a time (``separator`` is
empty except between two words of a ``whitespace=False`` word tokenizer, where it is one space).
Text must be valid Unicode (no lone surrogates), as it is read from UTF-8 files.

``WordTokenizer`` with ``whitespace=False`` emits no tokens for spaces and tabs: a run of
whitespace becomes nothing, or its line breaks (``\n``, ``\r``) if it has any; ``decode`` puts one
space between two words and none beside a line break. So ``decode(encode(s)) == s`` holds exactly
for text written the way qkv's corpus is: words and punctuation marks separated by single spaces,
lines separated by bare line breaks (``"i ate apple .\n我 吃了 苹果 。"``), no space at either end.
Any other text comes back in that form (``"Hi,  you"`` -> ``"Hi , you"``; with jieba, a run of
Chinese comes back cut into words: ``"我爱北京"`` -> ``"我 爱 北京"``).
"""

from __future__ import annotations

import importlib.util
import json
import re
import unicodedata
from collections import Counter
from pathlib import Path

FORMAT_VERSION = 1
KINDS = ("char", "word", "bpe")
SEGMENTS = ("auto", "jieba", "none")
MAX_LISTED = 10
MAX_BPE_VOCAB = 10_000_000  # as many as a model's d_vocab may have
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}

# Word tokens: a run of whitespace, a run of word characters, or one other
# character. Every character falls in exactly one class, so nothing is lost.
_WORD_RE = re.compile(r"\s+|\w+|[^\w\s]")
# Chinese (Han) characters, the ones jieba knows how to group into words.
_CJK_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


class UnknownTokenError(ValueError):
    """Raised by ``encode`` when the text holds symbols the vocabulary lacks."""


def _unknown_error(things: list[str], noun: str) -> UnknownTokenError:
    n = len(things)
    listed = ", ".join(repr(t) for t in things[:MAX_LISTED])
    if n > MAX_LISTED:
        listed += f" and {n - MAX_LISTED} more"
    plural, verb = (noun, "is") if n == 1 else (noun + "s", "are")
    return UnknownTokenError(f"{n} {plural} {verb} not in the tokenizer's vocabulary: {listed}")


def _readable(data: bytes) -> str:
    """Show bytes as text; bytes that are not valid UTF-8 become ``<e4 bd>``."""
    if data and data.count(b" ") == len(data):  # a token of only spaces
        return "␣" * len(data)
    out, pending = [], b""  # pending: invalid bytes not yet written
    while data:
        try:
            text, bad, data = data.decode("utf-8"), b"", b""
        except UnicodeDecodeError as err:
            text = data[: err.start].decode("utf-8")
            bad, data = data[err.start : err.end], data[err.end :]
        if text:
            if pending:
                out.append("<" + pending.hex(" ") + ">")
                pending = b""
            out.extend(_readable_char(c) for c in text)
        pending += bad
    if pending:
        out.append("<" + pending.hex(" ") + ">")
    return "".join(out)


def _readable_char(c: str) -> str:
    if c in _ESCAPES:
        return _ESCAPES[c]
    if unicodedata.category(c) == "Cc":  # other control characters: \x1b, ...
        return f"\\x{ord(c):02x}"
    return c


class Tokenizer:
    """Base class: a fixed vocabulary of tokens, each with an integer id."""

    kind: str = ""

    @property
    def vocab_size(self) -> int:
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError

    def token_bytes(self, id: int) -> bytes:
        raise NotImplementedError

    def to_dict(self) -> dict:
        raise NotImplementedError

    def _check_id(self, id) -> int:
        i = int(id)
        if not 0 <= i < self.vocab_size:
            raise ValueError(f"token id {i} is out of range (vocabulary has {self.vocab_size} tokens)")
        return i

    def separator(self, prev: int | None, id: int) -> bytes:
        """What goes between token `prev` (None at the start) and token `id` in decoded text."""
        return b""

    def decode(self, ids) -> str:
        # Bytes that do not form valid UTF-8 (only possible when BPE ids are
        # not produced by encode, e.g. sampled by a model) become U+FFFD.
        ids = list(ids)
        pieces = (self.separator(p, i) + self.token_bytes(i) for p, i in zip([None, *ids], ids))
        return b"".join(pieces).decode("utf-8", errors="replace")

    def display(self, id: int) -> str:
        return _readable(self.token_bytes(id))

    def save(self, path) -> None:
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=1)
        Path(path).write_text(text + "\n", encoding="utf-8")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size})"


class _ListTokenizer(Tokenizer):
    """Shared code for tokenizers whose vocabulary is a plain list of strings."""

    noun = "token"

    def __init__(self, tokens: list[str]):
        self.tokens = list(tokens)
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self._bytes = [t.encode("utf-8") for t in self.tokens]

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def split(self, text: str) -> list[str]:
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        pieces = self.split(text)
        try:
            return [self.ids[p] for p in pieces]
        except KeyError:
            unknown = [p for p in dict.fromkeys(pieces) if p not in self.ids]
            raise _unknown_error(unknown, self.noun) from None

    def token_bytes(self, id: int) -> bytes:
        return self._bytes[self._check_id(id)]


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


def _byte_to_char() -> dict[int, str]:
    """GPT-2's table giving each byte a printable character: printable Latin-1
    bytes stand for themselves, the others move to chr(256) and up (space: 'Ġ')."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    keep += range(ord("®"), ord("ÿ") + 1)
    table, extra = {b: chr(b) for b in keep}, 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


_CHAR_TO_BYTE = {c: b for b, c in _byte_to_char().items()}


class BPETokenizer(Tokenizer):
    """Byte-level BPE (as in GPT-2) backed by a Hugging Face ``tokenizers`` object.

    Text is turned into UTF-8 bytes, and frequent pairs of tokens are merged
    into new tokens during training. A token may hold part of a character.
    """

    kind = "bpe"

    def __init__(self, hf_tokenizer):
        self.hf = hf_tokenizer
        self._bytes = []
        for i in range(hf_tokenizer.get_vocab_size()):
            token = hf_tokenizer.id_to_token(i)
            if token is None or any(c not in _CHAR_TO_BYTE for c in token):
                raise ValueError(f"BPE token {i} ({token!r}) is not a byte-level token")
            self._bytes.append(bytes(_CHAR_TO_BYTE[c] for c in token))
        if len({b for b in self._bytes if len(b) == 1}) < 256:
            raise ValueError("BPE vocabulary must contain all 256 single bytes")

    @classmethod
    def train(cls, text: str, vocab_size: int | None = None) -> BPETokenizer:
        from tokenizers import Tokenizer as HFTokenizer, decoders, models, pre_tokenizers, trainers

        hf = HFTokenizer(models.BPE())
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        hf.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size or 512,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # all 256 bytes
            show_progress=False,
            special_tokens=[],
        )
        hf.train_from_iterator([text], trainer=trainer)
        return cls(hf)

    @property
    def vocab_size(self) -> int:
        return len(self._bytes)

    def encode(self, text: str) -> list[int]:
        return self.hf.encode(text).ids

    def token_bytes(self, id: int) -> bytes:
        return self._bytes[self._check_id(id)]

    def to_dict(self) -> dict:
        return {"kind": self.kind, "version": FORMAT_VERSION, "hf_tokenizer": json.loads(self.hf.to_str())}


def train_tokenizer(kind: str, text: str, vocab_size: int | None = None, segment: str = "auto",
                    whitespace: bool = True) -> Tokenizer:
    """Build a tokenizer of the given kind ("char", "word" or "bpe") from text.

    ``vocab_size`` is ignored for "char", caps the word list for "word" and is
    the target size (default 512, at least 256) for "bpe". ``segment`` only
    matters for "word": "jieba" cuts Chinese into words, "none" does not, and
    "auto" uses jieba when it is installed and the text contains Chinese.
    ``whitespace=False`` (word only) makes spaces and tabs no tokens.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown tokenizer kind {kind!r}; choose one of: {', '.join(KINDS)}")
    if whitespace is not True and (kind != "word" or whitespace is not False):
        raise ValueError(f"whitespace must be true or false, and false only for a word tokenizer; got {whitespace!r} for {kind}")
    if segment not in SEGMENTS:
        raise ValueError(f"unknown segment {segment!r}; choose one of: {', '.join(SEGMENTS)}")
    if not text:
        raise ValueError("cannot build a tokenizer from empty text")
    if vocab_size is not None and kind != "char":
        low = 256 if kind == "bpe" else 1
        if int(vocab_size) < low:
            raise ValueError(f"vocab_size for a {kind} tokenizer must be at least {low}, got {vocab_size}")
        if kind == "bpe" and int(vocab_size) > MAX_BPE_VOCAB:  # a word list is only cut; BPE's trainer needs a size it can hold
            raise ValueError(f"vocab_size for a bpe tokenizer must be at most {MAX_BPE_VOCAB:,}, got {vocab_size}")
    if kind == "char":
        return CharTokenizer.train(text)
    if kind == "bpe":
        return BPETokenizer.train(text, vocab_size)
    if segment == "auto":
        use_jieba = bool(_CJK_RE.search(text)) and importlib.util.find_spec("jieba") is not None
    else:
        use_jieba = segment == "jieba"
    return WordTokenizer.train(text, vocab_size, use_jieba, whitespace)


def _string_list(d: dict, key: str) -> list[str]:
    items = d.get(key)
    if not isinstance(items, list) or not all(isinstance(t, str) and t for t in items):
        raise ValueError(f"field {key!r} must be a list of non-empty strings")
    if len(set(items)) != len(items):
        raise ValueError(f"field {key!r} contains duplicate entries")
    return items


def tokenizer_from_dict(d: dict) -> Tokenizer:
    """Rebuild a tokenizer from ``to_dict()`` output, checking every field."""
    if not isinstance(d, dict):
        raise ValueError(f"expected a JSON object, got {type(d).__name__}")
    kind, version = d.get("kind"), d.get("version")
    if kind not in KINDS:
        raise ValueError(f"field 'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    if version != FORMAT_VERSION:
        raise ValueError(f"unsupported tokenizer format version {version!r} (expected {FORMAT_VERSION})")
    if kind == "char":
        chars = _string_list(d, "chars")
        if any(len(c) != 1 for c in chars):
            raise ValueError("field 'chars' must hold single characters")
        return CharTokenizer(chars)
    if kind == "word":
        segment = d.get("segment")
        if segment not in ("jieba", "none"):
            raise ValueError(f"field 'segment' must be 'jieba' or 'none', got {segment!r}")
        whitespace = d.get("whitespace", True)  # files older than the option have no key: whitespace tokens
        if not isinstance(whitespace, bool):
            raise ValueError(f"field 'whitespace' must be true or false, got {whitespace!r}")
        return WordTokenizer(_string_list(d, "words"), use_jieba=segment == "jieba", whitespace=whitespace)
    spec = d.get("hf_tokenizer")
    model = spec.get("model") if isinstance(spec, dict) else None
    pre = spec.get("pre_tokenizer") if isinstance(spec, dict) else None
    if not isinstance(model, dict) or model.get("type") != "BPE":
        raise ValueError("field 'hf_tokenizer' must hold a Hugging Face BPE tokenizer")
    if not isinstance(pre, dict) or pre.get("type") != "ByteLevel" or pre.get("add_prefix_space"):
        raise ValueError("field 'hf_tokenizer' needs a ByteLevel pre-tokenizer without add_prefix_space")
    from tokenizers import Tokenizer as HFTokenizer

    try:
        hf = HFTokenizer.from_str(json.dumps(spec))
    except Exception as err:  # the Rust side raises its own exception type
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"field 'hf_tokenizer' could not be read: {first_line}") from None
    return BPETokenizer(hf)


def load_tokenizer(path) -> Tokenizer:
    """Read a tokenizer written by ``Tokenizer.save``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"cannot load tokenizer: {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot load tokenizer from {path}: {err}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"cannot load tokenizer from {path}: not valid JSON ({err})") from None
    try:
        return tokenizer_from_dict(data)
    except ValueError as err:
        raise ValueError(f"cannot load tokenizer from {path}: {err}") from None
