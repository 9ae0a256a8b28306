"""The guided tour on models it was not written around, and while it is moved on, in a real browser.

The bundled translator (`qkv serve --ckpt src/qkv/assets/translate`, the command the tour itself prints)
and a tiny random BERT: every step ends in words of the page's language, the steps that need a GPT-like
decoder saying so, never a script's error text. A one-layer GPT: the positions step has no later layer to
name, and says so (never "-Infinity"), and its residual step names its RMSNorm. Leaving a step whose
answer is still on its way: the step shown and the page agree. Leaving the positions step: the page reads
the model with its positions again."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch
from browser_fixtures import browser, open_page, require_chromium  # noqa: F401
from browser_util import free_port, load_page, start_server, stop
from test_pretrained_dirs import bert_dir  # noqa: F401
from test_web_browser_tour import STEPS, wait_step

from qkv.core.hub.bundled import default_ckpt
from qkv.core.model.gpt import GPT
from qkv.core.spec.config import TrainConfig
from qkv.core.train.checkpoint import Writer, load

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess, pytest.mark.slow]

TRANSLATE = "src/qkv/assets/translate"  # as tour_steps.js prints it: relative to the repository's root
ROOT = Path(__file__).resolve().parents[1]
DECODER_STEPS = {"hull", "why_v", "apple", "heads", "positions", "residual", "next"}
JS_ERRORS = ("undefined", "Cannot read", "TypeError", "Infinity", "NaN", "{")


def test_the_printed_translate_command_names_the_bundled_translator():
    assert (ROOT / TRANSLATE / "state.json").exists() or any((ROOT / TRANSLATE).iterdir())


@pytest.fixture(scope="module")
def tour_translator():
    proc, url = start_server("--ckpt", str(ROOT / TRANSLATE), "--port", str(free_port()))
    yield url
    stop(proc)


@pytest.fixture(scope="module")
def tour_encoder(bert_dir):  # noqa: F811
    proc, url = start_server("--ckpt", str(bert_dir[0]), "--port", str(free_port()))
    yield url
    stop(proc)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_walk_the_tour_on_the_translator(browser, tour_translator, lang):
    walk_other(browser, tour_translator, lang)


def test_walk_the_tour_on_an_encoder(browser, tour_encoder):
    walk_other(browser, tour_encoder, "zh")


def walk_other(browser, url, lang):
    pg = open_page(browser, viewport={"width": 1280, "height": 900})
    load_page(pg, url + f"?lang={lang}")
    pg.click("#tour-open")
    for n in range(STEPS):
        got = wait_step(pg, n)
        assert not got["error"], (got["id"], got["error"])
        assert not any(bad in got["body"] for bad in JS_ERRORS), (got["id"], got["body"])
        if got["id"] in DECODER_STEPS:  # said in the page's language, with the command that serves a decoder
            assert "qkv serve" in got["body"] and ("解码器" if lang == "zh" else "decoder") in got["body"], got
        if n < STEPS - 1:
            pg.click("#tour-next")
    assert pg.errors == []


@pytest.fixture(scope="module")
def tour_one_layer(tmp_path_factory):
    """A random GPT of the bundled model's shape but one layer and RMSNorm, with its tokenizer, served."""
    model, tok = load(default_ckpt())
    cfg = dataclasses.replace(model.cfg, n_layers=1, norm="rms")  # and RMSNorm, as Llama's
    torch.manual_seed(0)
    d = tmp_path_factory.mktemp("one-layer")
    w = Writer(d, cfg, TrainConfig(), tok)
    w.save(GPT(cfg), 0)
    w.close()
    proc, url = start_server("--ckpt", str(d), "--port", str(free_port()))
    yield url
    stop(proc)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_positions_on_a_one_layer_model(browser, tour_one_layer, lang):
    pg = open_page(browser, viewport={"width": 1280, "height": 900})
    load_page(pg, tour_one_layer + f"?lang={lang}&tour=6")
    got = wait_step(pg, 5)
    assert got["id"] == "positions" and not got["error"]
    assert not any(bad in got["body"] for bad in JS_ERRORS), got["body"]
    assert ("只有一层" if lang == "zh" else "one layer only") in got["body"]
    pg.click("#tour-next")
    got = wait_step(pg, 6)  # the residual step names the norm this model uses: RMSNorm does not centre
    assert got["id"] == "residual" and "RMSNorm" in got["body"] and "LayerNorm" not in got["body"]
    assert ("不减均值" if lang == "zh" else "not centred") in got["body"]
    assert pg.errors == []


def test_a_step_left_while_measuring_changes_nothing(browser, server):
    pg = open_page(browser, viewport={"width": 1280, "height": 900})
    held, views = [], []
    pg.route("**/api/tour/order", lambda route: held.append(route))  # answered only when the test says
    pg.on("request", lambda r: views.append(r.url) if r.url.endswith("/api/tour/view") else None)
    load_page(pg, server + "?lang=en&tour=6")
    while not held:
        pg.wait_for_timeout(50)
    pg.click("#tour-next")  # on to the residual step while the positions step still waits
    got = wait_step(pg, 6)
    with pg.expect_response("**/api/tour/order"):
        held[0].continue_()
    pg.wait_for_timeout(300)  # the old step's code, had it gone on, would ask for its view now
    pg.wait_for_function("() => document.body.dataset.busy === '0'", polling=50)
    now = wait_step(pg, 6)
    assert now["id"] == "residual" and not now["error"] and views == []
    view = pg.evaluate("qkv.view")
    assert view.get("positions") is None and view["text"] == "我 吃了 苹果 ，"
    assert now["facts"]["query"] == view["tokens"][-1].strip() and now["facts"] == got["facts"]
    assert "Positions off" not in pg.inner_text("#heatmap-title")
    assert pg.errors == []


def test_leaving_the_positions_step_turns_positions_back_on(browser, server):
    pg = open_page(browser, viewport={"width": 1280, "height": 900})
    load_page(pg, server + "?lang=en&tour=6")
    wait_step(pg, 5)
    assert pg.evaluate("qkv.view.positions") == "off" and "Positions off" in pg.inner_text("#heatmap-title")
    notes = pg.eval_on_selector_all(".tour-off-note", "ps => ps.map(p => [p.dataset.for, p.textContent])")
    assert sorted(f for f, _ in notes) == ["lens", "origin"] and all("with its positions" in t for _, t in notes)
    pg.keyboard.press("Escape")
    pg.wait_for_function(
        "() => qkv.view && qkv.view.positions === undefined && document.body.dataset.busy === '0'", polling=50
    )
    assert "Positions off" not in pg.inner_text("#heatmap-title") and pg.query_selector(".tour-off-note") is None
    assert "tour=" not in pg.evaluate("location.search")
    assert pg.errors == []
