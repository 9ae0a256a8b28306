"""Words of a translation that translate no word of its source: the translator's honesty mark.

The rule (RULE, said on the page and by `qkv translate`): an English content word of the translation
(qkv.analysis.english_words: not a function word such as a / the / of / he / is, not a mark) is
marked "invented" when no word of the source yields it, where the source words yield what the
lexicon (qkv.analysis.translation_lexicon) says they yield: their glosses, their links in the
built-in corpus, and the English words they meet often in the training pairs. The English word and
the lexicon's are compared by stem (ate meets "to eat", apples meets "apple").

What the source words are: every lexicon word that the source holds as one or more of the tokens the
model read, or inside one token (a token 买了 holds 买; the tokens 洗 手 间 hold 洗手间); a run of digits
yields itself (5, and the lexicon's five when the digit is one); a word of Latin letters yields itself.

    marks = invented(lexicon, ["这", "家", "店"], "the old man took medicine .".split())
    [m.word for m in marks if m.invented]         # ["man", "took", "medicine"] (old: 店 "old-style hotel")

The mark is a check against a word list, not an understanding of the sentence: a right word the
lexicon lacks is marked (a false flag), and a wrong word some source word could yield elsewhere is
not (benchmarks/translate_honesty.py measures both on the HSK held-out sentences).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from qkv.analysis.english_words import is_content, stem

_CJK = re.compile("[\u3400-\u9fff]")
MAX_RUN = 4  # the most tokens a lexicon word is looked for across
_DIGIT_WORDS = dict(zip("0123456789", ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")))


@dataclass(frozen=True)
class Mark:
    """One content word of a translation: its place among the translation's words, and whether it is invented."""

    pos: int
    word: str
    invented: bool


def source_words(lexicon, tokens) -> list[str]:
    """The lexicon words the source holds (see the module docstring), each once, in order of where they start."""
    tokens = [t for t in tokens if t.strip()]
    found: dict[str, None] = {}
    for i, tok in enumerate(tokens):
        for a in range(len(tok)):  # inside one token
            for b in range(a + 1, len(tok) + 1):
                if tok[a:b] in lexicon.yields:
                    found.setdefault(tok[a:b], None)
        for j in range(i + 2, min(i + MAX_RUN, len(tokens)) + 1):  # across tokens i .. j-1
            joined = "".join(tokens[i:j])
            if joined in lexicon.yields:
                found.setdefault(joined, None)
    return list(found)


def source_yields(lexicon, tokens) -> frozenset[str]:
    """Every stem some source word yields (see the module docstring)."""
    out: set[str] = set()
    for word in source_words(lexicon, tokens):
        out |= lexicon.of(word)
    for tok in tokens:
        if tok.isascii() and tok.isalnum():  # a number or a Latin word stands for itself
            out.add(stem(tok))
            if tok.isdigit() and len(tok) == 1:
                out.add(stem(_DIGIT_WORDS[tok]))
    return frozenset(out)


def unglossed(lexicon, tokens) -> list[str]:
    """The source tokens of Chinese that no lexicon word covers, even in part: what they yield is not known."""
    covered = set("".join(source_words(lexicon, tokens)))
    return [t for t in dict.fromkeys(tokens) if not t.isascii() and t.isalnum() and not set(t) & covered]


def invented(lexicon, source_tokens, words) -> list[Mark]:
    """A Mark for each content word of the translation `words`: invented when no source word yields its stem."""
    yielded = source_yields(lexicon, source_tokens)
    return [Mark(i, w, stem(w) not in yielded) for i, w in enumerate(words) if is_content(w)]


def invented_words(lexicon, source_tokens, words) -> list[str]:
    """The invented words of a translation, each once, in order."""
    return list(dict.fromkeys(m.word for m in invented(lexicon, source_tokens, words) if m.invented))


def applies(languages, source_tokens, words) -> bool:
    """Whether the mark can judge this translation: Chinese to English (the model's recorded languages,
    or, where it records none, a source with Chinese characters and a translation without)."""
    if languages is not None and tuple(languages[:2]) != ("zh", "en"):
        return False
    return any(_CJK.search(t) for t in source_tokens) and not any(_CJK.search(w) for w in words)


def honesty(source_tokens, words, languages=None, lexicon=None) -> dict:
    """The mark of one translation as plain data: {"checked": whether it applies, "invented": the
    positions of the invented words among `words`, "words": those words, each once, "unglossed":
    the source tokens the lexicon knows nothing of}. The bundled lexicon unless one is given."""
    source_tokens, words = list(source_tokens), list(words)
    if not applies(languages, source_tokens, words):
        return {"checked": False, "invented": [], "words": [], "unglossed": []}
    if lexicon is None:
        from qkv.analysis.translation_lexicon import bundled_lexicon

        lexicon = bundled_lexicon()
    marks = [m for m in invented(lexicon, source_tokens, words) if m.invented]
    return {
        "checked": True,
        "invented": [m.pos for m in marks],
        "words": list(dict.fromkeys(m.word for m in marks)),
        "unglossed": unglossed(lexicon, source_tokens),
    }
