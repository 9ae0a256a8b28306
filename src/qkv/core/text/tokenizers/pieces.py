"""SentencePiece's pieces, as transformers converts a Llama 2 or Mistral tokenizer into tokenizer.json.

A piece is text with ▁ where a space was ("▁the"), or, for a character the vocabulary lacks, one
of its UTF-8 bytes written <0xE5> (byte fallback). The text gets a ▁ in front before it is split,
so the first word is "▁Hello" like every other (in Llama 2's layout; Gemma's puts none); decoding takes
that space off again where it was put (HFBacked.decode). Encoding is
the `tokenizers` object's own (its normalizer, pre-tokenizer and post-processor: BOS as transformers
adds it); each token's bytes come from its piece.
"""

from __future__ import annotations

import json
import re

from qkv.core.text.tokenizers.base import HFBacked

SPACE = "▁"  # U+2581, SentencePiece's mark of a space
_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def byte_fallback(hf) -> bool:
    """Whether the model of `tokenizers` object `hf` writes a character it lacks as its bytes' <0x..> pieces."""
    found = getattr(hf.model, "byte_fallback", None)
    if found is None:  # Unigram keeps it only in its state
        found = json.loads(hf.model.__getstate__()).get("byte_fallback")
    return bool(found)


class PieceTokenizer(HFBacked):
    """A SentencePiece vocabulary in a Hugging Face ``tokenizers`` object (tokenizer.json)."""

    kind = "pieces"

    def __init__(self, hf_tokenizer):
        added = {i: t.content for i, t in hf_tokenizer.get_added_tokens_decoder().items()}
        pieces = []
        for i in range(hf_tokenizer.get_vocab_size()):
            piece = hf_tokenizer.id_to_token(i)
            if piece is None:
                raise ValueError(f"token {i} has no piece (the ids have a gap)")
            byte = _BYTE.fullmatch(piece)
            if i in added:  # <start_of_turn>, <｜end▁of▁sentence｜>: decoded as written
                pieces.append(added[i].encode("utf-8"))
            else:
                pieces.append(bytes([int(byte.group(1), 16)]) if byte else piece.replace(SPACE, " ").encode("utf-8"))
        if not any(SPACE in hf_tokenizer.id_to_token(i) for i in range(len(pieces))):
            raise ValueError(f"no piece holds {SPACE} (U+2581): not a SentencePiece vocabulary")
        found = byte_fallback(hf_tokenizer) and hf_tokenizer.get_vocab()
        self._byte_ids = {b for b in range(256) if f"<0x{b:02X}>" in found} if found else set()
        super().__init__(hf_tokenizer, pieces)

    def _spells(self, c: str) -> bool:
        """A character is spelled when it is a piece (a space is ▁), or, with byte fallback, when each of
        its UTF-8 bytes has its <0x..> piece; otherwise it is the unknown token, or dropped."""
        piece = SPACE if c == " " else c
        if self.hf.token_to_id(piece) is not None and self.hf.token_to_id(piece) not in self.added:
            return True
        return bool(self._byte_ids) and all(b in self._byte_ids for b in c.encode("utf-8"))
