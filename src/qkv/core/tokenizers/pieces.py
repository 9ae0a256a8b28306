"""SentencePiece's pieces, as transformers converts a Llama 2 or Mistral tokenizer into tokenizer.json.

A piece is text with ▁ where a space was ("▁the"), or, for a character the vocabulary lacks, one
of its UTF-8 bytes written <0xE5> (byte fallback). The text gets a ▁ in front before it is split,
so the first word is "▁Hello" like every other; decoding takes that space off again. Encoding is
the `tokenizers` object's own (its normalizer, pre-tokenizer and post-processor: BOS as transformers
adds it); each token's bytes come from its piece.
"""

from __future__ import annotations

import json
import re

from .base import FORMAT_VERSION, Tokenizer

SPACE = "▁"  # U+2581, SentencePiece's mark of a space
_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


class PieceTokenizer(Tokenizer):
    """A SentencePiece vocabulary in a Hugging Face ``tokenizers`` object (tokenizer.json)."""

    kind = "pieces"

    def __init__(self, hf_tokenizer):
        self.hf = hf_tokenizer
        self._bytes = []
        for i in range(hf_tokenizer.get_vocab_size()):
            piece = hf_tokenizer.id_to_token(i)
            if piece is None:
                raise ValueError(f"token {i} has no piece (the ids have a gap)")
            byte = _BYTE.fullmatch(piece)
            self._bytes.append(bytes([int(byte.group(1), 16)]) if byte else piece.replace(SPACE, " ").encode("utf-8"))
        if not any(SPACE in hf_tokenizer.id_to_token(i) for i in range(min(hf_tokenizer.get_vocab_size(), 5000))):
            raise ValueError(f"no piece holds {SPACE} (U+2581): not a SentencePiece vocabulary")

    @property
    def vocab_size(self) -> int:
        return len(self._bytes)

    def encode(self, text: str) -> list[int]:
        return self.hf.encode(text).ids

    def token_bytes(self, id: int) -> bytes:
        return b"" if self.is_padding(id) else self._bytes[self._check_id(id)]

    def decode(self, ids, prev: int | None = None) -> str:
        """The text of `ids`, without the space SentencePiece put in front of the first word (when
        `prev` is None: the text starts here)."""
        text = super().decode(ids, prev)
        return text[1:] if prev is None and text.startswith(" ") else text

    def to_dict(self) -> dict:
        return {"kind": self.kind, "version": FORMAT_VERSION, "hf_tokenizer": json.loads(self.hf.to_str())}
