"""Everyday Chinese: the graded HSK 3.0 sentences of PyPI's `hsk-sentences-audio`.

The package (code MIT, sentences CC-BY-SA-4.0, by its authors; installed with ``pip install
qkv[zh]``, never copied into qkv) holds 4,354 sentences of levels 1-6, each cut into words, with
an English translation and an English gloss per word. qkv reads them through the package's own
loader and turns each record into an `HskSentence`:

    id "hsk1-0001", level 1, words ("老师", "，", "您", "好", "！"), english "Hello, teacher!",
    glosses ("teacher", None, "you (courteous, ...)", "good; ...", None)

The punctuation between the words (the records list only words) is put back, each mark one token.

The split is fixed once: within each level, the sentences in the order of their ids, every
`HELD_OUT_EVERY`-th one (the 10th, 20th, ...) is held out. So each level lends the held-out part
the same share, the split does not depend on the package's order of records, and a sentence keeps
its side when others are added after it (a held-out sentence whose Chinese repeats a training
sentence's trains instead: the package holds one). The package is pinned (1.0.0): a release that
renumbered its sentences would move the split. Nothing that ships with qkv trains on the held-out part; every
quality figure on everyday Chinese is measured on it.

`everyday_lines` writes the training part as the built-in corpus writes Chinese (words separated
by single spaces, one sentence per line), plus seeded variants that put the marks and digits a
teacher types in context (quotes, colons, brackets, book titles, numbers), which the HSK sentences
themselves never use.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cache

HELD_OUT_EVERY = 10
SPLITS = ("train", "heldout")
# the punctuation of everyday written Chinese (full-width), each a token of the bundled tokenizer
MARKS = "，。！？：；、“”‘’（）《》…—·"
DIGITS = "0123456789"
# written-out numbers and the digits a variant may write instead
_NUMERALS = dict(zip("一两二三四五六七八九十", ["1", "2", "2", "3", "4", "5", "6", "7", "8", "9", "10"]))
# who says a quoted sentence in a variant: common given names and forms of address
_SPEAKERS = ("小明", "小红", "小王", "李华", "王老师", "张老师", "妈妈", "爸爸", "哥哥", "姐姐", "同学们", "医生")
_SAYS = ("说", "问", "告诉 我", "回答")


# an English word (with its apostrophes: don't, teacher's), a number, or one other mark
_ENGLISH_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)*|[^\sa-z0-9]")


def english_words(text: str) -> list[str]:
    """An English sentence as the built-in corpus writes English: lower case, each mark its own word.
    "Thank you! You're welcome." -> thank you ! you're welcome ."""
    return _ENGLISH_WORD.findall(text.lower())


@dataclass(frozen=True)
class HskSentence:
    """One graded sentence: its words and marks in order, its translation, a gloss per word (None for a mark)."""

    id: str
    level: int
    words: tuple[str, ...]
    english: str
    glosses: tuple[str | None, ...]

    @property
    def chinese(self) -> str:
        return "".join(self.words)

    @property
    def spaced(self) -> str:
        """The sentence as the built-in corpus writes Chinese: 老师 ， 您 好 ！"""
        return " ".join(self.words)

    @property
    def pair(self) -> tuple[list[str], list[str]]:
        """(Chinese words, English words): a training pair of the translation task."""
        return list(self.words), english_words(self.english)


def _from_record(record: dict) -> HskSentence:
    """An `HskSentence` from one record of the package: the marks between its words put back."""
    text, at, words, glosses = record["chinese"], 0, [], []
    for token in record["tokens"]:
        word = token["word"]
        found = text.find(word, at)
        if found < 0:
            raise ValueError(f"HSK sentence {record['id']}: word {word!r} is not in {text!r}")
        marks = [c for c in text[at:found] if not c.isspace()]
        words += marks + [word]
        glosses += [None] * len(marks) + [token["gloss_en"]]
        at = found + len(word)
    marks = [c for c in text[at:] if not c.isspace()]
    words += marks
    glosses += [None] * len(marks)
    english = record["translation"]["en"]
    return HskSentence(record["id"], int(record["hsk_level"]), tuple(words), english, tuple(glosses))


