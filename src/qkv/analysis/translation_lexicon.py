"""Which English words each Chinese word yields: a lexicon built from the glosses and the training pairs.

    lex = bundled_lexicon()            # the words the bundled translator was trained on
    lex.yields["苹果"]                 # frozenset({"appl"}): stems (qkv.analysis.english_words.stem)

Three sources, all from the training side only (nothing of a held-out sentence goes in):

1. the glosses of the HSK training sentences (qkv.core.text.corpus.hsk.split("train")): every content
   word of every sense of a word's gloss, brackets and pinyin dropped, senses that are not a
   translation skipped (a surname, a cross-reference "see …", "used in …", "variant of …", a
   classifier's description): 甜 "sweet; (fig.) pleasant" -> sweet, pleasant;
2. the built-in corpus's training pairs (qkv.core.text.corpus.pairs("train")), whose generator knows
   which English words translate which Chinese words: each Chinese word yields the content words it
   is linked to, where the two go together (the Dice coefficient below, over linked pairs);
3. the HSK training pairs themselves, for what the glosses miss (钱's gloss is only "surname Qian"):
   Chinese word z (a word of the pair, or two neighbouring words joined: 你好 from 你 好 -> hello)
   yields English stem e when they meet in at least MIN_PAIRS training pairs and their Dice
   coefficient 2·n(z, e) / (n(z) + n(e)) is at least MIN_DICE, where n counts the pairs holding a
   word (z among the Chinese words, e among the English content stems). A sentence whose English is
   a placeholder ("placeholder", "placeholder-p1", see is_placeholder) gives its glosses but not its
   pair. MIN_PAIRS and MIN_DICE were chosen on the training side only (benchmarks/translate_honesty.py
   --tune: half of the training sentences judge the other half), never on the held-out sentences.

Each source can be switched off (`build(...)`), so that a figure can say what each one adds.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

from qkv.analysis.english_words import content_stems
from qkv.core.text.corpus.hsk import english_words

MIN_PAIRS = 1
MIN_DICE = 0.2
SOURCES = ("glosses", "links", "pairs")

# senses of a gloss that are no translation of the word: a surname, a cross-reference, a classifier's use
_NOT_A_SENSE = re.compile(
    r"^\s*(surname|used in|variant of|see |old variant|abbr\.|also written|erhua variant|classifier|"
    r"(\(\w+\.?\)\s*)?(name|pr\.|Taiwan pr\.))",
    re.IGNORECASE,
)
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]|[\u3400-\u9fff|]+")


@cache
def gloss_stems(gloss: str | None) -> frozenset[str]:
    """The stems of the content words of every sense of a gloss that is a translation (see the
    module docstring): "to eat; (bound form) meal" -> {"eat", "meal"}; "surname Qian" -> {}."""
    if not gloss:
        return frozenset()
    out: set[str] = set()
    for sense in gloss.split(";"):
        if not _NOT_A_SENSE.search(sense):
            out.update(content_stems(english_words(_BRACKETS.sub(" ", sense))))
    return frozenset(out)


_PLACEHOLDER = re.compile(r"\s*placeholder(-[a-z]*\d+)?[.!?]?\s*", re.IGNORECASE)


def is_placeholder(english: str) -> bool:
    """Whether an HSK sentence's English is no translation but a placeholder ("placeholder",
    "placeholder-p1", "placeholder-q1": 80 of the package's 4,354 sentences, 71 of them on the training
    side): its pair teaches nothing of what a word yields."""
    return bool(_PLACEHOLDER.fullmatch(english))


@dataclass(frozen=True)
class Lexicon:
    """Chinese word -> the English stems it yields, and which sources made it."""

    yields: dict[str, frozenset[str]]
    sources: tuple[str, ...]

    def of(self, word: str) -> frozenset[str]:
        return self.yields.get(word, frozenset())


def _add(table: dict[str, set[str]], word: str, stems) -> None:
    if stems:
        table.setdefault(word, set()).update(stems)


def from_glosses(sentences, table: dict[str, set[str]]) -> None:
    """Source 1: every word of `sentences` (HskSentence) yields its gloss's stems."""
    for s in sentences:
        for word, gloss in zip(s.words, s.glosses):
            if gloss is not None:  # a word whose senses are all function words (这, 的) is known to yield none
                table.setdefault(word, set()).update(gloss_stems(gloss))


