"""The guided tour's words (static/tour_steps.js): every step in Chinese and English with the same keys and
the same {fields}, the steps in the articles' order, each with a measure in tour_measure.js, and the panel's
own labels alike in both languages. No browser: the literals are JSON."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest

STATIC = resources.files("qkv.apps.web") / "static"
ORDER = ["worked", "hull", "why_v", "apple", "heads", "positions", "residual", "next", "translate", "llm"]
FIELD = re.compile(r"\{(\w+)\}")
HAN = re.compile("[\u4e00-\u9fff]")


def literal(source: str, name: str):
    """The JSON after `export const NAME = ` up to the `;` that ends it."""
    start = source.index(f"export const {name} = ") + len(f"export const {name} = ")
    end = source.index("\n};" if source[start] == "{" else "\n];", start) + 2
    return json.loads(source[start:end])


@pytest.fixture(scope="module")
def steps():
    return literal((STATIC / "tour_steps.js").read_text(encoding="utf-8"), "TOUR_STEPS")


@pytest.fixture(scope="module")
def ui():
    return literal((STATIC / "tour_steps.js").read_text(encoding="utf-8"), "TOUR_UI")


def test_steps_follow_the_articles_order(steps):
    assert [s["id"] for s in steps] == ORDER


def test_every_step_says_the_same_in_both_languages(steps):
    for s in steps:
        zh, en = s["zh"], s["en"]
        assert set(zh) == set(en) and {"title", "body", "try"} <= set(zh), s["id"]
        for key in zh:
            assert set(FIELD.findall(zh[key])) == set(FIELD.findall(en[key])), (s["id"], key)
            assert zh[key].strip() and en[key].strip(), (s["id"], key)
            assert HAN.search(zh[key]), (s["id"], key)  # the Chinese is Chinese
        assert s["card"].startswith(("#", ".")), s["id"]


def test_the_panels_labels_in_both_languages(ui):
    assert set(ui["zh"]) == set(ui["en"])
    for key in ui["zh"]:
        assert set(FIELD.findall(ui["zh"][key])) == set(FIELD.findall(ui["en"][key])), key


def test_every_step_has_a_measure():
    source = (STATIC / "tour_measure.js").read_text(encoding="utf-8")
    start = source.index("export const MEASURES = {") + len("export const MEASURES = {")
    table = source[start : source.index("}", start)]
    names = [item.split(":")[0].strip() for item in table.split(",")]  # {worked, why_v: whyV, ...}
    assert sorted(names) == sorted(ORDER)


def test_every_command_it_prints_works():
    """Each `qkv serve --ckpt X` in the tour's words and measures names a model qkv serve opens: a name of
    INSTALLED_MODELS, or a checkpoint directory of this repository (the path from its root)."""
    from qkv.apps.web.model_doc import INSTALLED_MODELS

    root = Path(__file__).resolve().parents[1]
    said = [(STATIC / f).read_text(encoding="utf-8") for f in ("tour_steps.js", "tour_measure.js")]
    said += [
        (resources.files("qkv.presentation.messages") / lang / "tour.py").read_text("utf-8") for lang in ("en", "zh")
    ]
    names = [m for text in said for m in re.findall(r"qkv serve --ckpt ([\w./-]+)", text)]
    assert "src/qkv/assets/translate" in names and "smollm2" in names
    for name in names:
        assert name in INSTALLED_MODELS or name in ("DIR", "目录") or (root / name / "state.json").exists(), name


def test_a_step_fails_only_in_words_of_the_page():
    """tour_measure.js throws only TOUR_UI's words (or the server's, per language): no English literal."""
    source = (STATIC / "tour_measure.js").read_text(encoding="utf-8")
    assert not re.search(r"new Error\(\s*[\"'`]", source)
    assert "d.why ||" not in source  # the server's reason in English: d.why_lang[S.lang] instead
