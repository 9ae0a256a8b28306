"""The explorer on a translation model, in a real browser (Debian's Chromium, headless, Playwright).

A `qkv serve --ckpt` process serves the tiny zh->en model of test_explain_seq2seq. The page shows the
source, its translation, and the cross-attention of the last decoder layer's sharpest head (as
`qkv explain` chooses): the heatmap's rows are the target words, its columns the source words (read
off the tooltips), the step table's numbers are /api/explain's (computed by another path), switching
the head changes them, and the decoder's and the encoder's self-attention can be chosen instead. The
static export opens from disk with the network off.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from browser_fixtures import browser, from_module, near, page, require_chromium, shown_equal, step_rows  # noqa: F401
from browser_util import act, api, choose, free_port, load_page, start_server, stop
from test_explain_seq2seq import SOURCE, tiny_translator

WRITTEN = ["grandpa", "ate", "some", "banana", ".", "</s>"]
require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    return tiny_translator(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def server(ckpt):
    proc, url = start_server("--ckpt", str(ckpt), "--port", str(free_port()))
    yield url
    stop(proc)


def hover_cell(pg, i: int, j: int) -> str:
    """Move the mouse to the heatmap's cell (query i, key j) and return the tooltip's text."""
    box = pg.eval_on_selector("#heatmap", "c => { const r = c.getBoundingClientRect(); return [r.left, r.top]; }")
    x0, y0, cell = from_module(pg, "heatmap.js", "({ heat }) => [heat.x0, heat.y0, heat.cell]")
    pg.mouse.move(box[0] + x0 + (j + 0.5) * cell, box[1] + y0 + (i + 0.5) * cell)
    pg.wait_for_selector("#tip:not([hidden])")
    return pg.inner_text("#tip")


def check_steps(pg, url, layer, head, token) -> list[float]:
    """The step table of the page is /api/explain's for this cross-attention head; returns its weights."""
    doc = api(url, "api/explain", {"text": SOURCE, "layer": layer, "head": head, "token": token})
    assert doc["kind"] == "translation" and (doc["layer"], doc["head"], doc["token"]) == (layer, head, token)
    rows = step_rows(pg)
    assert sorted(rows) == list(range(len(SOURCE.split())))  # every source word is a key: no mask
    for r in doc["attention"]["rows"]:
        shown = rows[r["pos"]]
        assert shown["token"] == r["token"] == SOURCE.split()[r["pos"]]
        for field in ("dot", "scaled", "weight"):
            assert shown_equal(shown[field], r[field]), (field, r["pos"], shown[field], r[field])
    assert shown_equal(pg.inner_text("#z-norm").strip(), doc["z"]["norm"])
    total = pg.inner_text("#steps tfoot td:nth-child(7)").strip()  # Σ a_j: the row of weights adds up to 1
    assert shown_equal(total, doc["attention"]["weight_sum"]) and near(float(total), 1.0)
    return [r["weight"] for r in doc["attention"]["rows"]]


def test_the_page_shows_the_cross_attention_of_a_translation(page, server):
    load_page(page, server + "?lang=en")  # it opens on the first example, as qkv explain would show it
    first = page.input_value("#text")
    default = api(server, "api/explain", {"text": first})  # the last decoder layer, its sharpest head
    state = page.evaluate("qkv.state")
    assert (state["part"], state["layer"], state["head"], state["token"]) == (
        "cross",
        1,
        default["head"],
        default["token"],
    )
    page.fill("#text", SOURCE)
    act(page, lambda: page.click("#analyze"))  # a new text keeps the layer and head
    assert page.inner_text("#translation-text") == "grandpa ate some banana ."
    assert "translation model" in page.inner_text("#model-line") and page.is_disabled("#generate")
    tokens = page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent.trim())")
    assert tokens == WRITTEN  # the queries: what each target step writes
    default = api(server, "api/explain", {"text": SOURCE})
    assert page.evaluate("[qkv.state.layer, qkv.state.token]") == [1, default["token"]]
    choose(page, layer=1, head=default["head"], token=default["token"])

    view = api(server, "api/view", {"text": SOURCE})
    assert from_module(page, "state.js", "({ S }) => [S.T, S.Tk]") == [6, 5]  # target × source
    for i, j in [(0, 0), (3, 2), (5, 4)]:
        tip = hover_cell(page, i, j)
        assert f"query {i} “{WRITTEN[i]}” → key {j} “{SOURCE.split()[j]}”" in tip.replace("\n", " "), tip
    assert view["source"]["tokens"] == SOURCE.split() and view["target"]["written"] == WRITTEN

    before = check_steps(page, server, 1, default["head"], default["token"])
    other = 1 - default["head"]
    choose(page, layer=1, head=other, token=default["token"])
    after = check_steps(page, server, 1, other, default["token"])
    assert max(abs(a - b) for a, b in zip(before, after)) > 1e-3  # another head weighs the source otherwise
    choose(page, layer=0, head=1, token=1)
    check_steps(page, server, 0, 1, 1)
    assert page.errors == []


