"""The two languages qkv explains itself in, and how to pick a string in one of them.

Each module keeps its own message table, a dict per message: ``{"zh": "...", "en": "..."}``.
"""

from __future__ import annotations

LANGS = ("zh", "en")
DEFAULT_LANG = "en"


def check_lang(lang: str) -> str:
    """Return `lang` if it is one of LANGS; otherwise a one-line ValueError."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    return lang


def pick(strings: dict[str, str], lang: str) -> str:
    """The string of `strings` in `lang` (English when that language is missing from the table)."""
    check_lang(lang)
    if lang in strings:
        return strings[lang]
    return strings[DEFAULT_LANG]
