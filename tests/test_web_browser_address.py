"""The page's view in its address (static/address.js) in a real browser: a reload of the address, or a fresh
page opened at it, shows the same view (tokens, layer, head, token, the open panel and its input); the back
button walks through the views; a link made for another model says so in one line; "Export this view" saves
a page that, opened from disk with every network request failing the test, shows the same view, and that
page keeps its view in its own address and exports itself again offline."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from browser_fixtures import bring_into_view, browser, open_page, page, require_chromium  # noqa: F401
from browser_util import act, api, choose, load_page

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own

TEXT = "我 昨天 吃了 苹果"  # not the page's first example: the address must carry it


def query(pg) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(pg.url).query, keep_blank_values=True).items()}


def wait_query(pg, key: str, value: str) -> None:
    """Until the address holds key=value (it is written once the redraw is painted)."""
    pg.wait_for_function(
        "([k, v]) => new URLSearchParams(location.search).get(k) === v", arg=[key, value], timeout=10_000
    )


def tokens(pg) -> list[str]:
    return pg.eval_on_selector_all("#tokens .token", "bs => bs.map(b => b.textContent)")


def state(pg) -> list[int]:
    return pg.evaluate("[qkv.state.layer, qkv.state.head, qkv.state.token]")


def analyse(pg, text: str) -> None:
    pg.fill("#text", text)
    act(pg, lambda: pg.press("#text", "Enter"))


def attribution_for(pg, target: str) -> None:
    """Open the attribution panel and ask for `target`'s logit, then wait for its answer."""
    bring_into_view(pg, "#attribution")
    pg.fill("#attr-target", target)
    pg.press("#attr-target", "Enter")
    pg.wait_for_function("() => document.querySelector('#attribution').dataset.state === 'ready'", timeout=30_000)
    pg.wait_for_function("() => new URLSearchParams(location.search).get('panel') === 'attribution'", timeout=5_000)


def wait_view(pg, want: list[int]) -> None:
    pg.wait_for_function(
        "w => JSON.stringify([qkv.state.layer, qkv.state.head, qkv.state.token]) === JSON.stringify(w)",
        arg=want,
        timeout=30_000,
        polling=50,
    )


def test_a_fresh_page_at_the_address_shows_the_same_view(page, browser, server):  # noqa: F811
    load_page(page, server + "?lang=en&class=3a")
    analyse(page, TEXT)
    choose(page, 1, 1, 2)
    attribution_for(page, "苹果")
    wait_query(page, "token", "2")
    q = query(page)
    assert q["text"] == TEXT and (q["layer"], q["head"], q["token"]) == ("1", "1", "2")
    assert q["panel"] == "attribution" and q["attribution.target"] == "苹果"
    assert q["model"] == "bundled" and q["lang"] == "en" and q["class"] == "3a"  # a key it does not own is kept
    shown = tokens(page)
    assert shown == api(server, "api/view", {"text": TEXT})["tokens"]
    fresh = open_page(browser, viewport={"width": 1280, "height": 900})
    try:
        load_page(fresh, page.url)
        wait_view(fresh, [1, 1, 2])
        assert tokens(fresh) == shown and fresh.input_value("#text") == TEXT
        assert fresh.eval_on_selector("#attribution", "el => el.dataset.open") == "1"
        assert fresh.input_value("#attr-target") == "苹果"
        fresh.wait_for_function(
            "() => document.querySelector('#attribution').dataset.state === 'ready'", timeout=30_000
        )
        assert "苹果" in fresh.inner_text("#attr-h")  # the panel computed for the kept target, not its default
        assert fresh.query_selector("#attr-h .attr-default") is None
        assert query(fresh) == q  # the page wrote back the view it shows: nothing lost
        assert fresh.errors == []
    finally:
        fresh.context.close()
    page.reload()
    load_page(page, page.url)
    wait_view(page, [1, 1, 2])
    assert tokens(page) == shown and page.input_value("#attr-target") == "苹果"


PANEL_INPUTS = {  # what a shared link gives each panel (15 values: within the address's 16)
    "side.a": "我 吃了 苹果",
    "side.b": "他 吃了 苹果",
    "patch.clean": "我 吃了 苹果",
    "patch.corrupt": "他 吃了 苹果",
    "patch.answer": "苹果",
    "patch.wrong": "我",
    "patch.site": "attn_out",
    "vocab.q": "苹",
    "vocab.match": "substring",
    "ablate.off": "0/1 1/0",
    "compare.a": "我 吃了 苹果",
    "compare.b": "他 投资了 苹果",
    "compare.word": "苹果",
    "transform.proj": "k",
    "origin.key": "1",
}
FIELDS = {
    "side.a": "#side-a",
    "side.b": "#side-b",
    "patch.clean": "#patch-clean",
    "patch.corrupt": "#patch-corrupt",
    "patch.answer": "#patch-answer",
    "patch.wrong": "#patch-wrong",
    "patch.site": "#patch-site",
    "vocab.q": "#vocab-q",
    "vocab.match": "#vocab-match",
    "compare.a": "#compare-a",
    "compare.b": "#compare-b",
    "compare.word": "#compare-word",
    "transform.proj": "#tf-proj",
}


