"""What every tokenizer is: a fixed vocabulary of tokens, each with an id, and the bytes of each token.

`decode` joins the tokens' bytes (with what `separator` puts between two of them), so generated
text can be streamed one token at a time; `display` shows a token readably (␣ for spaces, \\n, <e4 bd>
for bytes that are not whole UTF-8 characters).
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from qkv.core.io.files import TOKENIZER_LIMIT, check_regular, read_bytes
from qkv.core.io.refusal import Phrase, Refusal, phrase

FORMAT_VERSION = 1
MAX_LISTED = 10
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


class UnknownTokenError(Refusal):
    """Raised by ``encode`` when the text holds symbols the vocabulary lacks."""


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
        Path(path).write_text(text + "\n", encoding="utf-8")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size})"


class HFBacked(Tokenizer):
    """A vocabulary held by a Hugging Face ``tokenizers`` object: encoding is the object's own (its
    normalizer, pre-tokenizer and post-processor), and each token's bytes are given by the subclass,
    which reads them off its pieces (byte-level BPE's characters, SentencePiece's ▁ and <0xE5>)."""

    def __init__(self, hf_tokenizer, token_bytes: list[bytes]):
        self.hf = hf_tokenizer
        self._bytes = token_bytes
        # its special tokens (<s>, <|begin_of_text|>, <|endoftext|>): the analyses look past them, as past [CLS]
        self.special = {i for i, t in hf_tokenizer.get_added_tokens_decoder().items() if t.special}

    @property
    def vocab_size(self) -> int:
        return len(self._bytes)

    def encode(self, text: str) -> list[int]:
        return self.hf.encode(text).ids

    def token_bytes(self, id: int) -> bytes:
        return b"" if self.is_padding(id) else self._bytes[self._check_id(id)]

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
