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

``WordTokenizer`` with ``fallback=True`` (the bundled model's: ``train_tokenizer("word", text,
whitespace=False, fallback=True, fold_case=True)``) accepts any text: a piece that is not a word is
cut into its most probable known words (bestpath.py), then single characters of the training text, then UTF-8 byte
tokens (``<0xE5>``); ``fold_case=True`` reads ASCII capitals as lowercase. Such text comes back in
corpus form too (``"I ate 苹果很好"`` -> ``"i ate 苹果 很 好"``, if 很 is a word and 好 only a
character). Its file is format version 2 (fields ``fold_case``, ``fallback``, ``chars``); files of
version 1 load as before.

A pretrained model's tokenizer.json is read by ``layout.from_hf`` as a ``BPETokenizer`` (byte-level,
in any of its layouts: GPT-2, SmolLM2, Qwen2, Llama 3), a ``PieceTokenizer`` (SentencePiece: Llama 2,
Mistral, Gemma) or a ``WordPieceTokenizer`` (BERT); its ids are the file's own (transformers'), and a
layout qkv cannot read is refused in one line. Such a vocabulary may be unable to spell some
characters (SmolLM2's lacks 21 bytes; a piece vocabulary without byte fallback): ``unspellable(text)``
names them, since `tokenizers` drops them or writes an unknown token; ``encode_exact(text)`` refuses
them where the exact ids matter.

A tokenizer.json is a program `tokenizers` runs on every text, and a hostile one can make it panic or
multiply the text: `safety.settle` switches its padding and truncation off and refuses, in one line,
what it may not do when it is read (normalizers that grow a text beyond MAX_GROWTH, an inserted text
beyond MAX_INSERT, a regex that can match empty text or repeats a repetition, a special token beyond
the vocabulary); every encode goes through `safety.encode` (a panic becomes a one-line refusal, its
ids are counted and checked against the vocabulary).
"""

from __future__ import annotations

import importlib.util
import json

from qkv.core.io.files import TOKENIZER_LIMIT, read_bytes
from qkv.core.text.tokenizers.base import FORMAT_VERSION, Tokenizer, UnknownTokenError, _readable
from qkv.core.text.tokenizers.bpe import MAX_BPE_VOCAB, BPETokenizer
from qkv.core.text.tokenizers.words import _CJK_RE, WORD_FORMAT_VERSION, CharTokenizer, WordTokenizer

KINDS = ("char", "word", "bpe")
PRETRAINED_KINDS = ("pieces", "wordpiece")  # read from a pretrained model's files (and saved with it), never trained
SEGMENTS = ("auto", "jieba", "none")


def train_tokenizer(
    kind: str,
    text: str,
    vocab_size: int | None = None,
    segment: str = "auto",
    whitespace: bool = True,
    fallback: bool = False,
    fold_case: bool = False,
) -> Tokenizer:
    """Build a tokenizer of the given kind ("char", "word" or "bpe") from text.

    ``vocab_size`` caps the word list for "word" (the most frequent words are kept) and is the
    target size (default 512, at least 256) for "bpe"; a "char" tokenizer takes none (its
    vocabulary is the text's characters). ``segment`` only
    matters for "word": "jieba" cuts Chinese into words, "none" does not, and
    "auto" uses jieba when it is installed and the text contains Chinese.
    ``whitespace=False`` (word only) makes spaces and tabs no tokens. ``fallback=True`` (word only)
    adds the text's characters and 256 byte tokens under the words, so any text can be encoded;
    ``fold_case=True`` (word only) reads ASCII capitals as lowercase (see WordTokenizer).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown tokenizer kind {kind!r}; choose one of: {', '.join(KINDS)}")
    if whitespace is not True and (kind != "word" or whitespace is not False):
        raise ValueError(
            f"whitespace must be true or false, and false only for a word tokenizer; got {whitespace!r} for {kind}"
        )
    for name, value in (("fallback", fallback), ("fold_case", fold_case)):
        if value is not False and (kind != "word" or value is not True):
            raise ValueError(
                f"{name} must be true or false, and true only for a word tokenizer; got {value!r} for {kind}"
            )
    if segment not in SEGMENTS:
        raise ValueError(f"unknown segment {segment!r}; choose one of: {', '.join(SEGMENTS)}")
    if not text:
        raise ValueError("cannot build a tokenizer from empty text")
    if vocab_size is not None and kind == "char":
        raise ValueError("vocab_size does not apply to a char tokenizer: its vocabulary is the text's characters")
    if vocab_size is not None:
        low = 256 if kind == "bpe" else 1
        if int(vocab_size) < low:
            raise ValueError(f"vocab_size for a {kind} tokenizer must be at least {low}, got {vocab_size}")
        if (
            kind == "bpe" and int(vocab_size) > MAX_BPE_VOCAB
        ):  # a word list is only cut; BPE's trainer needs a size it can hold
            raise ValueError(f"vocab_size for a bpe tokenizer must be at most {MAX_BPE_VOCAB:,}, got {vocab_size}")
    if kind == "char":
        return CharTokenizer.train(text)
    if kind == "bpe":
        return BPETokenizer.train(text, vocab_size)
    if segment == "auto":
        use_jieba = bool(_CJK_RE.search(text)) and importlib.util.find_spec("jieba") is not None
    else:
        use_jieba = segment == "jieba"
    return WordTokenizer.train(text, vocab_size, use_jieba, whitespace, fallback, fold_case)


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
    if kind not in (*KINDS, *PRETRAINED_KINDS):
        raise ValueError(f"field 'kind' must be one of {', '.join((*KINDS, *PRETRAINED_KINDS))}, got {kind!r}")
    versions = (FORMAT_VERSION, WORD_FORMAT_VERSION) if kind == "word" else (FORMAT_VERSION,)
    if version not in versions or isinstance(version, bool):
        raise ValueError(
            f"unsupported tokenizer format version {version!r} (expected "
            f"{' or '.join(map(str, versions))} for a {kind} tokenizer)"
        )
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
        words = _string_list(d, "words")
        if version == FORMAT_VERSION:
            return WordTokenizer(words, use_jieba=segment == "jieba", whitespace=whitespace)
        fold_case, fallback = d.get("fold_case"), d.get("fallback")
        if not isinstance(fold_case, bool):
            raise ValueError(f"field 'fold_case' must be true or false, got {fold_case!r}")
        if fallback not in ("bytes", "none"):
            raise ValueError(f"field 'fallback' must be 'bytes' or 'none', got {fallback!r}")
        chars = [] if d.get("chars") == [] else _string_list(d, "chars")
        return WordTokenizer(
            words,
            use_jieba=segment == "jieba",
            whitespace=whitespace,
            chars=chars,
            fallback=fallback == "bytes",
            fold_case=fold_case,
        )
    return _hf_from_dict(d, kind)


def _hf_from_dict(d: dict, kind: str) -> Tokenizer:
    """A tokenizer held by a Hugging Face `tokenizers` object (qkv's BPE, or a pretrained model's saved with
    it: byte-level BPE in any layout, SentencePiece pieces, WordPiece), read as layout.from_hf reads it."""
    from tokenizers import Tokenizer as HFTokenizer

    from qkv.core.text.tokenizers.layout import from_hf

    spec = d.get("hf_tokenizer")
    if not isinstance(spec, dict) or not isinstance(spec.get("model"), dict):
        raise ValueError("field 'hf_tokenizer' must hold a Hugging Face tokenizer")
    try:
        hf = HFTokenizer.from_str(json.dumps(spec))
    except Exception as err:  # the Rust side raises its own exception type
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"field 'hf_tokenizer' could not be read: {first_line}") from None
    tok = from_hf(hf)  # a Refusal (a ValueError) names what its layout lacks
    if tok.kind != kind:
        raise ValueError(f"field 'hf_tokenizer' holds a {tok.kind} tokenizer, but field 'kind' says {kind}")
    return tok


def load_tokenizer(path) -> Tokenizer:
    """Read a tokenizer written by ``Tokenizer.save`` (a regular file of at most TOKENIZER_LIMIT bytes)."""
    try:
        data = read_bytes(path, TOKENIZER_LIMIT, "tokenizer file")
    except FileNotFoundError:
        raise ValueError(f"cannot load tokenizer: {path} does not exist") from None
    except OSError as err:
        raise ValueError(f"cannot load tokenizer from {path}: {err}") from None
    return tokenizer_from_bytes(data, path)


def tokenizer_from_bytes(data: bytes, path) -> Tokenizer:
    """The tokenizer in `data`, the bytes of the file `path` (which the errors name)."""
    try:
        d = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ValueError(f"cannot load tokenizer from {path}: {err}") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"cannot load tokenizer from {path}: not valid JSON ({err})") from None
    try:
        return tokenizer_from_dict(d)
    except ValueError as err:
        raise ValueError(f"cannot load tokenizer from {path}: {err}") from None


__all__ = [
    "KINDS",
    "SEGMENTS",
    "FORMAT_VERSION",
    "Tokenizer",
    "CharTokenizer",
    "WordTokenizer",
    "BPETokenizer",
    "UnknownTokenError",
    "train_tokenizer",
    "tokenizer_from_dict",
    "load_tokenizer",
    "_readable",
]
