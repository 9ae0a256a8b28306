"""Byte-level BPE as in GPT-2, trained with Hugging Face `tokenizers`: any string can be encoded
when every one of the 256 bytes is a token, as in the vocabularies qkv trains. A pretrained vocabulary
may lack a few (SmolLM2's lacks 21: the bytes UTF-8 never uses, some control characters); a text
that needs one of those cannot be spelled, and `missing_bytes` says which they are."""

from __future__ import annotations

from qkv.core.text.tokenizers.base import HFBacked

MAX_BPE_VOCAB = 10_000_000  # as many as a model's d_vocab may have


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


class BPETokenizer(HFBacked):
    """Byte-level BPE (as in GPT-2) backed by a Hugging Face ``tokenizers`` object.

    Text is turned into UTF-8 bytes, and frequent pairs of tokens are merged
    into new tokens during training. A token may hold part of a character.
    """

    kind = "bpe"

    def __init__(self, hf_tokenizer):
        added = {i: t.content for i, t in hf_tokenizer.get_added_tokens_decoder().items()}
        pieces = []
        for i in range(hf_tokenizer.get_vocab_size()):
            token = hf_tokenizer.id_to_token(i)
            if i in added:  # <|im_start|>, <｜end▁of▁sentence｜>: matched in the raw text, decoded as written
                pieces.append(added[i].encode("utf-8"))
            elif token is None or any(c not in _CHAR_TO_BYTE for c in token):
                raise ValueError(f"BPE token {i} ({token!r}) is not a byte-level token")
            else:
                pieces.append(bytes(_CHAR_TO_BYTE[c] for c in token))
        singles = {b[0] for i, b in enumerate(pieces) if len(b) == 1 and i not in added}
        self.missing_bytes = bytes(b for b in range(256) if b not in singles)  # a text needing one: not spelled
        super().__init__(hf_tokenizer, pieces)

    def _spells(self, c: str) -> bool:
        """A character is spelled when each of its UTF-8 bytes is a token (merges only join tokens)."""
        return not any(b in self.missing_bytes for b in c.encode("utf-8"))

    @classmethod
    def train(cls, text: str, vocab_size: int | None = None) -> BPETokenizer:
        return cls.train_from([text], vocab_size)

    @classmethod
    def train_from(cls, texts, vocab_size: int | None = None) -> BPETokenizer:
        """Trained on the texts `texts` yields, one after the other (a corpus streamed in chunks: the
        trainer keeps the count of each pre-tokenized word, not the text)."""
        from tokenizers import Tokenizer as HFTokenizer
        from tokenizers import decoders, models, pre_tokenizers, trainers

        hf = HFTokenizer(models.BPE())
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        hf.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size or 512,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # all 256 bytes
            show_progress=False,
            special_tokens=[],
        )
        hf.train_from_iterator(texts, trainer=trainer)
        return cls(hf)
