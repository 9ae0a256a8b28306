"""One word in two sentences: how alike its representations are, layer by layer.

    doc = compare(model, tokenizer, "我 昨天 吃了 苹果", "我 投资了 苹果", "苹果")

The word's input embedding is the same row of W_E in both sentences; every attention layer then
mixes in what the rest of the sentence says, so the two vectors can drift apart. The document (kind
"compare") gives cos(x_a, x_b) of the word's residual-stream vector at each stage: the embedding,
the input of every block, and the output of the last block (lessons.representations.stages).
With several tokens in the word, its last token is read; with several occurrences, the last one.
The word is tokenized alone (and, if that is not found, after a space, as byte-level BPE spells a word
inside a sentence), without the special tokens a tokenizer adds around a text ([CLS] and
[SEP] for BERT), so "apple" is found in "i ate an apple" as in "I bought Apple shares" (MiniLM's
WordPiece lower-cases).

Position is a confound, and the document controls for it. A word at position 6 in one sentence and
at position 4 in the other carries two different position vectors from "L0 in" on, and every
vector of a stage shares one large direction, so the raw cosine mixes "same word, same sense" with
"same position" and "any two vectors of this stage". Each stage therefore has two numbers:

    cosine      cos(x_a, x_b), the raw cosine of the two vectors as the model holds them
    cosine_pos  cos(x_a - mu_s(p_a), x_b - mu_s(p_b)): from each vector the mean vector of its stage
                at its own position over many reference sentences (qkv.analysis.position_mean) is
                subtracted first, so what every sentence has at that position (the position vector,
                the shared direction) cancels, and what is left is what this word in this sentence adds

"same_position" says whether p_a == p_b (then the position vectors are equal, and only the shared
direction differs between the two numbers), and "control" how the means were made (null, with
"why", when no reference sentence could be read: cosine_pos is then null).
tests/test_compare_position.py checks what the control guarantees: at "L0 in" the position row
cancels exactly, and the numbers do not depend on what was compared before.
"""

from __future__ import annotations

import numpy as np
import torch

from qkv.analysis.inputs import encode_text, read_text
from qkv.analysis.position_mean import MIN_REF, REFERENCE, position_means
from qkv.analysis.representations import stages, vectors_at
from qkv.analysis.sense_prediction import predictions
from qkv.core.io.document import header
from qkv.core.io.shown import Document
from qkv.core.model import evaluating
from qkv.core.see.indices import TextError


def _cosine(a, b) -> float | None:
    """cos(a, b), or None (JSON null) when a vector is 0 and the angle has no value."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b / (na * nb)) if na > 0 and nb > 0 else None


def _last_occurrence(ids: list[int], word: list[int]) -> int | None:
    for start in range(len(ids) - len(word), -1, -1):
        if ids[start : start + len(word)] == word:
            return start + len(word) - 1
    return None


def _find(tokenizer, word: str, ids: list[int], n_ctx: int) -> int | None:
    """The position of the last token of `word`'s last occurrence in `ids`. The word is tokenized
    alone, then with a space before it: a byte-level BPE spells " apple" inside a sentence, not "apple"."""
    special = getattr(tokenizer, "special", None) or ()
    word_ids = [i for i in encode_text(tokenizer, word, n_ctx) if i not in special]
    if not word_ids:
        raise TextError.of("errors.word_only_special", word=repr(word))
    found = _last_occurrence(ids, word_ids)
    if found is None and not word.startswith(" "):
        try:
            spaced = [i for i in tokenizer.encode(" " + word) if i not in special]
        except ValueError:  # a tokenizer that does not know the space
            return None
        if spaced and spaced != word_ids:
            found = _last_occurrence(ids, spaced)
    return found


def locate(tokenizer, a: str, b: str, word: str, n_ctx: int):
    """((a, ids_a), (b, ids_b), [position of word in a, in b]): the two sentences as compare reads
    them, or a TextError saying which cannot be read or lacks the word (as this tokenizer spells it)."""
    (a, ids_a), (b, ids_b) = read_text(tokenizer, a, n_ctx), read_text(tokenizer, b, n_ctx)
    pos = [_find(tokenizer, word, ids, n_ctx) for ids in (ids_a, ids_b)]
    for p, text in zip(pos, (a, b), strict=True):
        if p is None:
            raise TextError.of("errors.word_not_in_sentence", word=repr(word), text=repr(text))
    return (a, ids_a), (b, ids_b), pos


def comparable(tokenizer, a: str, b: str, word: str, n_ctx: int) -> bool:
    """Whether compare() accepts this pair on this tokenizer (a default is offered only then)."""
    try:
        locate(tokenizer, a, b, word, n_ctx)
    except ValueError:
        return False
    return True


@torch.no_grad()
def compare(model, tokenizer, a: str, b: str, word: str, senses: list[list[str]] | None = None) -> dict:
    """The kind-"compare" document (module docstring), with "prediction": which sense the model's own
    next-token prediction after the word points to in each sentence (qkv.analysis.sense_prediction;
    senses: groups of sense words, None: the corpus's for a word it knows)."""
    n_ctx = model.cfg.n_ctx
    (a, ids_a), (b, ids_b), pos = locate(tokenizer, a, b, word, n_ctx)
    with evaluating(model):
        # one sentence at a time: a batch would pad the shorter one, which a non-causal model sees
        vec_a, vec_b = vectors_at(model, [ids_a], pos[:1]), vectors_at(model, [ids_b], pos[1:])
    side = lambda ids, p: {"tokens": [tokenizer.display(i) for i in ids], "pos": p}
    means = position_means(model, tokenizer, max(pos) + 1)
    mu = {name: (means.at(name, pos[0]), means.at(name, pos[1])) for _, name in stages(model.cfg)}
    controlled = all(m is not None for pair in mu.values() for m in pair)
    out = []
    for label, name in stages(model.cfg):
        x, y = vec_a[name][0], vec_b[name][0]
        centred = _cosine(x - mu[name][0], y - mu[name][1]) if controlled else None
        out.append({"label": label, "name": name, "cosine": _cosine(x, y), "cosine_pos": centred})
    control = {
        "method": "position mean",
        "reference": REFERENCE,
        "sentences": means.sentences,
        "counts": [int(means.counts[p]) if p < len(means.counts) else 0 for p in pos],
        "min": MIN_REF,
    }
    if not controlled:
        control["why"] = (
            f"fewer than {MIN_REF} reference sentences ({REFERENCE}) reach position {max(pos)} in a form "
            "this tokenizer reads: no position-controlled cosine"
        )
    return Document(
        {
            **header("compare"),
            "word": word,
            "a": side(ids_a, pos[0]),
            "b": side(ids_b, pos[1]),
            "same_position": pos[0] == pos[1],
            "control": control,
            "stages": out,
            "prediction": predictions(model, tokenizer, [(ids_a, pos[0]), (ids_b, pos[1])], senses, word),
        }
    )  # a dict that shows itself in a notebook (shown.Document)
