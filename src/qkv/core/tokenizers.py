"""Turn text into token ids and back.

Three tokenizers, from simplest to the one real GPTs use:

* ``CharTokenizer``: one token per Unicode character.
* ``WordTokenizer``: words, single punctuation marks and runs of whitespace
  (Chinese runs can be cut into words with the optional ``jieba`` package).
* ``BPETokenizer``: byte-level BPE as in GPT-2, trained with Hugging Face
  ``tokenizers``. It can encode any string, because every byte is a token.

All of them satisfy ``decode(encode(s)) == s`` exactly, and
``b"".join(t.token_bytes(i) for i in ids).decode("utf-8") == t.decode(ids)``,
which lets generated text be streamed one token at a time.
Text must be valid Unicode (no lone surrogates), as it is read from UTF-8 files.
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

    def decode(self, ids) -> str:
        # Bytes that do not form valid UTF-8 (only possible when BPE ids are
        # not produced by encode, e.g. sampled by a model) become U+FFFD.
        return b"".join(self.token_bytes(i) for i in ids).decode("utf-8", errors="replace")

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
    into words by jieba instead of being one token per run.
    """

    kind = "word"
    noun = "word"

    def __init__(self, tokens: list[str], use_jieba: bool = False):
        super().__init__(tokens)
        self.use_jieba = use_jieba
        self._jieba = _import_jieba() if use_jieba else None

    @classmethod
    def train(cls, text: str, vocab_size: int | None = None, use_jieba: bool = False) -> WordTokenizer:
        counts = Counter(_split_words(text, _import_jieba() if use_jieba else None))
        tokens = sorted(counts, key=lambda t: (-counts[t], t))
        if vocab_size is not None:
            tokens = tokens[:vocab_size]
        return cls(tokens, use_jieba)

    def split(self, text: str) -> list[str]:
        return _split_words(text, self._jieba)

    def respace(self, text: str) -> str | None:
        """`text` as a space-separated corpus would write it: each run the vocabulary does not know
        cut into its words, longest first (我投资了苹果 -> 我 投资了 苹果), and one space between
        words. None when some piece cannot be cut into known words, or spaces are not tokens."""
        if " " not in self.ids:
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
        return {"kind": self.kind, "version": FORMAT_VERSION, "segment": segment, "words": self.tokens}


def _split_words(text: str, jieba=None) -> list[str]:
    pieces = _WORD_RE.findall(text)
    if jieba is None:
        return pieces
    out = []
    for p in pieces:
        if _CJK_RE.search(p):  # jieba keeps every character, so this is lossless
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


def train_tokenizer(kind: str, text: str, vocab_size: int | None = None, segment: str = "auto") -> Tokenizer:
    """Build a tokenizer of the given kind ("char", "word" or "bpe") from text.

    ``vocab_size`` is ignored for "char", caps the word list for "word" and is
    the target size (default 512, at least 256) for "bpe". ``segment`` only
    matters for "word": "jieba" cuts Chinese into words, "none" does not, and
    "auto" uses jieba when it is installed and the text contains Chinese.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown tokenizer kind {kind!r}; choose one of: {', '.join(KINDS)}")
    if segment not in SEGMENTS:
        raise ValueError(f"unknown segment {segment!r}; choose one of: {', '.join(SEGMENTS)}")
    if not text:
        raise ValueError("cannot build a tokenizer from empty text")
    if vocab_size is not None and kind != "char":
        low = 256 if kind == "bpe" else 1
        if int(vocab_size) < low:
            raise ValueError(f"vocab_size for a {kind} tokenizer must be at least {low}, got {vocab_size}")
    if kind == "char":
        return CharTokenizer.train(text)
    if kind == "bpe":
        return BPETokenizer.train(text, vocab_size)
    if segment == "auto":
        use_jieba = bool(_CJK_RE.search(text)) and importlib.util.find_spec("jieba") is not None
    else:
        use_jieba = segment == "jieba"
    return WordTokenizer.train(text, vocab_size, use_jieba)


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
        return WordTokenizer(_string_list(d, "words"), use_jieba=segment == "jieba")
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
