"""How well the translator's "invented" mark works, on the HSK held-out sentences it never trained on.

    python benchmarks/translate_honesty.py                 # the bundled model, greedy, the full lexicon
    python benchmarks/translate_honesty.py --sources       # also each lexicon source alone and in pairs
    python benchmarks/translate_honesty.py --tune          # choose MIN_DICE / MIN_PAIRS on the training side
    python benchmarks/translate_honesty.py --limit 20      # the first 20 held-out sentences only

The held-out sentences are qkv.core.text.corpus.hsk.split("heldout"): within each HSK level, every
10th sentence in id order (a sentence whose Chinese repeats a training sentence's trains instead).
The bundled translator and the lexicon (qkv.analysis.translation_lexicon) saw only the training
side. Each sentence is typed as a learner types it (no spaces) and translated greedily; one the model
refuses (a word it never saw) is left out and counted, and so is one whose English in the package is
a placeholder ("placeholder", "placeholder-p3": 80 of the package's sentences, 9 of the held-out
ones; the model trained on the other 71 and sometimes writes "placeholder").

Every content word the model writes (qkv.analysis.english_words; a / the / of / he / is … never count)
is compared, by stem, with the sentence's reference translation and with the glosses that the
dataset gives that sentence's own words:

- correct: its stem is a content word of the reference translation;
- invented: its stem is neither in the reference nor in any gloss of the sentence's own words: no
  human translation and no dictionary sense of the sentence supports it;
- in between (not in the reference, but a gloss of one of the sentence's words has it): a synonym the
  reference did not use, or a word given to the wrong place; counted in neither figure.

Printed: recall, the share of invented words the mark catches; the false flag rate, the share of
correct words the mark flags; beside them the share of all words not in the reference that it
flags; and, since the model writes few correct words, the share of the reference translations' own
content words the mark would flag if a translator had written them (the same sentences, as the model
read them): a second, larger measure of false flags. Last, the same on the built-in corpus's
held-out frames, which the model translates well (how many of its right words are flagged there).

Read the recall with this in mind: the glosses of a held-out sentence are dictionary entries (a word
has the same gloss in every sentence), so "invented" shares the gloss source with the lexicon, and a
word is missed only where the lexicon's other sources (the training pairs, the built-in links) yield
it. It measures what those add against the glosses, not an independent judge of meaning.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import torch

from qkv.analysis import translation_lexicon as tl
from qkv.analysis.english_words import content_stems, stem
from qkv.analysis.invented_words import invented
from qkv.core.text.corpus.hsk import english_words


@dataclass
class Counts:
    sentences: int = 0
    refused: int = 0
    placeholders: int = 0  # translated, but their reference is a placeholder: left out
    words: int = 0  # content words written
    flagged: int = 0
    correct: int = 0
    correct_flagged: int = 0
    not_in_ref: int = 0
    not_in_ref_flagged: int = 0
    invented: int = 0
    invented_flagged: int = 0
    ref_words: int = 0  # content words of the reference translations, judged as if the model had written them
    ref_flagged: int = 0

    def add(self, marks, ref: set[str], glossed: set[str]) -> None:
        for m in marks:
            s = stem(m.word)
            self.words += 1
            self.flagged += m.invented
            if s in ref:
                self.correct += 1
                self.correct_flagged += m.invented
                continue
            self.not_in_ref += 1
            self.not_in_ref_flagged += m.invented
            if s not in glossed:
                self.invented += 1
                self.invented_flagged += m.invented

    def report(self) -> str:
        share = lambda a, b: f"{a}/{b} = {a / b:.1%}" if b else f"{a}/0"
        return (
            f"{self.sentences} translated and judged ({self.refused} refused, {self.placeholders} whose reference is a "
            f"placeholder left out), {self.words} content words written, "
            f"{self.flagged} flagged\n"
            f"  recall (invented words flagged): {share(self.invented_flagged, self.invented)}\n"
            f"  false flag rate (correct words flagged): {share(self.correct_flagged, self.correct)}\n"
            f"  words not in the reference flagged: {share(self.not_in_ref_flagged, self.not_in_ref)}\n"
            f"  the reference translations' own content words flagged: {share(self.ref_flagged, self.ref_words)}"
        )


def glosses_of(sentence) -> set[str]:
    out: set[str] = set()
    for g in sentence.glosses:
        out |= tl.gloss_stems(g)
    return out


def translations(sentences, beam: int = 1):
    """(sentence, Translated or None when refused) for each held-out sentence, with the bundled model."""
    from qkv.core.decode.translate import translated
    from qkv.core.hub.bundled import default_translate_ckpt
    from qkv.core.train import checkpoint

    ckpt = checkpoint.load_checkpoint(default_translate_ckpt())
    out = []
    for s in sentences:
        try:
            out.append((s, translated(ckpt.model, ckpt.tokenizer, s.chinese, beam)))
        except ValueError:
            out.append((s, None))
    return out


def measure(done, lexicon) -> Counts:
    c = Counts()
    for s, t in done:
        if t is None:
            c.refused += 1
            continue
        if tl.is_placeholder(s.english):  # no reference translation to judge against
            c.placeholders += 1
            continue
        c.sentences += 1
        marks = invented(lexicon, t.source.split(), t.text.split())
        c.add(marks, set(content_stems(english_words(s.english))), glosses_of(s))
        ref = invented(lexicon, t.source.split(), english_words(s.english))  # a right translation, judged
        c.ref_words += len(ref)
        c.ref_flagged += sum(m.invented for m in ref)
    return c


def builtin_heldout(limit: int | None) -> str:
    """The same figures on the built-in corpus's held-out frames (corpus.pairs("heldout")), which the
    model translates well: every word it writes there should pass."""
    from qkv.core.decode.translate import translated
    from qkv.core.hub.bundled import default_translate_ckpt
    from qkv.core.text.corpus import pairs
    from qkv.core.train import checkpoint

    ckpt, lexicon, c = checkpoint.load_checkpoint(default_translate_ckpt()), tl.bundled_lexicon(), Counts()
    for p in pairs("heldout")[:limit]:
        t = translated(ckpt.model, ckpt.tokenizer, p.text("zh"))
        c.sentences += 1
        c.add(invented(lexicon, t.source.split(), t.text.split()), set(content_stems(p.en)), set())
    return (
        f"built-in held-out frames: {c.sentences} translated, {c.words} content words written, {c.flagged} flagged; "
        f"{c.correct} in the reference, {c.correct_flagged} of them flagged"
    )


def tune(hsk_train, builtin) -> None:
    """MIN_DICE and MIN_PAIRS chosen without the held-out side: the lexicon built from half the training
    sentences (every other one) judges the other half's reference translations (those whose words
    the first half holds, as the translator translates only sentences of words it trained on) (each content word
    flagged is a false flag) and, as stand-ins for invented words, the next sentence's reference words
    that are neither in this reference nor in its glosses (each one flagged is caught)."""
    a, b = hsk_train[0::2], hsk_train[1::2]
    known = {w for s in a for w in s.words} | {w for p in builtin for w in p.zh}
    b = [s for s in b if set(s.words) <= known and not tl.is_placeholder(s.english)]  # as the model refuses a
    # sentence with a word it never saw; a placeholder is no translation
    for min_pairs in (1, 2, 3):
        for min_dice in (0.1, 0.2, 0.3, 0.4, 0.5):
            lex = tl.build(a, builtin, min_pairs=min_pairs, min_dice=min_dice)
            c = Counts()
            for s, other in zip(b, b[1:] + b[:1]):
                ref, glossed = set(content_stems(english_words(s.english))), glosses_of(s)
                words = english_words(s.english) + [w for w in english_words(other.english) if stem(w) not in ref]
                c.add(invented(lex, list(s.words), words), ref, glossed)
            rec = c.invented_flagged / max(c.invented, 1)
            ff = c.correct_flagged / max(c.correct, 1)
            print(f"  MIN_PAIRS {min_pairs}, MIN_DICE {min_dice}: stand-ins caught {rec:.1%}, false flags {ff:.1%}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--limit", type=int, help="only the first N held-out sentences")
    p.add_argument("--beam", type=int, default=1, help="beam size (1: greedy)")
    p.add_argument("--sources", action="store_true", help="also the figures of each lexicon source alone")
    p.add_argument("--tune", action="store_true", help="choose the pair thresholds on the training side")
    args = p.parse_args(argv)
    torch.set_num_threads(1)  # two threads on two shared cores can be many times slower
    from qkv.core.text.corpus import hsk

    hsk_train, builtin, _ = tl.training_data()
    if args.tune:
        print("the pair thresholds, on the training side (half judges the other half):")
        tune(hsk_train, builtin)
        return
    held = hsk.split("heldout")[: args.limit]
    done = translations(held, args.beam)
    print(f"HSK held-out: {len(held)} sentences, greedy" if args.beam == 1 else f"beam {args.beam}")
    choices = [tl.SOURCES]
    if args.sources:
        choices += [("glosses",), ("links",), ("pairs",), ("glosses", "links"), ("glosses", "pairs")]
    for sources in choices:
        print(f"lexicon from {' + '.join(sources)}: " + measure(done, tl.build(hsk_train, builtin, sources)).report())
    print(builtin_heldout(args.limit))


if __name__ == "__main__":
    main()
