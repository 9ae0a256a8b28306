"""The words panels in a real browser: two sentences side by side, the vocabulary browser, and the
compare card's position control. The numbers on the page are checked against the Python API run in
this process (qkv.trace, analysis.vocab, analysis.compare), never against numbers seen in one run."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch
from browser_fixtures import bring_into_view, browser, near, numbers, page, require_chromium  # noqa: F401
from browser_util import act, api, load_page

from qkv.analysis.inputs import read_text
from qkv.core.hub.bundled import default_ckpt
from qkv.core.train.checkpoint import load

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own


@pytest.fixture(scope="module")
def bundled():
    return load(default_ckpt())


def side_ready(pg, before: int = 0):
    pg.wait_for_function(
        "n => +(document.querySelector('#side-result').dataset.ready || 0) > n", arg=before, timeout=30_000, polling=50
    )


def patterns(model, ids, layer, head):
    _, tr = model.run_with_trace(torch.tensor([ids]))
    return tr["pattern", layer][0, head].numpy()  # (T, T)


def check_side(pg, model, tok, a, b):
    """The page's A − B at its layer and head is the model's, and the next-token table is api/side's."""
    side = pg.evaluate("qkv.side")
    layer, head = pg.evaluate("[qkv.state.layer, qkv.state.head]")
    assert [side["layer"], side["head"]] == [layer, head]
    ids = [read_text(tok, s, model.cfg.n_ctx)[1] for s in (a, b)]
    assert side["a"] == [tok.display(i) for i in ids[0]] and side["b"] == [tok.display(i) for i in ids[1]]
    want = patterns(model, ids[0], layer, head) - patterns(model, ids[1], layer, head)
    np.testing.assert_allclose(np.array(side["diff"]).reshape(want.shape), want, atol=2e-6)
    assert side["scale"] == pytest.approx(np.abs(want).max(), abs=2e-6)
    return ids


def test_two_sentences_side_by_side(page, server, bundled):
    model, tok = bundled
    load_page(page, server + "?lang=en")
    side_ready(page)
    bring_into_view(page, "#side")
    a, b = page.input_value("#side-a"), page.input_value("#side-b")
    assert (a, b) == ("我打了你", "你打了我")  # as given (the tokens show the cut: 我 打了 你)
    ids = check_side(page, model, tok, a, b)
    assert "another order" in page.inner_text("#side .side-kind")  # 我 打了 你 / 你 打了 我: the same tokens
    scale = page.evaluate("qkv.side.scale")  # the caption states the difference's colour scale, its largest
    assert f"±{scale:.4f}" in page.inner_text("#side-result .caption") and scale > 0
    # the next-token bars under A and B are each sentence's view, at its last token
    for col, text in (("a", a), ("b", b)):
        view = api(server, "api/view", {"text": text})
        bars = page.query_selector_all(f"#side .side-col[data-col={col}] .bar")
        assert len(bars) == 10
        from qkv.apps.web.view import unpack_view

        arrays = unpack_view(view)
        last = len(view["ids"]) - 1
        for bar, i, p in zip(bars, arrays["next_ids"][last], arrays["next_probs"][last], strict=True):
            assert int(bar.get_attribute("data-id")) == int(i) and near(numbers(bar.inner_text())[-1], float(p))
    # the union table: both probabilities, from the model run here
    doc = api(server, "api/side", {"a": a, "b": b})
    rows = page.query_selector_all("#side table.side-next tbody tr")
    assert [int(r.get_attribute("data-id")) for r in rows] == [r["id"] for r in doc["next"]]
    with torch.no_grad():
        probs = [torch.softmax(model(torch.tensor([x]))[0, -1], -1) for x in ids]
    for row in rows:
        i = int(row.get_attribute("data-id"))
        shown = {f: numbers(row.query_selector(f"[data-field={f}]").inner_text())[0] for f in ("p_a", "p_b", "diff")}
        assert near(shown["p_a"], probs[0][i].item()) and near(shown["p_b"], probs[1][i].item())
        assert near(shown["diff"], (probs[0][i] - probs[1][i]).item())
    # the panel follows the page's layer and head
    before = int(page.eval_on_selector("#side-result", "e => +e.dataset.ready"))
    layer = model.cfg.n_layers - 1
    act(page, lambda: page.select_option("#layer", str(layer)))
    side_ready(page, before)
    before = int(page.eval_on_selector("#side-result", "e => +e.dataset.ready"))
    act(page, lambda: page.select_option("#head", str(model.cfg.n_heads - 1)))
    side_ready(page, before)
    assert page.evaluate("[qkv.side.layer, qkv.side.head]") == [layer, model.cfg.n_heads - 1]
    check_side(page, model, tok, a, b)
    assert page.errors == []


def test_side_of_other_lengths_and_errors_stay_in_the_card(page, server, bundled):
    model, tok = bundled
    load_page(page, server + "?lang=en")
    side_ready(page)
    bring_into_view(page, "#side")
    before = int(page.eval_on_selector("#side-result", "e => +e.dataset.ready"))
    page.fill("#side-a", "我 昨天 吃了 苹果")
    page.fill("#side-b", "我 投资了 苹果")
    page.click("#side-run")
    side_ready(page, before)
    na, nb = (len(read_text(tok, s, model.cfg.n_ctx)[1]) for s in ("我 昨天 吃了 苹果", "我 投资了 苹果"))
    assert na != nb and page.evaluate("qkv.side.diff") is None
    assert page.is_visible("#side-diff-none") and str(na) in page.inner_text("#side-diff-none")
    assert "±" not in page.inner_text("#side-result .caption")  # no difference, so no colour scale to state
    page.fill("#side-a", "")
    page.click("#side-run")
    page.wait_for_selector("#side-error:not([hidden])")
    assert "empty" in page.inner_text("#side-error") and page.is_hidden("#error")
    assert [e for e in page.errors if "status of 400" not in e] == []  # the browser logs the 400s it was answered