def test_each_panel_gets_back_its_inputs(page, server):  # noqa: F811
    link = {"text": TEXT, "layer": "1", "head": "1", "token": "3", "panel": "side", "lang": "en", **PANEL_INPUTS}
    load_page(page, server + "?" + urlencode(link))
    wait_view(page, [1, 1, 3])
    for key, sel in FIELDS.items():
        assert page.input_value(sel) == PANEL_INPUTS[key], key
    assert page.eval_on_selector("#side", "el => el.dataset.open") == "1"
    page.wait_for_function("() => qkv.side && qkv.side.a.length === 3", timeout=30_000)
    assert page.evaluate("[qkv.side.a, qkv.side.b]") == [["我", "吃了", "苹果"], ["他", "吃了", "苹果"]]  # computed
    page.wait_for_function("() => document.querySelectorAll('#compare-result .csent').length === 2", timeout=30_000)
    assert "投资了" in page.inner_text("#compare-result")  # the comparison of the link's sentences
    bring_into_view(page, "#ablate")
    page.wait_for_function("() => document.querySelectorAll('#ablate button.ab-head.off').length === 2", timeout=30_000)
    off = page.eval_on_selector_all(
        "#ablate button.ab-head.off", "bs => bs.map(b => b.dataset.layer + '/' + b.dataset.head)"
    )
    assert off == ["0/1", "1/0"]
    assert query(page) == {**link, "model": "bundled"}  # written back whole


def test_the_back_button_walks_through_the_views(page, server):  # noqa: F811
    load_page(page, server + "?lang=en")
    first = tokens(page)
    start = state(page)
    act(page, lambda: page.select_option("#layer", "1"))
    act(page, lambda: page.select_option("#head", "1"))
    analyse(page, TEXT)
    assert tokens(page) != first
    page.go_back()
    page.wait_for_function(
        "f => JSON.stringify([...document.querySelectorAll('#tokens .token')].map(b => b.textContent))"
        " === JSON.stringify(f)",
        arg=first,
        timeout=30_000,
        polling=50,
    )
    wait_view(page, [1, 1, start[2]])
    assert page.input_value("#text") != TEXT
    page.go_back()
    wait_view(page, [1, 0, start[2]])
    page.go_back()
    wait_view(page, start)
    assert query(page)["layer"] == "0"
    page.go_forward()
    wait_view(page, [1, 0, start[2]])
    assert page.errors == []


def test_a_link_for_another_model_says_so_in_one_line(page, server):  # noqa: F811
    load_page(page, server + "?model=gpt2-xl&layer=1&head=99&token=-1&lang=en")
    last = page.evaluate("document.querySelectorAll('#head option').length") - 1
    wait_view(page, [1, last, len(tokens(page)) - 1])  # the head clamped to this model's last; -1: the last token
    note = page.inner_text("#address-note")
    assert "made for the model “gpt2-xl”" in note and "bundled" in note.lower() and "\n" not in note.strip()
    assert query(page)["model"] == "bundled"  # the address now names what is shown
    load_page(page, server + "?model=gpt2-xl&lang=zh")
    assert "「gpt2-xl」" in page.inner_text("#address-note")
    page.click("#lang")  # the line follows the page's language
    assert "made for the model “gpt2-xl”" in page.inner_text("#address-note")
    load_page(page, server + "?model=%3Cb%3Ex%3C%2Fb%3E&lang=en")  # a link's words are text, never markup
    assert "<b>x</b>" in page.inner_text("#address-note") and page.query_selector("#address-note b") is None


def test_a_text_too_long_for_an_address_leaves_a_note_there(page, server):  # noqa: F811
    load_page(page, server + "?lang=en")
    first = tokens(page)
    long = "我" + " " * 1200 + "苹果"  # 1,203 characters, 2 tokens: more than the address keeps (TEXT_MAX)
    analyse(page, long)
    assert tokens(page) == ["我", "苹果"]  # the view works
    wait_query(page, "long", str(len(long)))
    q = query(page)
    assert "text" not in q and q["long"] == str(len(long)) and len(page.url) < 1000
    load_page(page, page.url)  # opened from it: a line says so, and the page shows its first example
    assert f"{len(long)} characters" in page.inner_text("#address-note")
    assert tokens(page) == first


