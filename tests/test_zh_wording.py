"""The Chinese a learner reads says positions, layers and heads as 0-based numbers — 位置 3 / 层 0 / 头 2,
never an ordinal such as 第 3 个, which reads 1-based — in the zh catalogue (the lessons' own words
included) and in the page's Chinese strings; and the context lesson's cue word is a 线索词 (a clue), not
a 提示词 (a prompt)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import qkv
from qkv.presentation.i18n import catalogue

ROOT = Path(qkv.__file__).resolve().parent
ZH = ROOT / "presentation" / "messages" / "zh"
STATIC = ROOT / "apps" / "web" / "static"
CJK = re.compile(r"[\u3400-\u9fff]")


def zh_catalogue() -> dict[str, str]:
    """Every message of the Chinese catalogue but errors.py (another area's), the lessons' own included:
    "area.name" -> text."""
    out = {}
    for path in sorted(ZH.rglob("*.py")):
        if path.name in ("__init__.py", "errors.py"):
            continue
        area = ".".join(path.relative_to(ZH).with_suffix("").parts)
        module = importlib.import_module(f"qkv.presentation.messages.zh.{area}")
        out.update({f"{area}.{k}": v for k, v in module.MESSAGES.items() if isinstance(v, str)})
    for path in sorted((ROOT / "lessons").glob("*/zh.py")):  # a lesson's words live in its folder
        area = f"lessons.{path.parent.name}"
        out.update({f"{area}.{k}": v for k, v in catalogue("zh", area).items() if isinstance(v, str)})
    return out


STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`')


def page_chinese() -> dict[str, str]:
    """Every string literal of the page (static/*.js, index.html) that holds Chinese: "file:line" -> text."""
    out = {}
    for path in sorted(STATIC.glob("*.js")) + [STATIC / "index.html"]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in STRING.finditer(line):
                s = m.group(1) if m.group(1) is not None else m.group(2)
                if CJK.search(s):
                    out[f"{path.name}:{n}:{m.start()}"] = s
    return out


# 第 N 个 / 第 {i} 个 / 第 j 个 … and 第 {l} 层: an ordinal for a 0-based position, layer or head
ORDINAL = re.compile(r"第\s*(\{[^}]*\}|\d+|[A-Za-z])\s*(个|层)")


def test_the_sources_of_chinese_text_are_found():
    catalogue, page = zh_catalogue(), page_chinese()
    assert len(catalogue) > 300 and "lessons.context.text" in catalogue and "figures.hull.trace_title" in catalogue
    assert len(page) > 200 and any("热力图" in s for s in page.values())
    assert ORDINAL.search("第 {l} 层，第 {h} 个头") and ORDINAL.search("第 3 个词元") and ORDINAL.search("第 i 个词")
    assert not ORDINAL.search("层 0，头 2；位置 3；排第 1 名；第一步；第 3 步")


@pytest.mark.parametrize("where", ["catalogue", "page"])
def test_chinese_says_position_layer_head_n_never_an_ordinal(where):
    texts = zh_catalogue() if where == "catalogue" else page_chinese()
    bad = {k: ORDINAL.findall(v) for k, v in texts.items() if ORDINAL.search(v)}
    assert bad == {}


def test_the_words_for_positions_layers_and_heads_are_there():
    catalogue, page = zh_catalogue(), " ".join(page_chinese().values())
    assert "层 {layer} 头 {head}" in catalogue["figures.attention.head_title"]
    assert "位置 {pos}" in catalogue["explain.title_head"]
    assert "层 {l}，头 {h}" in page and "位置 {pa}" in page


def test_the_cue_word_is_a_clue_word_not_a_prompt():
    catalogue = zh_catalogue()
    assert [k for k, v in catalogue.items() if k.startswith("lessons.") and "提示词" in v] == []
    assert [k for k, v in page_chinese().items() if "提示词" in v] == []
    assert catalogue["lessons.context.text"].count("线索词") == 2


@pytest.mark.slow
def test_the_context_lesson_says_clue_word_in_chinese():
    from qkv import lessons

    text = lessons.run("context", lang="zh").text
    assert "线索词" in text and "提示词" not in text and not ORDINAL.search(text)
