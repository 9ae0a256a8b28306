"""What the page tells a learner as they use it, in a real browser (Debian's Chromium, headless, Playwright):
old results marked stale after an error, each error shown where the learner is looking, a phone's
touch and layout (a 390 x 844 touch screen), the sign in the exponent, the language a static export
opens in, generation that reaches n_ctx, the ␣ toggle for a model with whitespace tokens, and the note
for pieces the model never learned as words. Expectations come from the Python API at test time, not
from numbers of one run.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import urllib.request

import pytest
import torch
from browser_fixtures import browser, from_module, numbers, open_page, page, require_chromium  # noqa: F401
from browser_util import act, api, free_port, load_page, settle, start_server, stop

import qkv
from qkv.apps.web.view import unpack_view

SENTENCE = "我 投资了 苹果 ，"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own


@pytest.fixture(scope="module")
def char_server(tmp_path_factory):
    """A tiny char-level GPT (random weights): its tokens include ␣ and the line break."""
    folder = tmp_path_factory.mktemp("char") / "char"
    tok = qkv.CharTokenizer.train("the cat sat on the mat.\nand the dog ran.\n")
    torch.manual_seed(0)
    model = qkv.GPT(qkv.ModelConfig(d_vocab=tok.vocab_size, n_ctx=48, d_model=32, n_heads=2, n_layers=2))
    qkv.save(folder, model, tok)
    proc, url = start_server("--ckpt", str(folder), "--port", str(free_port()))
    yield url
    stop(proc)


@pytest.fixture()
def phone(browser):
    pg = open_page(browser, **PHONE)
    yield pg
    pg.context.close()


def in_view(pg, selector: str) -> bool:
    """The element is shown and lies wholly inside the window."""
    return pg.eval_on_selector(
        selector,
        """el => { const r = el.getBoundingClientRect();
        return !el.hidden && r.width > 0 && r.height > 0 && r.top >= -1 && r.left >= -1 &&
               r.bottom <= window.innerHeight + 1 && r.right <= window.innerWidth + 1; }""",
    )  # 1 px: subpixel layout


def get(url: str, path: str) -> dict:
    return json.loads(urllib.request.urlopen(url + path, timeout=60).read())


def no_script_errors(pg) -> bool:
    """No script error (a 4xx answer the test asked for is logged by the browser, and is no error of the page)."""
    return [e for e in pg.errors if "Failed to load resource" not in e] == []


def analyse(pg, text):
    pg.fill("#text", text)
    act(pg, lambda: pg.click("#analyze"))


# ---------------------------------------------------------------------------
# 1. stale results, 2. errors where the learner is looking
# ---------------------------------------------------------------------------


def test_a_failed_analysis_marks_the_old_results_until_a_new_view(page, server):
    load_page(page, server + "?lang=en")
    analyse(page, SENTENCE)
    tokens = page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)")
    assert page.get_attribute("body", "data-stale") in (None, "0") and page.is_hidden("#stale")
    page.fill("#text", "")
    page.click("#analyze")
    page.wait_for_selector("#stale:not([hidden])")
    assert page.is_visible("#error") and page.get_attribute("body", "data-stale") == "1"
    assert SENTENCE in page.inner_text("#stale")  # says whose results are shown
    for card in (".heatmap-card", ".steps-card", ".next-card"):
        assert float(page.eval_on_selector(card, "el => getComputedStyle(el).opacity")) < 1, card
    assert page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)") == tokens
    page.click("#lang")  # the line follows the language
    assert SENTENCE in page.inner_text("#stale") and page.inner_text("#stale") != ""
    page.click("#lang")
    analyse(page, SENTENCE)  # a new view: unmarked
    assert page.is_hidden("#stale") and page.get_attribute("body", "data-stale") == "0"
    assert float(page.eval_on_selector(".heatmap-card", "el => getComputedStyle(el).opacity")) == 1
    assert page.is_hidden("#error") and no_script_errors(page)


def test_generate_errors_are_shown_in_the_generate_card_in_view(phone, server):
    load_page(phone, server + "?lang=en")
    phone.eval_on_selector("#generate", "el => el.scrollIntoView({block: 'end'})")
    phone.fill("#max-new", "2.5")  # refused by the page: not a whole number
    phone.click("#generate")
    phone.wait_for_selector("#gen .card-error:not([hidden])")
    assert "New tokens" in phone.inner_text("#gen .card-error") and in_view(phone, "#gen .card-error")
    phone.fill("#max-new", "3")
    phone.fill("#top-p", "7")  # refused by the server (422)
    phone.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # the card off-screen: the error is brought in
    phone.eval_on_selector("#generate", "el => el.click()")
    phone.wait_for_function("() => /top_p/.test(document.querySelector('#gen .card-error').textContent)")
    assert in_view(phone, "#gen .card-error") and phone.is_hidden("#error")
    phone.fill("#top-p", "")
    act(phone, lambda: phone.eval_on_selector("#generate", "el => el.click()"))
    assert phone.is_hidden("#gen .card-error")  # cleared by the next attempt


def test_the_texts_error_and_a_cards_error_are_brought_into_view(phone, server):
    load_page(phone, server + "?lang=en")
    phone.fill("#text", "")
    phone.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    from_module(phone, "actions.js", "m => m.analyze('', performance.now())")
    phone.wait_for_selector("#error:not([hidden])")
    assert in_view(phone, "#error")
    # compare's own error: the server's message, inside the compare card, scrolled to from the top
    phone.wait_for_function("() => document.querySelector('#compare-word').value !== ''")  # the default pair is in
    phone.fill("#compare-word", "qqqzzz")  # in neither sentence
    phone.evaluate("window.scrollTo(0, 0)")
    phone.eval_on_selector("#compare-run", "el => el.click()")
    phone.wait_for_selector("#compare .card-error:not([hidden])")
    assert "qqqzzz" in phone.inner_text("#compare .card-error") and in_view(phone, "#compare .card-error")
    assert phone.eval_on_selector("#compare .card-error", "el => el.closest('.card').id") == "compare"
    phone.fill("#compare-word", from_module(phone, "state.js", "m => m.S.compare ? m.S.compare.word : ''") or "苹果")
    phone.eval_on_selector("#compare-run", "el => el.click()")
    phone.wait_for_selector("#compare .card-error", state="hidden")  # cleared by a comparison that works


# ---------------------------------------------------------------------------
# 3. a phone
# ---------------------------------------------------------------------------


def test_on_a_phone_a_tap_leaves_no_tooltip(phone, server):
    load_page(phone, server + "?lang=en")
    settle(phone)
    # row 1, in the canvas
    x, y = from_module(phone, "heatmap.js", "({ heat }) => [heat.x0 + heat.cell / 2, heat.y0 + heat.cell * 1.5]")
    before = phone.evaluate("qkv.state.token")  # the last token
    phone.tap("#heatmap", position={"x": x, "y": y})  # (the browser may move a tap to a neighbouring row)
    phone.wait_for_function("n => qkv.state.token !== n", arg=before)
    assert phone.evaluate("qkv.state.token") in (0, 1, 2)
    phone.wait_for_timeout(200)
    assert phone.is_hidden("#tip")
    # a mouse still gets its tooltip
    box = phone.eval_on_selector("#heatmap", "el => { const r = el.getBoundingClientRect(); return [r.left, r.top]; }")
    phone.dispatch_event(
        "#heatmap", "pointermove", {"pointerType": "mouse", "clientX": box[0] + x, "clientY": box[1] + y}
    )
    assert phone.is_visible("#tip")
    phone.dispatch_event("#heatmap", "touchstart", {})
    assert phone.is_hidden("#tip")


def test_on_a_phone_the_heatmap_follows_the_tokens_and_the_weights_column_fits(phone, server):
    load_page(phone, server + "?lang=en")
    analyse(phone, SENTENCE)
    settle(phone)
    rect = lambda sel: phone.eval_on_selector(
        sel,
        "el => { const r = el.getBoundingClientRect();"
        " return {top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left, right: r.right}; }",
    )
    inp, hm, steps = rect(".input-card"), rect(".heatmap-card"), rect(".steps-card")
    assert inp["bottom"] <= hm["top"] <= inp["bottom"] + 20  # the next card after the text and its tokens
    assert hm["top"] < 844  # starts on the first screen
    assert hm["bottom"] <= steps["top"] <= hm["bottom"] + 20  # then step by step
    for card in (".input-card", ".heatmap-card", ".steps-card", ".gen-card", ".heads-card", ".lines-card"):
        assert phone.eval_on_selector(
            card, "el => el.scrollWidth <= el.clientWidth && el.getBoundingClientRect().right <= 390"
        ), card
    weight = phone.eval_on_selector_all(
        "#steps thead th",
        "ths => ths.map(th => { const r = th.getBoundingClientRect(); return [th.textContent, r.left, r.right]; })",
    )
    a = [w for w in weight if w[0].startswith("a") and "|" not in w[0] and "v" not in w[0]]
    assert len(a) == 1 and 0 <= a[0][1] and a[0][2] <= 390, weight
    wrap = rect("#steps .table-wrap")
    assert wrap["right"] <= 390
    # the weights themselves, in the first row, on screen too
    cell = phone.eval_on_selector("#steps tbody tr td[data-field=weight]", "td => td.getBoundingClientRect().right")
    assert cell <= 390 and no_script_errors(phone)


# ---------------------------------------------------------------------------
# 4. the sign in the exponent
# ---------------------------------------------------------------------------


def negative_max(url):
    """(layer, head, query, m) where the largest visible scaled score m < 0, from the server's view
    document read in Python (the model the server runs)."""
    doc = api(url, "api/view", {"text": SENTENCE})
    dots = unpack_view(doc)["dots"]  # (layer, head, query, key), 0 above the diagonal
    for layer, head, i in itertools.product(*map(range, dots.shape[:3])):
        m = float((dots[layer, head, i, : i + 1] / doc["scale"]).max())
        if m < -1e-3:
            return layer, head, i, m
    return None


def test_the_shift_by_a_negative_maximum_is_written_as_a_plus(page, server):
    found = negative_max(server)
    assert found is not None, "no query of the bundled model has a negative largest score on this sentence"
    layer, head, i, m = found
    load_page(page, server + "?lang=en")
    analyse(page, SENTENCE)
    page.select_option("#layer", str(layer))
    page.select_option("#head", str(head))
    act(page, lambda: page.click(f"#tokens .token[data-pos='{i}']"))
    step2 = page.inner_text("#steps .deriv li:nth-child(2)")
    shift = step2.split("e = exp(")[1].split(")")[0]
    assert "+" in shift and "− -" not in shift and "- -" not in shift, step2
    s, plus = numbers(shift.replace("+", " "))
    assert abs(plus - (-m)) < 1e-3  # + |m|
    assert from_module(page, "steps.js", "m => [m.shiftText(-1, -4.97), m.shiftText(-1, 4.97)]") == [
        "-1.0000 + 4.9700",
        "-1.0000 − 4.9700",
    ]


# ---------------------------------------------------------------------------
# 5. the language of a static export
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en", None])
def test_an_export_opens_in_the_language_it_was_written_in(browser, bundled_export, tmp_path, lang):
    out = tmp_path / "page.html"
    if lang is None:  # written with no --lang: the session's shared export is that file
        out = bundled_export
    else:
        subprocess.run(
            [sys.executable, "-m", "qkv", "explain", SENTENCE, "--html", str(out), "--lang", lang],
            check=True,
            capture_output=True,
            text=True,
        )
    html = out.read_text(encoding="utf-8")
    data = json.loads(html.split('<script id="qkv-data" type="application/json">')[1].split("</script>")[0])
    assert data["lang"] == lang
    context = browser.new_context(offline=True, locale="en-US")  # a browser that would pick English itself
    try:
        pg = context.new_page()
        load_page(pg, out.as_uri())
        assert pg.evaluate("qkv.state.lang") == (lang or "en")
        assert pg.evaluate("document.documentElement.lang") == ("zh-CN" if lang == "zh" else "en")
        expected = {"zh": "分析", "en": "Analyze", None: "Analyze"}[lang]
        assert pg.inner_text("#analyze") == expected
        load_page(pg, out.as_uri() + "?lang=en")  # the address still wins
        assert pg.evaluate("qkv.state.lang") == "en"
    finally:
        context.close()


# ---------------------------------------------------------------------------
# 6. generation that reaches n_ctx
# ---------------------------------------------------------------------------


def test_generation_that_reaches_n_ctx_says_it_stopped(page, server):
    load_page(page, server + "?lang=en")
    n_ctx = get(server, "api/model")["model"][
        "n_ctx"
    ]  # the server's model (the bundled one may be retrained meanwhile)
    T = len(api(server, "api/view", {"text": SENTENCE})["ids"])
    analyse(page, SENTENCE)
    page.fill("#temperature", "0")
    page.fill("#max-new", str(n_ctx))  # more than fits
    act(page, lambda: page.click("#generate"))
    page.wait_for_selector("#gen-stopped:not([hidden])")
    shown = numbers(page.inner_text("#gen-stopped"))
    assert shown[:3] == [n_ctx - T, n_ctx, n_ctx], shown  # made, asked, n_ctx
    assert page.eval_on_selector_all("#tokens .token", "ts => ts.length") == n_ctx
    page.fill("#max-new", "2")
    page.fill("#text", SENTENCE)
    act(page, lambda: page.click("#generate"))
    assert page.is_hidden("#gen-stopped")


# ---------------------------------------------------------------------------
# 7. the ␣ toggle, 1. pieces the model never learned
# ---------------------------------------------------------------------------


def test_a_model_with_whitespace_tokens_gets_a_toggle_that_hides_them(page, char_server):
    load_page(page, char_server + "?lang=en")
    text = "the cat sat\non the mat."
    analyse(page, text)
    tokens = page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)")
    spaces = [n for n, tk in enumerate(tokens) if tk in ("␣", "\\n")]
    assert len(spaces) == text.count(" ") + text.count("\n") and page.is_visible("#space-box")
    assert from_module(page, "heatmap.js", "({ heat }) => [heat.rows.length, heat.cols.length]") == [len(tokens)] * 2
    page.click(f"#tokens .token[data-pos='{spaces[-1]}']")  # a whitespace query, hidden next
    act(page, lambda: page.check("#hide-space"))
    kept = [n for n in range(len(tokens)) if n not in spaces]
    assert from_module(page, "heatmap.js", "({ heat }) => [heat.rows, heat.cols]") == [kept, kept]
    assert page.evaluate("qkv.state.token") == spaces[-1] - 1  # moved to the token before
    shown = page.eval_on_selector_all("#tokens .token", "ts => ts.filter(t => t.offsetParent).map(t => +t.dataset.pos)")
    assert shown == kept
    page.evaluate("document.activeElement.blur()")  # the arrow keys move the query outside form fields
    cur = spaces[-1] - 1
    act(page, lambda: page.keyboard.press("ArrowRight"))  # over the hidden whitespace token
    assert page.evaluate("qkv.state.token") == min(n for n in kept if n > cur)
    act(page, lambda: page.uncheck("#hide-space"))
    assert from_module(page, "heatmap.js", "({ heat }) => heat.rows.length") == len(tokens) and no_script_errors(page)


def test_no_toggle_without_whitespace_tokens(page, server):
    info = get(server, "api/model")["model"]  # its fields are checked against the vocabulary in test_web_api
    load_page(page, server + "?lang=en")
    analyse(page, SENTENCE)
    assert page.is_hidden("#space-box") == (not info["whitespace_tokens"])
    # the hint names spaces as tokens only when they are
    hint = page.inner_text("#hint")
    assert ("not tokens" in hint) == (not info["space_tokens"])


def test_pieces_the_model_never_learned_are_named_under_the_text_box(page, server):
    unknown = [
        {"text": "很好", "pieces": ["很", "好"], "how": "chars", "nearest": ["很", "好吃"]},
        {"text": "榴", "pieces": ["<0xE6>", "<0xA6>", "<0xB4>"], "how": "bytes", "nearest": []},
    ]

    def add_unknown(route):
        # the page asks for the binary body (packing.binary): ask for the JSON one, which the page reads too
        doc = route.fetch(headers={**route.request.headers, "accept": "application/json"}).json()
        doc["unknown"] = unknown
        route.fulfill(json=doc)

    load_page(page, server + "?lang=en")
    analyse(page, SENTENCE)
    assert page.is_hidden("#unknown")  # every piece a word (or an older server without the field)
    page.route("**/api/view", add_unknown)
    analyse(page, SENTENCE)
    note = page.inner_text("#unknown")
    assert "很好" in note and "很 · 好" in note and "很, 好吃" in note and "<0xE6>" in note and "bytes" in note
    assert page.is_visible("#unknown") and page.is_visible("#tokens .token")  # a note, not an error
    page.click("#lang")
    zh = page.inner_text("#unknown")
    assert "很好" in zh and "很、好吃" in zh and "不是模型学过的词" in zh
    page.click("#lang")
    page.unroute("**/api/view")
    analyse(page, SENTENCE)
    assert page.is_hidden("#unknown") and no_script_errors(page)


@pytest.mark.parametrize("typed", ["我吃了苹果，味道很好", "I ate an apple", "我打你"])
def test_what_a_learner_types_is_read_as_the_python_api_reads_it(page, server, typed):
    """Typed as a learner types it (no spaces, capitals, words the corpus lacks): the page shows the
    tokens the tokenizer gives, names the pieces that are no word with the API's nearest words, and
    shows no error; the next-token row at the last token is the model's."""
    from qkv.analysis.inputs import read_text
    from qkv.core.hub.bundled import default_ckpt
    from qkv.core.text.tokenizers.unknown import unknown_pieces

    model, tok = qkv.load(default_ckpt())
    _, ids = read_text(tok, typed, model.cfg.n_ctx)
    load_page(page, server + "?lang=en")
    analyse(page, typed)
    assert page.is_hidden("#error")
    shown = page.eval_on_selector_all("#tokens .token", "bs => bs.map(b => b.textContent)")
    assert shown == [tok.display(i) for i in ids]
    assert page.evaluate("qkv.view.ids") == ids
    expected = unknown_pieces(tok, typed)
    if expected:  # 好, 打, an: each named with the nearest known words
        note = page.inner_text("#unknown")
        for piece in expected:
            assert piece["text"] in note and all(w in note for w in piece["nearest"])
    else:
        assert page.is_hidden("#unknown")
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor([ids]))[0, -1], -1)
    top = int(probs.argmax())
    act(page, lambda: page.click(f"#tokens .token[data-pos='{len(ids) - 1}']"))  # the card opens elsewhere
    first = page.query_selector("#next [data-id]")
    assert first is not None and int(first.get_attribute("data-id")) == top
