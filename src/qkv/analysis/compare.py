"""One word in two sentences: how alike its representations are, layer by layer.

    doc = compare(model, tokenizer, "我 昨天 吃了 苹果", "我 投资了 苹果", "苹果")

The word's input embedding is the same row of W_E in both sentences; every attention layer then
mixes in what the rest of the sentence says, so the two vectors drift apart. The document (kind
"compare") gives cos(x_a, x_b) of the word's residual-stream vector at each stage: the embedding,
the input of every block, and the output of the last block (lessons.representations.stages).
With several tokens in the word, its last token is read; with several occurrences, the last one.
The word is tokenized alone (and, if that is not found, after a space, as byte-level BPE spells a word
inside a sentence), without the special tokens a tokenizer adds around a text ([CLS] and
[SEP] for BERT), so "apple" is found in "i ate an apple" as in "I bought Apple shares" (MiniLM's
WordPiece lower-cases).
"""

from __future__ import annotations

import numpy as np
import torch

from .representations import stages, vectors_at
from .explain import FORMAT, VERSION
from .view import TextError, encode_text, read_text


def _cosine(a, b) -> float | None:
    """cos(a, b), or None (JSON null) when a vector is 0 and the angle has no value."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b / (na * nb)) if na > 0 and nb > 0 else None


def _last_occurrence(ids: list[int], word: list[int]) -> int | None:
    for start in range(len(ids) - len(word), -1, -1):
        if ids[start:start + len(word)] == word:
            return start + len(word) - 1
    return None


def _find(tokenizer, word: str, ids: list[int], n_ctx: int) -> int | None:
    """The position of the last token of `word`'s last occurrence in `ids`. The word is tokenized
    alone, then with a space before it: a byte-level BPE spells " apple" inside a sentence, not "apple"."""
    special = getattr(tokenizer, "special", None) or ()
    word_ids = [i for i in encode_text(tokenizer, word, n_ctx) if i not in special]
    if not word_ids:
        raise TextError(f"the word {word!r} gives no tokens but special ones: type a word")
    found = _last_occurrence(ids, word_ids)
    if found is None and not word.startswith(" "):
        try:
            spaced = [i for i in tokenizer.encode(" " + word) if i not in special]
        except ValueError:  # a tokenizer that does not know the space
            return None
        if spaced and spaced != word_ids:
            found = _last_occurrence(ids, spaced)
    return found


@torch.no_grad()
def compare(model, tokenizer, a: str, b: str, word: str) -> dict:
    n_ctx = model.cfg.n_ctx
    (a, ids_a), (b, ids_b) = read_text(tokenizer, a, n_ctx), read_text(tokenizer, b, n_ctx)
    pos = [_find(tokenizer, word, ids, n_ctx) for ids in (ids_a, ids_b)]
    for p, text in zip(pos, (a, b), strict=True):
        if p is None:
            raise TextError(f"the word {word!r} is not in the sentence {text!r}")
    was_training = model.training
    model.eval()
    try:
        # one sentence at a time: a batch would pad the shorter one, which a non-causal model sees
        vec_a, vec_b = vectors_at(model, [ids_a], pos[:1]), vectors_at(model, [ids_b], pos[1:])
    finally:
        model.train(was_training)
    side = lambda ids, p: {"tokens": [tokenizer.display(i) for i in ids], "pos": p}  # noqa: E731
    return {"format": FORMAT, "version": VERSION, "kind": "compare", "word": word,
            "a": side(ids_a, pos[0]), "b": side(ids_b, pos[1]),
            "stages": [{"label": label, "name": name, "cosine": _cosine(vec_a[name][0], vec_b[name][0])}
                       for label, name in stages(model.cfg)]}
