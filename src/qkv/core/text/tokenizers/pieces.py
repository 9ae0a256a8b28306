"""SentencePiece's pieces, as transformers converts a Llama 2 or Mistral tokenizer into tokenizer.json.

A piece is text with ▁ where a space was ("▁the"), or, for a character the vocabulary lacks, one
of its UTF-8 bytes written <0xE5> (byte fallback). The text gets a ▁ in front before it is split,
so the first word is "▁Hello" like every other; decoding takes that space off again. Encoding is
the `tokenizers` object's own (its normalizer, pre-tokenizer and post-processor: BOS as transformers
adds it); each token's bytes come from its piece.
"""

from __future__ import annotations

import re

from qkv.core.text.tokenizers.base import HFBacked

SPACE = "▁"  # U+2581, SentencePiece's mark of a space
_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


class PieceTokenizer(HFBacked):
    """A SentencePiece vocabulary in a Hugging Face ``tokenizers`` object (tokenizer.json)."""

    kind = "pieces"
    prefix_space = True  # whether encoding put a ▁ in front of the text (Gemma's GGUF vocabulary: no)

    def __init__(self, hf_tokenizer):
        pieces = []
        for i in range(hf_tokenizer.get_vocab_size()):
            piece = hf_tokenizer.id_to_token(i)
            if piece is None:
                raise ValueError(f"token {i} has no piece (the ids have a gap)")
            byte = _BYTE.fullmatch(piece)
            pieces.append(bytes([int(byte.group(1), 16)]) if byte else piece.replace(SPACE, " ").encode("utf-8"))
        if not any(SPACE in hf_tokenizer.id_to_token(i) for i in range(len(pieces))):
            raise ValueError(f"no piece holds {SPACE} (U+2581): not a SentencePiece vocabulary")
        super().__init__(hf_tokenizer, pieces)

    def decode(self, ids, prev: int | None = None) -> str:
        """The text of `ids`, without the space SentencePiece put in front of the first word (when
        `prev` is None: the text starts here)."""
        text = super().decode(ids, prev)
        return text[1:] if self.prefix_space and prev is None and text.startswith(" ") else text
