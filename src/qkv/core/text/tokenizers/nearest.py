"""The known words nearest to an unknown one: what a tokenizer suggests when it meets a word it lacks.

Nearness: the smallest edit distance (Levenshtein, over characters, after ASCII case folding),
among the words that share at least one character with the unknown text; ties go to the word that
shares more characters, then to the earlier word of the list (a vocabulary ordered by frequency:
the more frequent). A word with nothing in common is never "near", so the list may be short or
empty (an emoji; digits in a corpus without digits).
"""

from __future__ import annotations

NEAREST = 5
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold_ascii(text: str) -> str:
    """ASCII capitals to lowercase; every other character as it is."""
    return text.translate(_ASCII_LOWER)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: the fewest insertions, deletions and substitutions of characters."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def nearest_words(words, text: str, n: int = NEAREST) -> list[str]:
    """Up to `n` of `words` nearest to `text` (see the module docstring); whitespace words never."""
    text = fold_ascii(text)
    chars = set(text)
    scored = []
    for rank, word in enumerate(words):
        shared = len(chars & set(word))
        if shared and not word.isspace():
            scored.append((edit_distance(text, fold_ascii(word)), -shared, rank, word))
    return [w for *_, w in sorted(scored)[:n]]


__all__ = ["NEAREST", "fold_ascii", "edit_distance", "nearest_words"]
