"""What every tokenizer is: a fixed vocabulary of tokens, each with an id, and the bytes of each token.

`decode` joins the tokens' bytes (with what `separator` puts between two of them), so generated
text can be streamed one token at a time; `display` shows a token readably (␣ for the spaces it starts
with, \\n, <e4 bd> for bytes that are not whole UTF-8 characters).
"""

from __future__ import annotations

import json
import re
import unicodedata

from qkv.core.io.files import TOKENIZER_LIMIT, check_regular, read_bytes, write_text
from qkv.core.io.refusal import Phrase, Refusal, phrase
from qkv.core.text.tokenizers.safety import Bound, encode, settle, shielded

FORMAT_VERSION = 1
MAX_LISTED = 10
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


class UnknownTokenError(Refusal):
    """Raised by ``encode`` when the text holds symbols the vocabulary lacks."""


class UnspellableError(UnknownTokenError):
    """Raised by ``encode_exact`` when the vocabulary cannot spell some characters of the text."""


def shown_chars(chars: list[str]) -> str:
    """The first MAX_LISTED characters, each written visibly ('\\x07', '🙂', U+0378), then "…" if more."""
    shown = [f"{c!r} (U+{ord(c):04X})" for c in chars[:MAX_LISTED]]
    return ", ".join(shown) + (", …" if len(chars) > MAX_LISTED else "")


def unknown_error(listed: list, n: int, noun: str) -> UnknownTokenError:
    """ "3 words are not in the tokenizer's vocabulary: 'a', 'b', 'c'": the first MAX_LISTED of `listed`
    (each a repr or a phrase), then how many more; `noun` is "token", "character" or "word"."""
    shown: list | Phrase = listed[:MAX_LISTED]
    if n > MAX_LISTED:
        shown = phrase("errors.and_more", items=shown, n=n - MAX_LISTED)
    said = phrase(f"errors.noun_{noun}{'' if n == 1 else 's'}")
    return UnknownTokenError.of("errors.unknown_one" if n == 1 else "errors.unknown_many", n=n, noun=said, listed=shown)


def _unknown_error(things: list[str], noun: str) -> UnknownTokenError:
    return unknown_error([repr(t) for t in things], len(things), noun)


def _readable(data: bytes) -> str:
    """Show bytes as text; bytes that are not valid UTF-8 become ``<e4 bd>``, and the spaces a token
    starts with ␣ (" Mary" -> "␣Mary": a byte-level token that starts a word carries its space)."""
    rest = data.lstrip(b" ")
    out, pending = ["␣" * (len(data) - len(rest))], b""  # pending: invalid bytes not yet written
    data = rest
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


def read_tokenizer_file(path, read, also=()):
    """read() a tokenizer file with Hugging Face `tokenizers`, which opens `path` (and the files `also`)
    by name: each is checked first to be a regular file of at most TOKENIZER_LIMIT bytes, since a FIFO
    there would hang the read and /dev/zero never end it. Its errors become one line naming the file."""
    for p in (path, *also):
        check_regular(p, TOKENIZER_LIMIT, "tokenizer file")
    return _one_line(path, read)


def read_tokenizer_json(path):
    """A Hugging Face tokenizer.json as a `tokenizers` Tokenizer: its bytes read by files.read_bytes
    (a regular file, bounded), then parsed from the string."""
    from tokenizers import Tokenizer as HFTokenizer

    data = read_bytes(path, TOKENIZER_LIMIT, "tokenizer file")
    return _one_line(path, lambda: HFTokenizer.from_str(data.decode("utf-8")))


def _one_line(path, read):
    try:
        return read()
    except Exception as e:  # the Rust side raises its own exception type
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"{path} is not a valid tokenizer file: {first}") from None


class Tokenizer:
    """Base class: a fixed vocabulary of tokens, each with an integer id."""

    kind: str = ""
    spaces_in_tokens = False  # whether a word in running text is one token with its space (byte-level BPE)
    # a pretrained model's embedding may have more rows than its tokenizer has tokens (Qwen2.5: 151,936
    # for 151,665), rounded up for speed: ids vocab_size .. padded_size-1 are such rows, no text at all
    padded_size: int = 0
    # a chat model's template (core/text/chat.py) and the special tokens it may name; None: not a chat model
    chat_template: str | None = None
    chat_tokens: dict[str, str] | None = None

    @property
    def vocab_size(self) -> int:
        raise NotImplementedError

    def is_padding(self, id) -> bool:
        """Whether id is one of the model's rows beyond the vocabulary (see padded_size)."""
        return self.vocab_size <= int(id) < self.padded_size

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError

    def token_bytes(self, id: int) -> bytes:
        raise NotImplementedError

    def unspellable(self, text: str) -> list[str]:
        """The characters of `text` that this vocabulary cannot spell (each once, in text order): the ones
        `encode` would drop or read as an unknown token. [] for qkv's own tokenizers, whose encode
        refuses what they cannot read (naming it) or reads it as bytes."""
        return []

    def encode_exact(self, text: str) -> list[int]:
        """encode(text), refused (naming the characters) when the vocabulary cannot spell all of it:
        for the places where the exact ids matter (a word typed as a token)."""
        missing = self.unspellable(text)
        if missing:
            raise UnspellableError.of("tokenizer.unspellable", n=len(missing), chars=shown_chars(missing))
        return self.encode(text)

    def to_dict(self) -> dict:
        raise NotImplementedError

    def _check_id(self, id) -> int:
        i = int(id)
        if not 0 <= i < self.vocab_size:
            raise Refusal.of("errors.token_id_range", id=i, n=self.vocab_size)
        return i

    def separator(self, prev: int | None, id: int) -> bytes:
        """What goes between token `prev` (None at the start) and token `id` in decoded text."""
        return b""

    def decode(self, ids, prev: int | None = None) -> str:
        """The text of `ids`; `prev` is the token that comes before them, if any (a continuation then
        starts with what separates it from that token, so prompt + continuation reads right)."""
        # Bytes that do not form valid UTF-8 (only possible when BPE ids are
        # not produced by encode, e.g. sampled by a model) become U+FFFD.
        ids = list(ids)
        pieces = (self.separator(p, i) + self.token_bytes(i) for p, i in zip([prev, *ids], ids))
        return b"".join(pieces).decode("utf-8", errors="replace")

    def display(self, id: int) -> str:
        return f"<unused {int(id)}>" if self.is_padding(id) else _readable(self.token_bytes(id))

    def save(self, path) -> None:
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=1)
        write_text(path, text + "\n")  # whole or not at all (core/io/files.replacing)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size})"