def from_links(pairs, table: dict[str, set[str]], min_dice: float = MIN_DICE) -> None:
    """Source 2: a Chinese word of the built-in pairs yields a content word it is linked to when
    2·l(z, e) / (n(z) + n(e)) >= min_dice, l counting the pairs that link them and n the pairs that hold
    each: a link drawn across a whole phrase (的 in 煮 出来 的 粥 很 香 to "porridge") is kept only
    where the two words go together."""
    n_zh: Counter[str] = Counter()
    n_en: Counter[str] = Counter()
    linked: Counter[tuple[str, str]] = Counter()
    for p in pairs:
        n_zh.update(set(p.zh))
        n_en.update(set(content_stems(p.en)))
        linked.update({(p.zh[z], s) for z, e in p.links for s in content_stems([p.en[e]])})
    for (z, e), n in linked.items():
        if 2 * n / (n_zh[z] + n_en[e]) >= min_dice:
            _add(table, z, [e])


def from_pairs(pairs, table: dict[str, set[str]], min_pairs: int = MIN_PAIRS, min_dice: float = MIN_DICE) -> None:
    """Source 3: z yields e when n(z, e) >= min_pairs and 2·n(z, e) / (n(z) + n(e)) >= min_dice, counting
    the (Chinese words, English words) `pairs` that hold them; z is a word or two neighbours joined."""
    n_zh: Counter[str] = Counter()
    n_en: Counter[str] = Counter()
    both: Counter[tuple[str, str]] = Counter()
    for zh, en in pairs:
        zs = set(zh) | {a + b for a, b in zip(zh, zh[1:])}  # the words, and each two neighbours joined
        es = set(content_stems(en))
        n_zh.update(zs)
        n_en.update(es)
        both.update((z, e) for z in zs for e in es)
    for (z, e), n in both.items():
        if n >= min_pairs and 2 * n / (n_zh[z] + n_en[e]) >= min_dice:
            _add(table, z, [e])


def build(hsk_train=(), builtin_train=(), sources=SOURCES, min_pairs: int = MIN_PAIRS, min_dice: float = MIN_DICE):
    """A Lexicon from the HSK training sentences and the built-in training pairs, with the `sources` named."""
    unknown = set(sources) - set(SOURCES)
    if unknown:
        raise ValueError(f"lexicon sources are {', '.join(SOURCES)}; got {', '.join(sorted(unknown))}")
    table: dict[str, set[str]] = {}
    if "glosses" in sources:
        from_glosses(hsk_train, table)
    if "links" in sources:
        from_links(builtin_train, table, min_dice)
    if "pairs" in sources:
        from_pairs([s.pair for s in hsk_train if not is_placeholder(s.english)], table, min_pairs, min_dice)
    return Lexicon({z: frozenset(e) for z, e in table.items()}, tuple(s for s in SOURCES if s in sources))


def training_data() -> tuple[tuple, tuple, bool]:
    """(HSK training sentences, built-in training pairs, whether the HSK sentences could be read): the
    pairs the bundled translator trained on (scripts/train_bundled_translate.py; corpus seed 0, 8,000
    built-in sentences). Without hsk-sentences-audio, no HSK sentences."""
    from qkv.core.text.corpus import hsk, pairs

    try:
        train = hsk.split("train")
    except ValueError:  # the package is not installed
        train = ()
    return train, tuple(pairs("train", seed=0, n_sentences=8000)), bool(train)


@cache
def bundled_lexicon(sources: tuple[str, ...] = SOURCES) -> Lexicon:
    """The lexicon of the bundled translator's training data (built once per process, about a second)."""
    hsk_train, builtin, _ = training_data()
    return build(hsk_train, builtin, sources)
