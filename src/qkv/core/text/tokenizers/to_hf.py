"""Write a qkv tokenizer as a Hugging Face `tokenizers.Tokenizer` that encodes and decodes the same.

    hf = to_hf_tokenizer(tokenizer)      # hf.encode(s).ids == tokenizer.encode(s);
                                         # hf.decode(ids) == tokenizer.decode(ids)

How each kind is expressed:

* ``bpe``: qkv's BPE already is a `tokenizers` object (byte-level BPE, as GPT-2's); it is copied.
* ``char``: a word-level model whose words are the characters; a pre-tokenizer cuts the text into
  single code points (as Python's ``list(text)`` does) and the decoder glues them back.
* ``word`` with whitespace tokens: the same pre-tokenizer as qkv's regex ``\\s+|\\w+|[^\\w\\s]``,
  with Python's own ``\\w`` and ``\\s`` written out as explicit code-point ranges (Oniguruma, the
  regex engine of `tokenizers`, classifies some characters differently: marks, ``²``, ``Ⅻ``, ``‿``).
  The ranges are those of the Unicode version of the Python that exports.
* ``word`` without whitespace tokens: a normalizer first deletes the spaces and tabs before each
  line break (so the line breaks of a whitespace run come together, one token, as in qkv), the
  pre-tokenizer then drops the spaces left; the decoder puts one space between two tokens unless
  one of them is whitespace (qkv's ``separator``).
* ``word`` with ``fold_case``: a normalizer first turns each ASCII capital into its lowercase letter.
* ``word`` with a fallback (characters and UTF-8 bytes under the words): refused. Its most probable
  cut into known words (bestpath.py) with byte tokens after it is no `tokenizers` model (Unigram
  finds such a path but has no byte fallback; BPE has a byte fallback but merges by rank).
* ``word`` with jieba: refused. jieba cuts Chinese with a dictionary of its own and a best path
  through it; no `tokenizers` model computes that, so the result could not be exact.

Text the vocabulary does not cover: qkv's char and word tokenizers raise ``UnknownTokenError``
naming what is missing. The exported tokenizer has no unknown token either (a Hugging Face
tokenizer would map such text to it silently), so it refuses too, but with the error of
`tokenizers` ("WordLevel error: Missing [UNK] token from the vocabulary"), which names nothing.
BPE covers every byte, so neither ever refuses.
"""

from __future__ import annotations

from functools import cache

from qkv.core.text.tokenizers.base import Tokenizer
from qkv.core.text.tokenizers.bpe import BPETokenizer
from qkv.core.text.tokenizers.words import CharTokenizer, WordTokenizer

LINE_BREAKS = "\r\n"  # what a whitespace=False word tokenizer keeps of a whitespace run


def to_hf_tokenizer(tok: Tokenizer):
    """A `tokenizers.Tokenizer` with the same ids and the same decoded text as `tok`.

    Raises a one-line ValueError for a tokenizer that cannot be expressed exactly."""
    from tokenizers import Tokenizer as HFTokenizer

    if isinstance(tok, BPETokenizer):
        return HFTokenizer.from_str(tok.hf.to_str())  # a copy: the export must not share state
    if isinstance(tok, CharTokenizer):
        return _word_level(tok.tokens, _any_char(), [], _glue())
    if isinstance(tok, WordTokenizer):
        if tok.use_jieba:
            raise ValueError(
                "this word tokenizer cuts Chinese with jieba, which Hugging Face tokenizers cannot "
                "express (no tokenizers model segments with jieba's dictionary); retrain with "
                "segment='none' or a bpe or char tokenizer to export"
            )
        if tok.fallback:
            raise ValueError(
                "this word tokenizer reads unknown text as known words, characters and UTF-8 bytes "
                "(fallback), which no Hugging Face tokenizers model computes exactly (the most probable "
                "split into known words, then byte tokens); retrain without the fallback, or with a bpe tokenizer, "
                "to export"
            )
        fold = _fold_case() if tok.fold_case else []
        if tok.whitespace:
            return _word_level(tok.tokens, _words(), fold, _glue())
        _check_spaceless(tok.tokens)
        return _word_level(tok.tokens, _spaceless_words(), [*fold, *_drop_spaces()], _spaced(tok.tokens))
    raise ValueError(
        f"a {getattr(tok, 'kind', type(tok).__name__) or type(tok).__name__} tokenizer cannot be "
        "written as a Hugging Face tokenizer (char, word and bpe can)"
    )


