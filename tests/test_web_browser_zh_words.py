"""The page in Chinese says what a Chinese reader reads (issue 32): the header's symbols beside their
words (向量宽度 d_model, 上下文长度 n_ctx), layers and heads as 层 0 / 头 0 (the head grid: numbers under a
层＼头 corner), the patching sites with their words beside the names (from the catalogue, via /api/model),
and English again after the switch."""

from __future__ import annotations

import pytest
from browser_fixtures import bring_into_view, browser, page, require_chromium  # noqa: F401
from browser_util import load_page

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess, pytest.mark.slow]


def texts(pg, selector: str) -> list[str]:
    return pg.eval_on_selector_all(selector, "els => els.map(e => e.textContent)")


def test_the_chinese_page_says_its_symbols_layers_heads_and_sites_in_chinese(page, server):  # noqa: F811
    load_page(page, server + "?lang=zh")
    line = page.inner_text("#model-line")
    assert "向量宽度 d_model 128" in line and "每个头的宽度 d_head 32" in line and "上下文长度 n_ctx 64" in line
    assert texts(page, "#heads .axis") == ["层＼头", "0", "1", "2", "3", "0", "1", "2", "3"]
    bring_into_view(page, "#patch")
    page.wait_for_function("() => document.querySelector('#patch table.patch-map')", timeout=60_000)
    assert texts(page, "#patch-site option")[:2] == ["进入本块的残差流 resid_pre", "注意力的输出 attn_out"]
    assert [t for t in texts(page, "#patch table.patch-map tbody th")] == ["层 0", "层 1", "层 2", "层 3"]
    page.click("#lang")  # English: the names and the labels as before
    page.wait_for_function("() => document.documentElement.lang === 'en'")
    assert "d_model 128 · d_head 32 · n_ctx 64" in page.inner_text("#model-line")
    assert texts(page, "#heads .axis")[:3] == ["", "h0", "h1"]
    bring_into_view(page, "#patch")
    page.wait_for_function("() => document.querySelector('#patch-site option').textContent === 'resid_pre'")
    assert page.errors == []
