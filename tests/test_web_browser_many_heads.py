"""The explorer on a model with many heads, in a real browser (Debian's Chromium, headless, Playwright).

A random Qwen2-family directory of Qwen2.5-0.5B's depth and width in heads (24 layers x 14 heads, 2 of
them key/value heads; d_model 56, a byte-level vocabulary of ~300), built by transformers offline and
served by `qkv serve --ckpt DIR`. The grid of head thumbnails scrolls inside its card (the page never
gets wider than the window), only the thumbnails in or near its view are drawn, the others once
scrolled to, a click still chooses a head, and the header names the model (its directory) with its
parameter count as the Python API counts it and its layers x heads, in English and in Chinese.
"""

from __future__ import annotations

import os

import pytest
from browser_fixtures import browser, open_page, require_chromium  # noqa: F401
from browser_util import act, free_port, load_page, settle, start_server, stop

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own

L, H = 24, 14
NAME = "tiny-qwen2-24x14"
SENTENCE = "The cat sat on the warm mat"
DRAWN = "() => document.querySelectorAll('#heads canvas[data-drawn]').length"


def build_model_dir(d):
    """A random Qwen2ForCausalLM of L layers x H heads (seeded) with a byte-level tokenizer.json, saved as
    transformers saves it (config.json, model.safetensors, generation_config.json)."""
    import torch
    from llm_dirs import byte_level_tokenizer

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    tok = byte_level_tokenizer()
    config = transformers.Qwen2Config(
        vocab_size=320,
        hidden_size=56,
        intermediate_size=64,
        num_hidden_layers=L,
        num_attention_heads=H,
        num_key_value_heads=2,
        max_position_embeddings=128,
        initializer_range=0.2,  # peaked patterns: thumbnails that differ
    )
    torch.manual_seed(0)
    model = transformers.Qwen2ForCausalLM(config).eval()
    model.save_pretrained(d)
    tok.save(str(d / "tokenizer.json"))
    return d


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """(base URL of `qkv serve` on the model, its parameter count from the Python API)."""
    from qkv.core.hub.pretrained import load_pretrained

    d = build_model_dir(tmp_path_factory.mktemp("many") / NAME)
    model, _ = load_pretrained(d)
    n = sum(p.numel() for p in model.parameters())
    proc, url = start_server("--ckpt", str(d), "--port", str(free_port()))
    yield url, n
    stop(proc)


def compact_en(n: int) -> str:
    """The page's short form of a count in English: 3 significant digits, K, M or B."""
    for p, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= p:
            return f"{float(f'{n / p:.3g}'):g} {unit}"
    return f"{n:,}"


def compact_zh(n: int) -> str:
    for p, unit in ((1e8, "亿"), (1e4, "万")):
        if n >= p:
            return f"{float(f'{n / p:.3g}'):g} {unit}"
    return f"{n:,}"


def boxes(pg) -> dict:
    """The page's width, the grid's scroll box, its card, and the drawn thumbnails' rectangles."""
    return pg.evaluate(
        """() => { const box = document.querySelector('#heads'), r = (e) => e.getBoundingClientRect().toJSON();
        return { page: document.documentElement.scrollWidth, window: innerWidth, box: r(box),
          card: r(box.closest('.card')), sh: box.scrollHeight, ch: box.clientHeight,
          drawn: [...box.querySelectorAll('canvas[data-drawn]')].map(r) }; }"""
    )


