"""What the lessons' texts share: joining sentences and list items the way each language does."""

from __future__ import annotations

from functools import reduce

from qkv.presentation.i18n import t


def then(sentences, lang: str) -> str:
    """Sentences one after the other (English puts a space between them, Chinese does not)."""
    return reduce(lambda a, b: t("lessons.common.then", lang, first=a, second=b), sentences)


def listing(parts, lang: str) -> str:
    """Parts of one line, separated by a semicolon ("; " in English, "；" in Chinese)."""
    return reduce(lambda a, b: t("lessons.common.sep", lang, first=a, second=b), parts)


def commas(parts, lang: str) -> str:
    """Items of a list, separated by a comma (", " in English, "，" in Chinese)."""
    return reduce(lambda a, b: t("lessons.common.comma", lang, first=a, second=b), parts)


def pad(text: str, columns: int, right: bool = False) -> str:
    """`text` filled with spaces to `columns` terminal columns (a Chinese character takes two), on the
    right, or on the left when `right` (a number aligned to the right)."""
    from qkv.presentation.text import width

    fill = " " * max(0, columns - width(text))
    return fill + text if right else text + fill
