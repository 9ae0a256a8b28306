"""Chinese typed without spaces, in a real browser (issue 32): the text box keeps what the learner
typed (the tokens show how the model cut it), the tokens are the API's (the most probable split, not
the longest word first), and the note names the reader's words read a character at a time."""

from __future__ import annotations

import pytest
from browser_fixtures import bring_into_view, browser, from_module, page, require_chromium  # noqa: F401
from browser_util import act, api, choose, load_page

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own

TYPED = "老师说明天下午三点在图书馆见面。"


def tokens(pg) -> list[str]:
    return pg.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)")


def test_the_text_box_keeps_what_was_typed_and_the_tokens_are_the_apis(page, server):
    load_page(page, server + "?lang=en")
    page.fill("#text", TYPED)  # the focus stays in the box: Enter analyses
    act(page, lambda: page.keyboard.press("Enter"))
    assert page.input_value("#text") == TYPED  # not rewritten as "老师 说 明天 …"
    doc = api(server, "api/view", {"text": TYPED})
    assert tokens(page) == doc["tokens"] and doc["tokens"][:4] == ["老师", "说", "明天", "下午"]
    reqs = from_module(page, "state.js", "m => m.S.req")
    page.dispatch_event("#text", "input")  # as a keystroke that changes nothing: the text shown is not read again
    page.wait_for_timeout(800)  # twice the typing pause (actions.js TYPE_WAIT)
    assert from_module(page, "state.js", "m => m.S.req") == reqs


def test_generation_keeps_the_typed_prompt(page, server):
    load_page(page, server + "?lang=en")
    page.fill("#text", "我吃了苹果，")
    act(page, lambda: page.click("#analyze"))
    page.fill("#temperature", "0")
    page.fill("#max-new", "4")
    act(page, lambda: page.click("#generate"))
    expected = api(server, "api/generate", {"text": "我吃了苹果，", "max_new_tokens": 4, "temperature": 0})
    assert page.input_value("#text") == "我吃了苹果，" + expected["added"]
    assert tokens(page) == api(server, "api/view", {"ids": expected["ids"]})["tokens"]


def test_the_note_names_a_readers_word_read_a_character_at_a_time(page, server):
    pytest.importorskip("jieba")
    load_page(page, server + "?lang=en")
    page.fill("#text", "他在读红楼梦。")
    act(page, lambda: page.click("#analyze"))
    page.wait_for_selector("#unknown:not([hidden])")
    note = page.inner_text("#unknown")
    assert "红楼梦" in note and "single characters" in note, note
    assert page.input_value("#text") == "他在读红楼梦。"


def test_byte_candidates_are_shown_as_bytes_with_a_line_on_why(page, server):
    """After 巅's first byte (a character the model holds no token for) the candidates are bytes that
    continue a character: each is marked a byte, and a line says what they are and why, in both languages."""
    load_page(page, server + "?lang=en")
    page.fill("#text", "他很巅")
    act(page, lambda: page.click("#analyze"))
    doc = api(server, "api/view", {"text": "他很巅"})
    first = next(n for n, tok in enumerate(doc["tokens"]) if tok.startswith("<0x"))
    choose(page, 0, 0, first)
    bars = page.eval_on_selector_all(
        "#next .bar .tok", "ts => ts.map(t => [t.firstChild.textContent, t.classList.contains('byte')])"
    )
    assert any(byte for _, byte in bars) and all(byte == tok.startswith("<0x") for tok, byte in bars), bars
    line = page.inner_text("#next-bytes")
    assert "continues a character" in line and "UTF-8 byte" in line
    act(page, lambda: page.click("#lang"))
    assert "UTF-8 字节" in page.inner_text("#next-bytes") and "接在一个字的中间" in page.inner_text("#next-bytes")


def test_the_side_by_side_boxes_keep_what_was_typed(page, server):
    load_page(page, server + "?lang=en")
    bring_into_view(page, "#side")
    page.wait_for_function("() => +(document.querySelector('#side-result').dataset.ready || 0) > 0", timeout=30_000)
    before = int(page.eval_on_selector("#side-result", "e => +e.dataset.ready"))
    page.fill("#side-a", "我昨天吃了苹果")
    page.fill("#side-b", "我投资了苹果")
    page.click("#side-run")
    page.wait_for_function("n => +document.querySelector('#side-result').dataset.ready > n", arg=before, timeout=30_000)
    assert (page.input_value("#side-a"), page.input_value("#side-b")) == ("我昨天吃了苹果", "我投资了苹果")
