"""Parallel sentence pairs (Chinese, English) with a gold word alignment.

The corpus generator picks every phrase of a sentence from a table that
already holds it in both languages, so it knows which English words
translate which Chinese words without guessing.  :func:`pairs` returns that
knowledge as :class:`Pair` objects, ready for training and scoring a
translation model.

How words are linked
--------------------
* A sentence is a sequence of phrases (a subject, a time, a cue verb, a
  drug name, a filler clause, ...).  Each Chinese word of a phrase is
  linked to each English word of the same phrase in the other language; a
  one-word phrase on both sides gives exactly one link.
* Templates with placeholders (``"{S} 吃了 一些 {X}"`` /
  ``"{S} ate some {X}"``) are cut at the placeholders: the word put in for
  ``{X}`` links to its English counterpart, and the template's remaining
  words link to each other as one phrase.
* Punctuation that corresponds is linked: each ``，`` to its ``,`` and the
  final ``。`` to ``.``.
* Words with no counterpart (的, "and", the comma that opens an English
  "which ..." clause) have no links.

Splits
------
``"train"`` holds exactly the sentences of ``generate(seed, n_sentences,
"both")``, in order.  ``"heldout"`` is built only from the frames the
generator never uses (the ones the probes come from): every reserved sense
frame in both senses, every reserved pair of people in both orders, every
reserved drug and job frame, once each.  Its size is fixed by the frame
tables, so ``n_sentences`` is ignored; ``seed`` picks the free details.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from qkv.core.text.corpus import lexicon as L
from qkv.core.text.corpus.sentences import (
    END,
    _drug,
    _job,
    _order,
    _reserved,
    _sense_drawn,
    check_choice,
    check_count,
    draw_sentences,
)

__all__ = ["KINDS", "Pair", "SPLITS", "pairs"]

KINDS: tuple[str, ...] = ("sense", "order", "drug", "job", "plain")
SPLITS: tuple[str, ...] = ("train", "heldout")


@dataclass(frozen=True)
class Pair:
    """One sentence in Chinese and English with its gold word alignment.

    ``zh`` and ``en`` are the words of the two corpus lines (full stop
    included).  ``links`` holds sorted ``(zh index, en index)`` pairs.
    ``kind`` names the sentence frame (see ``KINDS``); ``tags`` holds facts
    about it, e.g. ``(("word", "苹果"), ("sense", "food"))``.
    """

    zh: tuple[str, ...]
    en: tuple[str, ...]
    links: tuple[tuple[int, int], ...]
    kind: str
    tags: tuple[tuple[str, str], ...] = ()

    def side(self, lang: str) -> tuple[str, ...]:
        """The words in ``lang`` ("zh" or "en")."""
        check_choice("lang", lang, ("zh", "en"))
        return self.zh if lang == "zh" else self.en

    def text(self, lang: str) -> str:
        """The sentence in ``lang`` as a corpus line (without newline)."""
        return " ".join(self.side(lang))

    def aligned(self, lang_from: str, i: int) -> frozenset[int]:
        """Indices of the words in the other language linked to word ``i`` of ``lang_from``."""
        n = len(self.side(lang_from))
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
            raise ValueError(f"word index must be an int in 0..{n - 1}, got {i!r}")
        if lang_from == "zh":
            return frozenset(e for z, e in self.links if z == i)
        return frozenset(z for z, e in self.links if e == i)


def _pair(sentence: dict) -> Pair:
    zh_ctx, zh_tgt = sentence["zh"]
    en_ctx, en_tgt = sentence["en"]
    return Pair(
        zh=tuple(zh_ctx + zh_tgt + [END["zh"]]),
        en=tuple(en_ctx + en_tgt + [END["en"]]),
        links=sentence["links"],
        kind=sentence["kind"],
        tags=sentence["tags"],
    )


def _heldout(seed: int) -> list[dict]:
    """One sentence per reserved frame (both senses, both orders)."""
    rng = random.Random(f"qkv-heldout-pairs:{seed}")
    held = _reserved()
    out: list[dict] = []
    for amb, frames in held["sense_list"].items():
        for frame in frames:
            out += [_sense_drawn(rng, amb, food, *frame) for food in (True, False)]
    for verb, people in held["order_list"].items():
        for a, b in people:
            for first, second in ((a, b), (b, a)):
                out.append(
                    _order(
                        verb,
                        first,
                        second,
                        time=rng.randrange(len(L.ORDER_TIMES)),
                        place=rng.randrange(len(L.ORDER_PLACES)),
                    )
                )
    for drug, frames in held["drug_list"].items():
        for patient, n_fill in frames:
            out.append(
                _drug(
                    drug,
                    patient,
                    start=rng.randrange(len(L.DRUG_STARTS)),
                    fillers=tuple(rng.sample(range(len(L.DRUG_FILLERS)), n_fill)),
                    delay=rng.randrange(len(L.DRUG_DELAYS)),
                )
            )
    for job, frames in held["job_list"].items():
        for worker, n_fill in frames:
            fillers = tuple(rng.sample(range(len(L.WORKER_FILLERS)), n_fill))
            out.append(_job(job, worker, fillers))
    return out


def pairs(split: str = "train", seed: int = 0, n_sentences: int = 2000) -> list[Pair]:
    """Sentence pairs with gold alignments for ``split`` ("train" or "heldout").

    "train": pair k is lines 2k and 2k+1 of ``generate(seed, n_sentences, "both")``.
    "heldout": one pair per reserved frame and variant (262 pairs); ``n_sentences`` is
    checked but otherwise ignored.
    """
    check_choice("split", split, SPLITS)
    check_count(n_sentences)
    if split == "train":
        return [_pair(s) for s in draw_sentences(seed, n_sentences)]
    return [_pair(s) for s in _heldout(seed)]
