"""Chinese and English from one message catalogue: every sentence qkv says has a key.

    t("explain.step4", "zh")                       # the message, in Chinese
    t("explain.actual", "en", tok="股价", p="0.47", r=1)   # with its {fields} filled in

A key is "<area>.<name>": the area names a module of the catalogue, one per language with the same
keys (qkv/presentation/messages/en/<area>.py and .../zh/<area>.py, each a dict MESSAGES), so a
translator reads the two files side by side. Dots in the area are folders: "figures.hull.title" lives
in messages/<lang>/figures/hull.py. A lesson keeps its words in its own folder: the area
"lessons.<name>" is the module qkv/lessons/<name>/<lang>.py ("lessons.convex.title" lives in
qkv/lessons/convex/en.py and zh.py; "lessons.common" in qkv/lessons/common/). A test checks that both
languages hold the same keys and the same {fields} in every message.

Which language a display or a command speaks when it is not told is decided here, once for all of qkv:

    qkv.set_lang("zh")        # every display (explain, attend, figures, lessons) and every command
    qkv.get_lang()            # "zh": set_lang's choice, else QKV_LANG (zh, en, or a locale: zh_CN.UTF-8), else en

A lang= argument, or a command's --lang, still wins over both.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from qkv.core.io import refusal

LANGS = ("zh", "en")
DEFAULT_LANG = "en"
ENV = "QKV_LANG"
_chosen: str | None = None  # set_lang's choice: None, QKV_LANG's (else English)


def check_lang(lang: str) -> str:
    """Return `lang` if it is one of LANGS; otherwise a one-line ValueError."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    return lang


def from_env(environ=None) -> str | None:
    """QKV_LANG as a language qkv speaks: zh or en, also written as a locale (zh_CN.UTF-8, en-GB); else None."""
    value = (os.environ if environ is None else environ).get(ENV, "")
    lang = value.strip().lower().replace("-", "_").split("_")[0].split(".")[0]
    return lang if lang in LANGS else None


def set_lang(lang: str | None) -> None:
    """The language every display and command speaks when it is not given one (None: QKV_LANG's again)."""
    global _chosen
    _chosen = None if lang is None else check_lang(lang)


def chosen_lang(environ=None) -> str | None:
    """The language chosen for all of qkv: set_lang's, else QKV_LANG's; None when neither chose one."""
    return _chosen or from_env(environ)


def get_lang(environ=None) -> str:
    """The language qkv speaks when it is not told: set_lang's, else QKV_LANG's, else English."""
    return chosen_lang(environ) or DEFAULT_LANG


def lang_of(lang: str | None) -> str:
    """The language a display speaks: its own lang= when it was given one (checked), else get_lang()."""
    return get_lang() if lang is None else check_lang(lang)


@contextmanager
def speaking(lang: str) -> Iterator[None]:
    """While it lasts, qkv speaks `lang` wherever it is not told otherwise (a command, for its run)."""
    global _chosen
    before, _chosen = _chosen, check_lang(lang)
    try:
        yield
    finally:
        _chosen = before


def area_module(area: str, lang: str) -> str:
    """The module that holds an area's messages in `lang`: "lessons.<name>" in the lesson's own folder
    (qkv.lessons.<name>.<lang>; named here, never imported by name, so presentation stays below the
    lessons), every other area under messages/<lang>/."""
    head, _, lesson = area.partition(".")
    if head == "lessons" and lesson:
        return f"qkv.lessons.{lesson}.{lang}"
    return f"{__package__}.messages.{lang}.{area}"


@cache
def catalogue(lang: str, area: str) -> dict[str, str]:
    """The messages of one area in one language (imported once)."""
    check_lang(lang)
    try:
        module = importlib.import_module(area_module(area, lang))
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


# ------------------------------------------------------------------ errors (qkv.core.io.refusal)


def say_error(error: BaseException, lang: str) -> str:
    """What `error` says in `lang`: a catalogued refusal (qkv.core.io.refusal) in that language, any other
    error in its own (English) text. Area "errors" holds the sentences, and says how qkv writes them."""
    check_lang(lang)
    if not getattr(error, "key", None):
        return str(error)
    try:
        return _said(error, lang)
    except KeyError:  # a key the catalogue lacks (a test looks for them): English, else the key itself
        return _plain(error)


def _plain(item) -> str:
    """A refusal or phrase in English (its str()), or its key and fields when the catalogue lacks it."""
    try:
        return _said(item, "en")
    except KeyError:
        return f"{item.key} {item.fields}"


def _said(item, lang: str) -> str:
    """A refusal or phrase in `lang`, its fields said in the same language (lists joined by its comma)."""
    area, _, name = item.key.rpartition(".")
    text = catalogue(lang, area)[name]  # as t() looks it up; a field may be called "key" or "lang" here
    fields = {field: _field(value, lang) for field, value in item.fields.items()}
    return text.format(**fields) if fields else text


def _field(value, lang: str):
    if isinstance(value, (refusal.Refusal, refusal.Phrase)) and value.key:
        return _said(value, lang)
    if isinstance(value, list):
        return t("errors.comma", lang).join(str(_field(v, lang)) for v in value)
    if isinstance(value, BaseException):
        return str(value)
    return value


refusal.speak_english(_plain)
# what core says while it works (the training loop's progress), in the language qkv speaks
refusal.speak_chosen(lambda item: say_error(item, get_lang()))