class HFBacked(Tokenizer):
    """A vocabulary held by a Hugging Face ``tokenizers`` object: encoding is the object's own (its
    normalizer, pre-tokenizer and post-processor), and each token's bytes are given by the subclass,
    which reads them off its pieces (byte-level BPE's characters, SentencePiece's ▁ and <0xE5>).

    Some layouts put a space in front of the text before they split it (SentencePiece's Prepend("▁"),
    Metaspace, ByteLevel(add_prefix_space=True)), so "Hello" is read as " Hello"; some do so again
    after each added token in the text. `prefix_space` and `space_after_added` say so (found by
    encoding a probe), and `decode` takes that space off again there, so decode(encode(s)) == s
    (leaving out the tokens the post-processor adds, such as BOS) for every text the vocabulary can
    spell that does not itself start with a space where one is put (" Hello" reads as "Hello" did).
    A character the vocabulary cannot spell is dropped by `tokenizers` (or becomes its unknown
    token): `unspellable` names such characters before they are lost."""

    spaces_in_tokens = True  # a word in running text is one token with its space: " Mary", "▁Mary"
    bound: Bound

    def __init__(self, hf_tokenizer, token_bytes: list[bytes]):
        self.bound = settle(hf_tokenizer)  # its padding and truncation off, what it may not do refused (safety.py)
        self.hf = hf_tokenizer
        self._bytes = token_bytes
        added = hf_tokenizer.get_added_tokens_decoder()
        # its special tokens (<s>, <|begin_of_text|>, <|endoftext|>): the analyses look past them, as past [CLS]
        self.special = {i for i, t in added.items() if t.special}
        self.added = {i for i in added if 0 <= i < len(token_bytes)}
        texts = sorted({t.content for t in added.values() if t.content}, key=len, reverse=True)  # longest first
        self._added_re = re.compile("|".join(map(re.escape, texts))) if texts else None
        self.prefix_space = self._puts_space("")
        self.space_after_added = bool(texts) and self._puts_space(texts[-1])

    def _puts_space(self, before: str) -> bool:
        """Whether the text after `before` (an added token, or nothing) is read with a space put in front."""
        ids = self.encode_plain(before + "a")
        ids = ids[1:] if before else ids  # the added token is one id
        return b"".join(self._bytes[i] for i in ids if 0 <= i < len(self._bytes)).startswith(b" ")

    @property
    def vocab_size(self) -> int:
        return len(self._bytes)

    def encode(self, text: str) -> list[int]:
        return encode(self.hf, text, self.bound)

    def encode_plain(self, text: str) -> list[int]:
        """The ids of `text` without the tokens the post-processor adds (BOS), added tokens matched first."""
        return encode(self.hf, text, self.bound, add_special_tokens=False)

    def token_bytes(self, id: int) -> bytes:
        return b"" if self.is_padding(id) else self._bytes[self._check_id(id)]

    def decode(self, ids, prev: int | None = None) -> str:
        """The text of `ids` (see the class docstring: the space the layout put in front of the text,
        and after an added token, is taken off; the text starts where `prev` is None, after any
        special tokens such as BOS)."""
        ids = list(ids)
        if not (self.prefix_space or self.space_after_added):
            return super().decode(ids, prev)
        parts, start = [], prev is None
        for p, i in zip([prev, *ids], ids):
            data = self.token_bytes(i)
            if start and int(i) in self.special:
                parts.append(data)
                continue
            after_added = p is not None and int(p) in self.added and self.space_after_added
            if data.startswith(b" ") and ((start and self.prefix_space) or after_added):
                data = data[1:]
            parts.append(data)
            start = False
        return b"".join(parts).decode("utf-8", errors="replace")

    def unspellable(self, text: str) -> list[str]:
        """The characters of `text` this vocabulary cannot spell, each once, in the order they come,
        as its normalizer writes them (NFC: "e" + U+0301 is "é"); added tokens in the text, such as
        <|im_start|>, are read whole and not looked into."""
        pieces = self._added_re.split(text) if self._added_re is not None else [text]
        normalizer = self.hf.normalizer
        seen: dict[str, bool] = {}
        for piece in pieces:
            for c in shielded(normalizer.normalize_str, piece) if normalizer is not None and piece else piece:
                if c not in seen:
                    seen[c] = self._spells(c)
        return [c for c, spelled in seen.items() if not spelled]

    def _spells(self, c: str) -> bool:
        """Whether the vocabulary spells the (normalized) character c."""
        raise NotImplementedError

    def to_dict(self) -> dict:
        return {"kind": self.kind, "version": FORMAT_VERSION, "hf_tokenizer": json.loads(self.hf.to_str())}


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
