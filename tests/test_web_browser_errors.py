"""The server's refusals on the page, in the page's language: switched to Chinese, the page asks in
Chinese (static/api.js sends Accept-Language) and shows the server's Chinese line where the learner is
looking; switched back, English again."""

from __future__ import annotations

import re

import pytest
from browser_fixtures import browser, page, require_chromium  # noqa: F401
from browser_util import act, load_page, refusal

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own

HAN = re.compile("[\u4e00-\u9fff]")


def compare_error(pg) -> str:
    """Run the comparison the compare card holds, and read its error line."""
    pg.eval_on_selector("#compare-run", "el => el.click()")
    pg.wait_for_function("() => { const e = document.querySelector('#compare .card-error'); return e && !e.hidden; }")
    return pg.inner_text("#compare .card-error")


def test_a_refusal_is_shown_in_the_language_the_page_is_switched_to(page, server):
    load_page(page, server + "?lang=en")
    page.wait_for_function("() => document.querySelector('#compare-word').value !== ''")  # the default pair is in
    act(page, lambda: page.click("#lang"))  # to Chinese
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    page.fill("#compare-word", "qqqzzz")  # in neither sentence
    shown = compare_error(page)
    body = {"a": page.input_value("#compare-a"), "b": page.input_value("#compare-b"), "word": "qqqzzz"}
    zh, en = refusal(server, "api/compare", body, "zh"), refusal(server, "api/compare", body, "en")
    assert shown == zh and HAN.search(zh.replace(body["a"], "").replace(body["b"], "")) and "qqqzzz" in zh
    assert zh != en and "is not in the sentence" in en
    # a text the model cannot read at once: the page's own error line, in Chinese too
    page.fill("#text", " ".join(["我"] * 400))
    page.click("#analyze")
    page.wait_for_selector("#error:not([hidden])")
    assert "n_ctx" in page.inner_text("#error") and HAN.search(page.inner_text("#error"))
    # back to English: the next refusal is English
    act(page, lambda: page.click("#lang"))
    page.eval_on_selector("#compare-run", "el => el.click()")
    page.wait_for_function("en => document.querySelector('#compare .card-error').textContent === en", arg=en)
    assert [e for e in page.errors if "the server responded with a status of 400" not in e] == []
