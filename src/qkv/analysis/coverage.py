"""How a tokenizer reads a set of texts: how many of its tokens are words, characters read one by
one (their word is not in the vocabulary), or UTF-8 bytes (not even the character is).

    reading(tokenizer, ["小明说：“我吃了苹果！”"])   # {"tokens": 9, "kinds": {"word": 9, ...}, ...}

A model reads a byte token as a third of a character, so the byte share says how much of what a
learner types the model sees only in pieces; the character share, how much it reads without the
word it belongs to. `unknown` lists the characters that became bytes, most frequent first.
"""

from __future__ import annotations

from collections import Counter

from qkv.analysis.vocab import KINDS, token_kind


def reading(tokenizer, texts) -> dict:
    """The tokens of `texts` by kind (vocab.KINDS), their shares, and the characters read as bytes."""
    kinds: Counter[str] = Counter()
    as_bytes: Counter[str] = Counter()
    n_chars = 0
    for text in texts:
        n_chars += len(text)
        ids = tokenizer.encode(text)
        kind = [token_kind(tokenizer, i) for i in ids]
        kinds.update(kind)
        run = b""  # the bytes of consecutive byte tokens: the characters they spell
        for i, k in zip([*ids, None], [*kind, None]):
            if k == "byte":
                run += tokenizer.token_bytes(i)
                continue
            as_bytes.update(run.decode("utf-8", "replace"))
            run = b""
    total = sum(kinds.values())
    return {
        "texts": len(texts),
        "characters": n_chars,
        "tokens": total,
        "kinds": {k: kinds[k] for k in KINDS},
        "shares": {k: kinds[k] / total if total else 0.0 for k in KINDS},
        "unknown": [[c, n] for c, n in as_bytes.most_common()],
    }


__all__ = ["reading"]