def _word_level(tokens: list[str], pre, normalizers: list, decoder):
    """A tokenizer that looks every piece of the pre-tokenizer up in `tokens` (id = position)."""
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import models
    from tokenizers import normalizers as hf_normalizers

    vocab = {t: i for i, t in enumerate(tokens)}
    unk = "<unk>"
    while unk in vocab:  # no unknown token: an unknown piece is an error, as in qkv
        unk = "<" + unk + ">"
    hf = HFTokenizer(models.WordLevel(vocab=vocab, unk_token=unk))
    if normalizers:
        hf.normalizer = hf_normalizers.Sequence(normalizers)
    hf.pre_tokenizer = pre
    hf.decoder = decoder
    return hf


# --- pre-tokenizers ------------------------------------------------------------------------------


def _any_char():
    """One piece per code point: Python's list(text)."""
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")


def _words():
    """qkv's `\\s+|\\w+|[^\\w\\s]`, with Python's classes."""
    from tokenizers import Regex, pre_tokenizers

    w, s = _python_class("w"), _python_class("s")
    pattern = f"[{s}]+|[{w}]+|[^{w}{s}]"
    return pre_tokenizers.Split(Regex(pattern), behavior="isolated")


def _spaceless_words():
    """_words, after dropping the spaces (all whitespace but line breaks) that _drop_spaces left."""
    from tokenizers import Regex, pre_tokenizers

    spaces = _python_class("s", without=LINE_BREAKS)
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(f"[{spaces}]+"), behavior="removed"), _words()])


def _drop_spaces() -> list:
    """A normalizer: delete the spaces (and tabs, ...) right before a line break.

    Then a whitespace run that holds line breaks is its line breaks, together, followed by spaces
    (those after its last line break), which `_spaceless_words` drops, with the runs that hold no
    line break: what qkv's `_split_words` keeps of a run.
    """
    from tokenizers import Regex, normalizers

    spaces, breaks = _python_class("s", without=LINE_BREAKS), _class(LINE_BREAKS)
    return [normalizers.Replace(Regex(f"[{spaces}]+(?=[{breaks}])"), "")]


def _fold_case() -> list:
    """A normalizer per ASCII capital, to its lowercase letter (qkv's fold_case; `Lowercase` would
    also lower every other script)."""
    from tokenizers import normalizers

    return [normalizers.Replace(c, c.lower()) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]


def _check_spaceless(tokens: list[str]) -> None:
    """The spaced decoder below needs every token to be all whitespace or to have none at its ends,
    and no token to hold a space: true of every tokenizer qkv trains (pieces are words,
    punctuation marks or line breaks), possibly not of a hand-written file."""
    for t in tokens:
        if " " in t or (not t.isspace() and (t[0].isspace() or t[-1].isspace())):
            raise ValueError(
                f"the word token {t!r} mixes spaces and other characters; a word tokenizer without "
                "whitespace tokens that holds it cannot be written exactly as a Hugging Face tokenizer"
            )


# --- decoders ------------------------------------------------------------------------------------


def _glue():
    """Decode by concatenating the tokens (without a decoder, tokenizers would join them with spaces)."""
    from tokenizers import decoders

    return decoders.Fuse()


def _spaced(tokens: list[str]):
    """qkv's separator: one space between two tokens unless one of them is whitespace.

    The WordPiece decoder puts a space before every token but the first (its prefix is a character
    no token starts with, so it never glues); the tokens are fused into one string, in which every
    space is such a separator (no token holds one: _check_spaceless); a separator next to a
    whitespace character touches a whitespace token, and is deleted.
    """
    from tokenizers import Regex, decoders

    starts = {t[0] for t in tokens}
    prefix = next(chr(c) for c in range(0xE000, 0x110000) if chr(c) not in starts)
    ws = _python_class("s", without=" ")
    return decoders.Sequence(
        [
            decoders.WordPiece(prefix=prefix, cleanup=False),
            decoders.Fuse(),
            decoders.Replace(Regex(f" (?=[{ws}])|(?<=[{ws}]) "), ""),
        ]
    )


# --- Python's character classes, written out ------------------------------------------------------


@cache
def _python_class(name: str, without: str = "") -> str:
    r"""The inside of a bracket expression matching what Python's `\w` ("w") or `\s` ("s") matches
    in str patterns (`\w`: str.isalnum() or "_"; `\s`: str.isspace()), less the characters `without`."""
    test = (lambda c: c.isalnum() or c == "_") if name == "w" else str.isspace
    ranges, start = [], None
    for cp in range(0x110001):
        inside = cp <= 0x10FFFF and chr(cp) not in without and test(chr(cp))
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            ranges.append((start, cp - 1))
            start = None
    return "".join(_range(a, b) for a, b in ranges)


def _class(chars: str) -> str:
    return "".join(_range(ord(c), ord(c)) for c in chars)


def _range(a: int, b: int) -> str:
    return f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}"


__all__ = ["to_hf_tokenizer"]
