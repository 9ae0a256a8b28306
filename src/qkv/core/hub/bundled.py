"""Where the models that ship with qkv live, and what they were trained on: the GPT (trained by
scripts/train_bundled.py on the built-in corpus and the HSK training sentences) and the translation
model (scripts/train_bundled_translate.py, on the built-in pairs and the HSK training pairs)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from qkv.core.io.refusal import Refusal

ASSETS = Path(__file__).resolve().parents[2] / "assets"
BUNDLED = ASSETS / "model"
BUNDLED_TRANSLATE = ASSETS / "translate"


EVERYDAY_SEED = 0
COMMON_CHARS = 3000  # characters beyond the training text's, most frequent first (see common_chars)


@cache
def training_text() -> str:
    """The bundled GPT's training text: the built-in corpus (each Chinese line and its English) with the
    HSK training sentences and their variants (corpus.hsk.everyday_lines) spread evenly between its
    pairs, so that the last part, which training holds out for the validation loss, holds both. Needs
    the package hsk-sentences-audio (a one-line ValueError without it)."""
    from qkv.core.text.corpus import default_text, hsk

    builtin = default_text().splitlines()
    pairs = [builtin[i : i + 2] for i in range(0, len(builtin), 2)]  # (Chinese line, its English line)
    everyday = hsk.everyday_lines(hsk.split("train"), seed=EVERYDAY_SEED)
    lines, given = [], 0
    for n, pair in enumerate(pairs, 1):
        lines += pair
        due = n * len(everyday) // len(pairs)  # everyday lines owed after n of the pairs
        lines += everyday[given:due]
        given = due
    return "\n".join(lines) + "\n"


def common_chars(n: int = COMMON_CHARS) -> list[str]:
    """The n Chinese characters most frequent in jieba's dictionary (each character weighted by the
    frequencies of the words it is in): characters a learner may type that the training text lacks,
    read as one token each instead of three UTF-8 bytes. Needs jieba (the zh extra)."""
    import jieba

    from qkv.core.text.tokenizers.words import _CJK_RE

    counts: dict[str, int] = {}
    with open(Path(jieba.__file__).parent / "dict.txt", encoding="utf-8") as f:
        for line in f:
            word, freq = line.split()[:2]
            for c in word:
                counts[c] = counts.get(c, 0) + int(freq)
    han = [c for c in counts if _CJK_RE.fullmatch(c)]
    return sorted(han, key=lambda c: (-counts[c], c))[:n]


def learner_tokenizer(text: str, spell_seed: int = 0, extra_chars: Sequence[str] = ()):
    """The bundled GPT's tokenizer recipe for `text`: its words, no whitespace tokens, ASCII capitals
    read as lower case, and a character and UTF-8 byte fallback, so that whatever a learner types is
    read: the characters of `text` that are not words, then those of `extra_chars` not yet tokens.
    Wrapped in `Spelled` so that training spells a seeded few words as characters (and characters as
    bytes) and those tokens are learned too. scripts/train_bundled.py and `qkv demo` use it."""
    from qkv.core.text.tokenizers import WordTokenizer, train_tokenizer
    from qkv.core.text.tokenizers.spelling import Spelled

    tok = train_tokenizer("word", text, segment="none", whitespace=False, fallback=True, fold_case=True)
    d = tok.to_dict()
    known = set(d["words"]) | set(d["chars"])
    chars = d["chars"] + [c for c in dict.fromkeys(extra_chars) if c not in known]
    return Spelled(WordTokenizer(d["words"], False, False, chars, True, True), seed=spell_seed)


def default_ckpt() -> Path:
    """The bundled model's checkpoint directory; a one-line ValueError when it is missing."""
    if not (BUNDLED / "state.json").exists():
        raise Refusal.of("hub.bundled_missing", path=BUNDLED)
    return BUNDLED


def default_translate_ckpt() -> Path:
    """The bundled translation model's checkpoint directory (zh -> en); a one-line ValueError when it is missing."""
    if not (BUNDLED_TRANSLATE / "state.json").exists():
        raise Refusal.of("hub.bundled_translate_missing", path=BUNDLED_TRANSLATE)
    return BUNDLED_TRANSLATE