def test_the_decoders_and_the_encoders_self_attention_can_be_chosen(page, server):
    load_page(page, server + "?lang=en")
    page.fill("#text", SOURCE)
    act(page, lambda: page.click("#analyze"))
    choose(page, layer=0, head=0, token=3)
    act(page, lambda: page.select_option("#part", "decoder"))
    rows = step_rows(page)
    assert sorted(rows) == [0, 1, 2, 3] and [rows[j]["token"] for j in range(4)] == ["<s>", "grandpa", "ate", "some"]
    shape = from_module(page, "state.js", "({ S }) => [S.T, S.Tk, qkv.state.token]")
    assert shape == [6, 6, 3]  # the causal mask: keys up to the query
    assert "some" in page.inner_text("#next-title") and page.query_selector("#next .bar[data-rank='1']")
    act(page, lambda: page.select_option("#part", "encoder"))
    rows = step_rows(page)
    assert [rows[j]["token"] for j in sorted(rows)] == SOURCE.split()
    assert page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent.trim())") == SOURCE.split()
    assert page.query_selector("#next-none")  # the encoder predicts no word
    act(page, lambda: page.click("#lang"))
    assert "编码器自注意力" in page.inner_text("#heatmap-title") and "原文" in page.inner_text("#next")
    assert page.errors == []


def test_static_export_of_a_translation_model_works_offline(browser, tmp_path, ckpt, server):
    out = tmp_path / "translate.html"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "qkv",
            "explain",
            "--ckpt",
            str(ckpt),
            SOURCE,
            "--html",
            str(out),
            "--layer",
            "0",
            "--head",
            "1",
            "--token",
            "-3",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    requests = []
    context.on("request", lambda r: requests.append(r.url))
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        load_page(pg, out.as_uri() + "?lang=zh")
        assert pg.evaluate("[qkv.mode, qkv.state.part, qkv.state.layer, qkv.state.head, qkv.state.token]") == [
            "static",
            "cross",
            0,
            1,
            3,
        ]
        assert "译文" in pg.inner_text("#translation") and pg.is_hidden("#compare")
        check_steps(pg, server, 0, 1, 3)
        assert [u for u in requests if not u.startswith("file:")] == [] and errors == []
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_unsure_translation_is_said_beside_it(browser, lang):
    """The bundled translator on the issue's invented sentence: the page says, in the page's language,
    which word it was unsure of and how sure; on a held-out sentence of the corpus it says nothing."""
    from qkv.core.hub.bundled import default_translate_ckpt
    from qkv.core.text.corpus import pairs

    proc, url = start_server("--ckpt", str(default_translate_ckpt()), "--port", str(free_port()))
    try:
        pg = browser.new_page()
        load_page(pg, url + f"?lang={lang}")
        for text in ("妈妈今天买了三斤香蕉。", pairs("heldout")[0].text("zh"), "小明说：“我昨天吃了苹果，味道很甜！”"):
            doc = api(url, "api/view", {"text": text})
            pg.fill("#text", text)
            act(pg, lambda: pg.click("#analyze"))
            assert pg.inner_text("#translation-text") == doc["translation"]
            note = pg.query_selector("#translation-unsure")
            assert (note is not None) == doc["unsure"], text
            left = pg.query_selector("#translation-left-out")
            assert (left is not None) == bool(doc["left_out"]), text
            if left is not None:
                assert all(m in left.inner_text() for m in doc["left_out"])
            if note is not None:
                said = note.inner_text()
                assert f"{doc['weakest']}" in said and f"{doc['confidence']:.2f}" in said
                assert ("没有把握" in said) == (lang == "zh") and ("unsure" in said) == (lang == "en")
        # a sentence it refuses: the translation shown is the previous sentence's, and it is dimmed as such
        pg.fill("#text", "我打龘你")
        pg.click("#analyze")
        pg.wait_for_selector("#stale:not([hidden])")
        faded = pg.eval_on_selector("#translation", "e => +getComputedStyle(e).opacity")
        assert faded < 1 and pg.inner_text("#translation-text") == doc["translation"]
        pg.close()
    finally:
        stop(proc)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_words_no_source_word_yields_are_marked_with_the_rule(browser, lang, tmp_path):
    """The bundled translator on the learner's sentence: the words of its translation that no source word
    yields (the document's honesty) are marked in the translation, named under it with the rule, in the
    page's language; a faithful translation has no mark and says so."""
    from qkv.core.hub.bundled import default_translate_ckpt

    proc, url = start_server("--ckpt", str(default_translate_ckpt()), "--port", str(free_port()))
    try:
        pg = browser.new_page()
        load_page(pg, url + f"?lang={lang}")
        for text in ("这家店的苹果又大又甜，才五块钱一斤！", "他是我的老师。"):
            doc = api(url, "api/view", {"text": text})
            h = doc["honesty"]
            pg.fill("#text", text)
            act(pg, lambda: pg.click("#analyze"))
            assert pg.inner_text("#translation-text") == doc["translation"]  # the marks change no word
            marked = pg.eval_on_selector_all("#translation-text mark.invented", "ms => ms.map(m => m.textContent)")
            assert marked == [doc["translation"].split()[i] for i in h["invented"]], text
            said = pg.inner_text("#translation-honesty")
            assert ("规则" in said) == (lang == "zh") and ("Rule" in said) == (lang == "en")
            assert all(w in said for w in h["words"])
            if not h["words"]:
                assert ("每个实词" in said) == (lang == "zh") and ("Every content word" in said) == (lang == "en")
        pg.fill("#text", "这家店的苹果又大又甜，才五块钱一斤！")
        act(pg, lambda: pg.click("#analyze"))
        assert "levothyroxine" in pg.inner_text("#translation-honesty")
        pg.eval_on_selector("#translation", "e => e.scrollIntoView()")
        pg.screenshot(path=str(tmp_path / f"honesty-{lang}.png"))
        pg.close()
    finally:
        stop(proc)
