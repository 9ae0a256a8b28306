"""The message catalogue: both languages say the same things, with the same fields, under the same keys."""

from __future__ import annotations

import importlib
import pkgutil
import string

import pytest

from qkv.presentation import i18n
from qkv.presentation.i18n import check_lang, t


def areas(lang: str) -> set[str]:
    """Every area of a language's catalogue (modules under messages/<lang>/, dotted for subfolders)."""
    root = importlib.import_module(f"qkv.presentation.messages.{lang}")
    found = set()
    for info in pkgutil.walk_packages(root.__path__, prefix=""):
        if not info.ispkg:
            found.add(info.name)
    return found


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_both_languages_have_the_same_areas_keys_and_fields():
    assert areas("en") == areas("zh") and areas("en")
    for area in sorted(areas("en")):
        en, zh = i18n.catalogue("en", area), i18n.catalogue("zh", area)
        assert en.keys() == zh.keys(), (area, en.keys() ^ zh.keys())
        for key in en:
            assert fields(en[key]) == fields(zh[key]), f"{area}.{key}"
            assert en[key].strip() and zh[key].strip(), f"{area}.{key} is empty"


def test_lookup_fills_fields_and_names_what_is_missing():
    assert t("attend.title", "en", dk="2") == "Attention for one query, step by step (d_k = 2)"
    assert "d_k = 2" in t("attend.title", "zh", dk="2") and t("attend.title", "zh", dk="2") != t("attend.title", "en", dk="2")
    assert t("attend.exp", "en") == i18n.catalogue("en", "attend")["exp"]  # no fields: the text as it is, braces kept
    with pytest.raises(KeyError, match="attend.nothing"):
        t("attend.nothing", "en")
    with pytest.raises(KeyError, match="nowhere"):
        t("nowhere.title", "zh")
    with pytest.raises(ValueError, match="fr"):
        check_lang("fr")
    with pytest.raises(ValueError, match="fr"):
        t("attend.title", "fr", dk="2")


def test_a_translator_fixes_language_and_area():
    say = i18n.translator("zh", "explain")
    assert say("step4") == t("explain.step4", "zh")
