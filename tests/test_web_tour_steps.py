"""The guided tour's words (static/tour_steps.js): every step in Chinese and English with the same keys and
the same {fields}, the steps in the articles' order, each with a measure in tour_measure.js, and the panel's
own labels alike in both languages. No browser: the literals are JSON."""

from __future__ import annotations

import json
import re
from importlib import resources

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


def test_a_field_left_out_is_found(steps):
    broken = json.loads(json.dumps(steps))
    broken[0]["zh"]["body"] = broken[0]["zh"]["body"].replace("{z}", "z")
    zh, en = broken[0]["zh"]["body"], broken[0]["en"]["body"]
    assert set(FIELD.findall(zh)) != set(FIELD.findall(en))  # what the test above would catch