def test_the_vocabulary_browser_lists_filters_and_adds(page, server, bundled):
    model, tok = bundled
    load_page(page, server + "?lang=en")
    bring_into_view(page, "#vocab")  # the panel sleeps while off-screen
    page.wait_for_function("() => +document.querySelector('#vocab-list').dataset.ready > 0", timeout=30_000)
    from qkv.analysis.vocab import training_text

    text, _ = training_text(default_ckpt())
    shown = page.eval_on_selector_all(
        "#vocab-list .vtok", "bs => bs.map(b => [+b.dataset.id, b.querySelector('.vc').dataset.count])"
    )
    if text is not None:  # the bundled model's training text: counts, most frequent first
        count = Counter(tok.encode(text))
        assert [int(c) for _, c in shown] == [count[i] for i, _ in shown]
        assert [int(c) for _, c in shown] == sorted((count[i] for i in range(tok.vocab_size)), reverse=True)[
            : len(shown)
        ]
        assert "qkv corpus" in page.inner_text("#vocab-caption")  # "qkv corpus" or "qkv corpus and the HSK ..."
    before = int(page.eval_on_selector("#vocab-list", "e => +e.dataset.ready"))
    page.fill("#vocab-q", "苹")
    page.wait_for_function("n => +document.querySelector('#vocab-list').dataset.ready > n", arg=before, timeout=30_000)
    ids = page.eval_on_selector_all("#vocab-list .vtok", "bs => bs.map(b => +b.dataset.id)")
    assert set(ids) == {i for i in range(tok.vocab_size) if tok.display(i).startswith("苹")} and ids
    before = int(page.eval_on_selector("#vocab-list", "e => +e.dataset.ready"))
    page.select_option("#vocab-match", "substring")
    page.wait_for_function("n => +document.querySelector('#vocab-list').dataset.ready > n", arg=before, timeout=30_000)
    ids = page.eval_on_selector_all("#vocab-list .vtok", "bs => bs.map(b => +b.dataset.id)")
    assert set(ids) == {i for i in range(tok.vocab_size) if "苹" in tok.display(i)}
    page.fill("#text", "我 吃了")
    first = page.query_selector("#vocab-list .vtok:not([disabled])")
    word = first.query_selector(".vt").text_content()  # the card may be off-screen now (not laid out)
    first.click()
    assert page.input_value("#text") == "我 吃了 " + word
    assert page.errors == []


def test_compare_shows_positions_and_the_position_controlled_cosine(page, server, bundled):
    load_page(page, server + "?lang=en")
    page.wait_for_selector("#compare-result [data-stage-pos]")
    body = {k: page.input_value(f"#compare-{k}") for k in ("a", "b", "word")}
    doc = api(server, "api/compare", body)
    for st in doc["stages"]:
        shown = numbers(page.inner_text(f"#compare-result [data-stage-pos='{st['label']}']"))
        assert near(shown[0], st["cosine_pos"]), (st, shown)
        assert near(numbers(page.inner_text(f"#compare-result [data-stage='{st['label']}']"))[0], st["cosine"])
    pos = page.query_selector("#compare-pos")
    assert (pos.get_attribute("class") == "note cpos-differ") is (not doc["same_position"])
    assert str(doc["a"]["pos"]) in pos.inner_text() and str(doc["b"]["pos"]) in pos.inner_text()
    # the word at one position in both: the line says so
    before = int(page.eval_on_selector("#compare-result", "e => +(e.dataset.ready || 0)"))
    page.fill("#compare-a", "我 昨天 吃了 苹果")
    page.fill("#compare-b", "我 上周 投资了 苹果")
    page.fill("#compare-word", "苹果")
    page.click("#compare-run")
    page.wait_for_function(
        "n => +document.querySelector('#compare-result').dataset.ready > n", arg=before, timeout=30_000
    )
    same = api(server, "api/compare", {"a": "我 昨天 吃了 苹果", "b": "我 上周 投资了 苹果", "word": "苹果"})
    assert same["same_position"] and page.get_attribute("#compare-pos", "class") == "cpos"
    caption = page.inner_text("#compare-result .caption")
    assert f"over {same['control']['sentences']} sentences of the {same['control']['reference']}" in caption
    assert page.errors == []


def test_static_export_says_the_panels_need_the_server(browser, bundled_export):
    out = bundled_export
    context = browser.new_context(offline=True)
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        load_page(pg, out.as_uri() + "?lang=en")
        assert pg.evaluate("qkv.mode") == "static"
        bring_into_view(pg, "#side")
        assert "qkv serve" in pg.inner_text("#side-note") and pg.is_disabled("#side-run")
        bring_into_view(pg, "#vocab")
        assert "qkv serve" in pg.inner_text("#vocab-note") and pg.is_disabled("#vocab-q")
        assert pg.query_selector_all("#compare-result [data-stage-pos]")  # the export's compare has the new column
        assert errors == []
    finally:
        context.close()
