"""Spelled training text: how the fallback tokens of a word tokenizer get trained.

A word tokenizer with a fallback (``WordTokenizer(fallback=True)``) reads an unknown piece as
characters or UTF-8 bytes, but its training text is all known words, so `encode` alone would never
show the model a character or byte token: their embeddings would stay the random vectors they
started as. `Spelled` is the same tokenizer (same vocabulary, same file) whose `encode` spells a
small, seeded fraction of the words as their characters, and a smaller fraction of the single
characters (words of one character included) as their UTF-8 bytes — subword regularisation, as
BPE dropout does for BPE:

    苹果 -> 苹 果          (each word with probability `char_rate`)
    果   -> <0xE6> <0x9E> <0x9C>   (each single-character token with probability `byte_rate`)

The draw depends only on `seed` and the text, so the same call always gives the same ids. Give a
`Spelled` to `qkv.train(..., tokenizer=...)`: the checkpoint saves the plain tokenizer (`to_dict`
is the wrapped one's), which encodes without spelling. Spelling only lengthens the text, and the
validation part of it is spelled as well, so its loss is measured on the same mixture.
"""

from __future__ import annotations

import random

from qkv.core.text.tokenizers.words import WordTokenizer

CHAR_RATE = 0.05
BYTE_RATE = 0.02


class Spelled(WordTokenizer):
    """`tok` (a word tokenizer with a fallback) whose encode spells some words for training."""

    def __init__(self, tok: WordTokenizer, char_rate: float = CHAR_RATE, byte_rate: float = BYTE_RATE, seed: int = 0):
        if not isinstance(tok, WordTokenizer) or not tok.fallback:
            raise ValueError("only a word tokenizer with a fallback can spell words as characters and bytes")
        for name, rate in (("char_rate", char_rate), ("byte_rate", byte_rate)):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {rate}")
        d = tok.to_dict()
        super().__init__(d["words"], tok.use_jieba, tok.whitespace, d["chars"], True, tok.fold_case)
        self.char_rate, self.byte_rate, self.seed = char_rate, byte_rate, seed

    def encode(self, text: str) -> list[int]:
        rng = random.Random(f"qkv-spell:{self.seed}")
        out: list[int] = []
        for i in super().encode(text):
            token = self.tokens[i]
            if i < self.n_words and len(token) > 1 and rng.random() < self.char_rate:
                spelled = [self.ids[c] for c in token if c in self.ids]
                if len(spelled) == len(token):  # every character of the training text is a token
                    out.extend(self._maybe_bytes(spelled, rng))
                    continue
            out.extend(self._maybe_bytes([i], rng))
        return out

    def _maybe_bytes(self, ids: list[int], rng: random.Random) -> list[int]:
        out: list[int] = []
        for i in ids:
            token = self.tokens[i]
            if i < self.byte_base and len(token) == 1 and not token.isspace() and rng.random() < self.byte_rate:
                out.extend(self.byte_base + b for b in token.encode("utf-8"))
            else:
                out.append(i)
        return out


__all__ = ["Spelled", "CHAR_RATE", "BYTE_RATE"]