def export(pg, path) -> None:
    with pg.expect_download(timeout=60_000) as download:
        pg.click("#export-view")
    name = download.value.suggested_filename  # what, the text's first words, where: qkv-view-我投资了苹果，-L1H0.html
    assert re.fullmatch(r"qkv-view-[^-/\\]+-L\d+H\d+\.html", name), name
    download.value.save_as(path)


def open_offline(browser, path, query_string: str = ""):  # noqa: F811
    """The file opened from disk, every request that is not file: recorded (the test fails on any)."""
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    asked = []
    context.on("request", lambda r: None if r.url.startswith(("file:", "blob:", "data:")) else asked.append(r.url))
    context.route(
        "**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_()
    )
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    load_page(pg, path.as_uri() + query_string)
    pg.asked = asked
    return pg


def test_the_exported_view_opens_offline_on_the_same_view(page, browser, server, tmp_path):  # noqa: F811
    load_page(page, server + "?lang=zh")
    analyse(page, TEXT)
    choose(page, 1, 1, 2)
    attribution_for(page, "苹果")
    shown = tokens(page)
    export(page, tmp_path / "view.html")
    off = open_offline(browser, tmp_path / "view.html")
    try:
        assert off.evaluate("qkv.mode") == "static" and off.evaluate("qkv.state.lang") == "zh"
        wait_view(off, [1, 1, 2])
        assert tokens(off) == shown
        assert off.eval_on_selector("#attribution", "el => el.dataset.open") == "1"
        assert off.input_value("#attr-target") == "苹果"
        q = query(off)  # the file keeps its view in its own address
        assert (q["layer"], q["head"], q["token"], q["panel"]) == ("1", "1", "2", "attribution")
        act(off, lambda: off.select_option("#head", "0"))
        wait_query(off, "head", "0")
        again = open_offline(browser, tmp_path / "view.html", "?" + urlsplit(off.url).query)
        wait_view(again, [1, 0, 2])  # a file:// address reloads the same view
        again.context.close()
        export(off, tmp_path / "again.html")  # the static page writes itself again, with no server
        twice = open_offline(browser, tmp_path / "again.html")
        wait_view(twice, [1, 0, 2])
        assert tokens(twice) == shown and twice.input_value("#attr-target") == "苹果"
        assert twice.asked == [] and twice.errors == []
        twice.context.close()
        assert off.asked == [] and off.errors == []
    finally:
        off.context.close()


def test_a_translation_models_part_is_kept(browser, tmp_path):  # noqa: F811
    from browser_util import free_port, start_server, stop
    from test_explain_seq2seq import SOURCE, tiny_translator

    proc, url = start_server("--ckpt", str(tiny_translator(tmp_path)), "--port", str(free_port()))
    pg = open_page(browser, viewport={"width": 1280, "height": 900})
    try:
        load_page(pg, url + "?lang=en")
        analyse(pg, SOURCE)
        act(pg, lambda: pg.select_option("#part", "encoder"))
        act(pg, lambda: pg.click("#tokens .token[data-pos='1']"))
        wait_query(pg, "token", "1")
        q = query(pg)
        assert q["part"] == "encoder" and q["token"] == "1" and q["text"] == SOURCE
        fresh = open_page(browser, viewport={"width": 1280, "height": 900})
        load_page(fresh, pg.url)
        fresh.wait_for_function("() => qkv.state.part === 'encoder' && qkv.state.token === 1", timeout=30_000)
        assert fresh.input_value("#part") == "encoder" and tokens(fresh) == SOURCE.split()
        pg.go_back()
        pg.wait_for_function("() => qkv.state.part === 'encoder' && qkv.state.token !== 1", timeout=30_000)
        pg.go_back()
        pg.wait_for_function("() => qkv.state.part === 'cross'", timeout=30_000)
        assert fresh.errors == [] and pg.errors == []
        fresh.context.close()
        for crafted in ("__proto__", "constructor"):  # an inherited property of the parts is no part
            odd = open_page(browser, viewport={"width": 1280, "height": 900})
            load_page(odd, url + f"?lang=en&text={SOURCE}&part={crafted}&layer=0&head=0")
            odd.wait_for_function("() => qkv.state.part === 'cross'", timeout=30_000)
            assert odd.errors == [] and odd.is_hidden("#error"), (crafted, odd.errors)
            odd.context.close()
    finally:
        pg.context.close()
        stop(proc)