@cache
def sentences() -> tuple[HskSentence, ...]:
    """Every sentence of the package, in the order of their ids; a one-line ValueError without it."""
    try:
        from hsk_sentences_audio import load_sentences
    except ImportError:
        raise ValueError("everyday Chinese comes from the package hsk-sentences-audio: pip install 'qkv[zh]'") from None
    return tuple(sorted(map(_from_record, load_sentences()), key=_order))


def _order(s: HskSentence) -> tuple[int, int, str]:
    """Ids in the order of their level and number ("hsk1-0002" before "hsk1-10000")."""
    number = s.id.rpartition("-")[2]
    return (s.level, int(number) if number.isdigit() else 0, s.id)


def held_out(rank: int) -> bool:
    """Whether the sentence that is `rank`-th (from 0) of its level, in id order, is held out."""
    return rank % HELD_OUT_EVERY == HELD_OUT_EVERY - 1


@cache
def split(part: str) -> tuple[HskSentence, ...]:
    """The sentences of one side of the fixed split: "train" or "heldout" (see the module's docstring).
    A sentence whose Chinese is also a training sentence's (the package repeats a few) trains."""
    if part not in SPLITS:
        raise ValueError(f"the HSK sentences are split into {' and '.join(SPLITS)}; got {part!r}")
    rank: dict[int, int] = {}
    train: list[HskSentence] = []
    held: list[HskSentence] = []
    for s in sentences():  # in id order, so the rank within a level is the order of the ids
        r = rank.get(s.level, 0)
        rank[s.level] = r + 1
        (held if held_out(r) else train).append(s)
    trained = {s.chinese for s in train}
    if part == "train":
        return tuple(sorted(train + [s for s in held if s.chinese in trained], key=_order))
    return tuple(s for s in held if s.chinese not in trained)


def everyday_lines(train: tuple[HskSentence, ...], seed: int = 0) -> list[str]:
    """The training sentences as spaced lines, each followed, for a seeded share, by a variant."""
    rng = random.Random(f"qkv-everyday:{seed}")
    lines = []
    for s in train:
        lines.append(s.spaced)
        variant = _variant(s, rng)
        if variant:
            lines.append(variant)
    return lines


def _variant(s: HskSentence, rng: random.Random) -> str | None:
    """The sentence quoted, bracketed, joined by a semicolon, titled or with digits; None for most."""
    words = list(s.words)
    body = words[:-1] if words[-1] in "。！？" else words
    end = words[-1] if words[-1] in "！？" else "。"
    draw = rng.random()
    if draw < 0.25:  # 小明 说 ： “ 我 很 好 。 ”
        return " ".join([rng.choice(_SPEAKERS), rng.choice(_SAYS), "：", "“", *body, end, "”"])
    if draw < 0.30:  # 他 说 ‘ 好 ’ 。 (a quote inside a quote uses single marks)
        return " ".join(["“", rng.choice(_SPEAKERS), "说", "：", "‘", *body, end, "’", "”"])
    if draw < 0.35:  # ……（ level ）
        return " ".join([*body, "（", "HSK", str(s.level), "）", end])
    if draw < 0.40:  # 我 在 读 《 …… 》 ； …
        return " ".join(["我", "在", "读", "《", *body[:4], "》", "；", *body, end])
    if draw < 0.45:  # … — … ……
        return " ".join([*body[:2], "—", *body[2:], "…", "…"]) if len(body) > 2 else None
    if draw < 0.48:  # names with a middle dot, as foreign names are written
        return " ".join(["马克", "·", "吐温", rng.choice(_SAYS), "：", "“", *body, end, "”"])
    if draw < 0.60 and any(w in _NUMERALS for w in body):  # 我 买了 3 斤 香蕉 。
        return " ".join([*(_NUMERALS.get(w, w) for w in body), end])
    if draw < 0.65:  # a sentence with an age, a time or a year in digits
        return " ".join([*body, "，", rng.choice(("今年", "已经")), str(rng.randint(2, 99)), "岁", "了", end])
    if draw < 0.70:
        return " ".join([str(rng.randint(1990, 2030)), "年", str(rng.randint(1, 12)), "月", "，", *body, end])
    return None


__all__ = [
    "DIGITS",
    "HELD_OUT_EVERY",
    "HskSentence",
    "MARKS",
    "SPLITS",
    "english_words",
    "everyday_lines",
    "sentences",
    "split",
]