def test_many_heads_grid_scrolls_draws_lazily_and_selects(browser, many):
    url, n = many
    pg = open_page(browser, viewport={"width": 1280, "height": 800})
    try:
        load_page(pg, url + "?lang=en")
        pg.fill("#text", SENTENCE)
        act(pg, lambda: pg.click("#analyze"))
        settle(pg)
        pg.wait_for_function(f"() => ({DRAWN})() > 0", polling=50)

        # the header: the directory's name, the parameters as the Python API counts them, layers x heads
        assert pg.inner_text("#model-name") == NAME
        size = pg.inner_text("#model-size")
        assert int(pg.get_attribute("#model-size", "data-parameters")) == n
        assert f"{compact_en(n)} parameters" in size and f"{L} layers × {H} heads" in size, size
        assert f"{n:,} parameters" in pg.get_attribute("#model-size", "title")

        # the grid scrolls inside its card; the page is no wider than the window
        b = boxes(pg)
        assert b["page"] <= b["window"], b
        assert b["sh"] > b["ch"] and b["box"]["right"] <= b["card"]["right"] + 0.5, b
        assert pg.eval_on_selector_all("#heads canvas", "cs => cs.length") == L * H
        # only the thumbnails in or near the grid's view are drawn
        before = len(b["drawn"])
        assert 0 < before < L * H, before
        reach = 48 + 40  # observer margin + a row
        assert all(c["top"] < b["box"]["bottom"] + reach and c["bottom"] > b["box"]["top"] - reach for c in b["drawn"])
        assert pg.query_selector(f"#heads canvas[data-layer='{L - 1}'][data-drawn]") is None

        # scrolled to its end: the last layers are drawn too, the page has not moved
        y = pg.evaluate("scrollY")
        pg.eval_on_selector("#heads", "box => { box.scrollTop = box.scrollHeight; }")
        last = f"#heads canvas[data-layer='{L - 1}'][data-head='{H - 1}']"
        pg.wait_for_selector(last + "[data-drawn]", state="attached", timeout=5_000)
        assert pg.evaluate(DRAWN) > before and pg.evaluate("scrollY") == y

        # a click on a thumbnail chooses its head (Playwright scrolls the page to show it first)
        act(pg, lambda: pg.click(last))
        y = pg.evaluate("scrollY")
        assert pg.evaluate("[qkv.state.layer, qkv.state.head]") == [L - 1, H - 1]
        assert "on" in pg.get_attribute(last, "class") and f"layer {L - 1}, head {H - 1}" in pg.inner_text(
            "#heatmap-title"
        )

        # choosing layer 0 in the select scrolls the grid (not the page) back to its thumbnail
        act(pg, lambda: pg.select_option("#layer", "0"))
        first = f"#heads canvas[data-layer='0'][data-head='{H - 1}']"
        pg.wait_for_function(
            """sel => { const c = document.querySelector(sel).getBoundingClientRect(),
                b = document.querySelector('#heads').getBoundingClientRect();
                return c.top >= b.top && c.bottom <= b.bottom; }""",
            arg=first,
            polling=50,
            timeout=5_000,
        )
        assert pg.query_selector(first + "[data-drawn]") and pg.evaluate("scrollY") == y
        assert pg.errors == []
    finally:
        pg.context.close()


def test_many_heads_on_a_phone_in_chinese(browser, many):
    url, n = many
    pg = open_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        load_page(pg, url + "?lang=zh")
        pg.fill("#text", "我昨天在超市买了三个苹果")
        act(pg, lambda: pg.click("#analyze"))
        settle(pg)
        assert pg.inner_text("#model-name") == NAME
        size = pg.inner_text("#model-size")
        assert f"{compact_zh(n)}个参数" in size and f"{L} 层 × 每层 {H} 个头" in size, size
        b = boxes(pg)
        assert b["page"] <= b["window"], b
        # the heads card is screens below the heatmap on a phone: none of its thumbnails is drawn yet
        assert b["drawn"] == [] and b["card"]["top"] > 844
        pg.eval_on_selector("#heads", "el => el.closest('.card').scrollIntoView({block: 'start'})")
        pg.wait_for_function(f"() => ({DRAWN})() > 0", polling=50, timeout=5_000)
        b = boxes(pg)
        assert 0 < len(b["drawn"]) < L * H and b["page"] <= b["window"], b
        assert b["box"]["right"] <= b["card"]["right"] + 0.5 and b["sh"] > b["ch"], b
        assert not pg.is_hidden("#heads-note") and "滚动" in pg.inner_text("#heads-note")
        act(pg, lambda: pg.click("#heads canvas[data-layer='2'][data-head='5']"))
        assert pg.evaluate("[qkv.state.layer, qkv.state.head]") == [2, 5]
        assert pg.errors == []
    finally:
        pg.context.close()
