"""Chinese and English from one message catalogue: every sentence qkv says has a key.

    t("explain.step4", "zh")                       # the message, in Chinese
    t("explain.actual", "en", tok="股价", p="0.47", r=1)   # with its {fields} filled in

A key is "<area>.<name>": the area names a module of the catalogue, one per language with the same
keys (qkv/presentation/messages/en/<area>.py and .../zh/<area>.py, each a dict MESSAGES), so a
translator reads the two files side by side. Dots in the area are folders: "lessons.convex.title"
lives in messages/<lang>/lessons/convex.py. A test checks that both languages hold the same keys and
the same {fields} in every message.
"""

from __future__ import annotations

import importlib
from functools import cache

LANGS = ("zh", "en")
DEFAULT_LANG = "en"


def check_lang(lang: str) -> str:
    """Return `lang` if it is one of LANGS; otherwise a one-line ValueError."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    return lang


@cache
def catalogue(lang: str, area: str) -> dict[str, str]:
    """The messages of one area in one language (imported once)."""
    check_lang(lang)
    try:
        module = importlib.import_module(f"{__package__}.messages.{lang}.{area}")
    except ModuleNotFoundError:
        raise KeyError(f"no message area {area!r} in the {lang} catalogue") from None
    return module.MESSAGES


def t(key: str, lang: str, **fields) -> str:
    """The message `key` in `lang`, with {fields} filled in (the text as it is when none are given)."""
    area, _, name = key.rpartition(".")
    if not area:
        raise KeyError(f"message key {key!r} has no area: write it as 'area.name'")
    messages = catalogue(lang, area)
    if name not in messages:
        raise KeyError(f"no message {key!r} in the {lang} catalogue")
    text = messages[name]
    return text.format(**fields) if fields else text


def translator(lang: str, area: str):
    """t with the language and area fixed: say = translator("zh", "explain"); say("step4")."""
    check_lang(lang)
    return lambda name, **fields: t(f"{area}.{name}", lang, **fields)
