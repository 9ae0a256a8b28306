"""The guided tour in a real browser: walked whole in Chinese and in English, and at each step what the page
selected and says is held against the Python API run in this process (the model's own patterns, norms and
probabilities, qkv.apps.web.head_roles, qkv.analysis.cross_attention; positions off against the model with
its position table zeroed), never against numbers seen in one run. Then the keyboard and the address, and a
phone's screen."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from browser_fixtures import browser, open_page, require_chromium  # noqa: F401
from browser_util import act, load_page
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_web_tour_routes import patterns, zeroed

from qkv.analysis.cross_attention import explain_translation
from qkv.analysis.inputs import read_text
from qkv.apps.web.head_roles import head_roles
from qkv.apps.web.view import unpack_view
from qkv.core.hub.bundled import default_ckpt, default_translate_ckpt
from qkv.core.train.checkpoint import load

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess, pytest.mark.slow]

FOOD, COMPANY = "我 吃了 苹果 ，", "我 投资了 苹果 ，"
ORDER = ("我 打了 你 ，", "你 打了 我 ，")
STEPS = 10


@pytest.fixture(scope="module")
def ref():
    model, tok = load(default_ckpt())
    model.eval()
    ids = {s: read_text(tok, s, model.cfg.n_ctx)[1] for s in (FOOD, COMPANY, *ORDER)}
    return {"model": model, "tok": tok, "ids": ids, "P": {s: patterns(model, i) for s, i in ids.items()}}


def wait_step(pg, n: int) -> dict:
    pg.wait_for_function(
        "n => { const t = document.querySelector('#tour'); return t && !t.hidden && t.dataset.index === String(n)"
        " && t.dataset.ready === '1' && document.body.dataset.busy === '0'; }",
        arg=n,
        timeout=60_000,
        polling=50,
    )
    return pg.evaluate(
        "() => { const t = document.querySelector('#tour'); return {id: t.dataset.step, error: t.dataset.error,"
        " facts: t.dataset.facts ? JSON.parse(t.dataset.facts) : {},"
        " body: document.querySelector('#tour-body').innerText,"
        " count: document.querySelector('#tour-count').textContent, state: qkv.state, search: location.search}; }"
    )


def shown(x: str, value: float) -> bool:
    return abs(float(x) - value) <= 6e-5 + 1e-5 * abs(value)


def check_worked(pg, ref, got):
    weights = pg.evaluate("qkv.playground.steps().weights")
    want = np.exp([math.log(2), 0, 0]) / np.exp([math.log(2), 0, 0]).sum()
    np.testing.assert_allclose(weights, want, atol=1e-12)
    assert got["facts"] == {"a": "1/2, 1/4, 1/4", "z": "(1, 1)"}


def check_hull(pg, ref, got):
    P = ref["P"][FOOD]
    L, T = P.shape[0], P.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        bits = -np.nansum(np.where(P[L - 1] > 0, P[L - 1] * np.log2(P[L - 1]), 0), axis=(1, 2))
    head = int(np.argmin(bits))
    assert [got["state"][k] for k in ("layer", "head", "token")] == [L - 1, head, T - 1]
    j = int(np.argmax(P[L - 1, head, T - 1]))
    assert got["facts"]["key"] == ref["tok"].display(ref["ids"][FOOD][j])
    assert shown(got["facts"]["weight"], P[L - 1, head, T - 1, j])


def check_why_v(pg, ref, got):
    P = ref["P"][FOOD].copy()
    i = P.shape[-1] - 1
    P[:, :, i, i] = -1  # not the query itself
    layer, head, j = np.unravel_index(np.argmax(P[:, :, i, :]), P[:, :, i, :].shape)
    assert [got["state"]["layer"], got["state"]["head"], got["state"]["token"]] == [layer, head, i]
    assert got["facts"]["key"] == ref["tok"].display(ref["ids"][FOOD][j])


def check_apple(pg, ref, got):
    tokens = [ref["tok"].display(i) for i in ref["ids"][COMPANY]]
    a, cue = tokens.index("苹果"), tokens.index("投资了")
    W = ref["P"][COMPANY][:, :, a, cue]
    layer, head = np.unravel_index(np.argmax(W), W.shape)
    assert [got["state"]["layer"], got["state"]["head"], got["state"]["token"]] == [layer, head, a]
    assert shown(got["facts"]["w_a"], W[layer, head])
    food = [ref["tok"].display(i) for i in ref["ids"][FOOD]]
    assert shown(got["facts"]["w_b"], ref["P"][FOOD][layer, head, food.index("苹果"), food.index("吃了")])
    roles = head_roles(ref["model"], ref["tok"])
    cue = np.array([[lab["masses"]["cue"] for lab in row] for row in roles["labels"]])
    same = tuple(np.unravel_index(np.argmax(cue), cue.shape)) == (layer, head)
    en = "lang=en" in got["search"]
    assert (("names the same head" if en else "也正是这个头") in got["facts"]["lesson"]) == same


def check_heads(pg, ref, got):
    roles = head_roles(ref["model"], ref["tok"])
    masses = np.array([[lab["masses"]["previous"] for lab in row] for row in roles["labels"]])
    layer, head = np.unravel_index(np.argmax(masses), masses.shape)
    assert [got["state"]["layer"], got["state"]["head"]] == [layer, head]
    cue = np.array([[lab["masses"]["cue"] for lab in row] for row in roles["labels"]])
    cl, ch = np.unravel_index(np.argmax(cue), cue.shape)
    assert (f"layer {cl}, head {ch}" if "lang=en" in got["search"] else f"层 {cl}、头 {ch}") in got["facts"]["list"]


def view_pattern(pg):
    return unpack_view(pg.evaluate("qkv.view"))["pattern"]


def check_positions(pg, ref, got):
    model = ref["model"]
    off = patterns(zeroed(model), ref["ids"][ORDER[0]])
    np.testing.assert_allclose(view_pattern(pg), off, atol=2e-6)  # the page draws the positions-off view
    i = off.shape[-1] - 1
    row = off[0, :, i, :].copy()
    row[:, i] = -1
    assert [got["state"]["layer"], got["state"]["head"], got["state"]["token"]] == [0, int(np.argmax(row.max(1))), i]
    off_b = patterns(zeroed(model), ref["ids"][ORDER[1]])
    leak = np.abs(off_b[:, :, i][:, :, [2, 1, 0, 3]] - off[:, :, i]).max(axis=(1, 2))
    assert shown(got["facts"]["leak0"], leak[0]) and leak[0] < 1e-6
    assert shown(got["facts"]["leak_max"], leak[1:].max()) and got["facts"]["leak_layer"] == 1 + int(
        np.argmax(leak[1:])
    )
    act(pg, lambda: pg.click("#tour [data-order='1,1']"))  # 你打我, positions on: the ordinary view
    pg.wait_for_function("() => document.body.dataset.busy === '0'", polling=50)
    np.testing.assert_allclose(view_pattern(pg), ref["P"][ORDER[1]], atol=2e-6)
    assert pg.get_attribute("#tour [data-order='1,1']", "aria-pressed") == "true"


def check_residual(pg, ref, got):
    model, ids = ref["model"], ref["ids"][FOOD]
    L = model.cfg.n_layers
    names = [f"blocks.{n}.{h}" for n in range(L) for h in ("hook_attn_out", "hook_resid_pre")]
    with torch.no_grad():
        _, tr = model.run_with_trace(torch.tensor([ids]), names=names)
    ratio = [
        (tr[f"blocks.{n}.hook_attn_out"][0, -1].norm() / tr[f"blocks.{n}.hook_resid_pre"][0, -1].norm()).item()
        for n in range(L)
    ]
    assert got["state"]["layer"] == int(np.argmax(ratio)) and got["state"]["token"] == len(ids) - 1
    assert shown(got["facts"]["ratio"], max(ratio))
    assert "LayerNorm" in got["body"] and "RMSNorm" not in got["body"]  # the bundled model's norm, named


def check_next(pg, ref, got):
    model, tok, ids = ref["model"], ref["tok"], ref["ids"][FOOD]
    with torch.no_grad():
        p = torch.softmax(model(torch.tensor([ids]))[0, -1].double(), -1)
    top = torch.topk(p, 2)
    assert [got["facts"]["top1"], got["facts"]["top2"]] == [tok.display(int(i)) for i in top.indices]
    assert shown(got["facts"]["p1"], top.values[0].item())
    ratio = (top.values[0] / top.values[1]).item()
    assert float(got["facts"]["ratio_cold"]) == pytest.approx(ratio**2, rel=1e-3)


def check_translate(pg, ref, got):
    tr_model, tr_tok = load(default_translate_ckpt())
    want = explain_translation(tr_model.eval(), tr_tok, COMPANY)
    assert (got["facts"]["layer"], got["facts"]["head"]) == (want["layer"], want["head"])
    words = [r for r in want["reads"] if any(c.isalnum() for c in r["token"])]
    best = max(words, key=lambda r: r["top_weight"])
    assert (got["facts"]["word"], got["facts"]["source_word"]) == (best["token"], best["top_token"])
    cells = pg.eval_on_selector_all("#tour .tour-cross tr.chosen td", "tds => tds.map(td => +td.dataset.w)")
    np.testing.assert_allclose(cells, [r["weight"] for r in best["rows"]], atol=1e-6)


def check_llm(pg, ref, got):
    assert got["facts"]["cmd"] == "qkv serve --ckpt smollm2" and "qkv serve --ckpt smollm2" in got["body"]
    assert got["facts"]["model"] in got["body"]  # the model served, named (the bundled one)


CHECKS = [check_worked, check_hull, check_why_v, check_apple, check_heads, check_positions, check_residual,
          check_next, check_translate, check_llm]  # fmt: skip


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_walk_the_whole_tour(browser, server, ref, lang):
    pg = open_page(browser, viewport={"width": 1280, "height": 900})
    load_page(pg, server + f"?lang={lang}")
    pg.click("#tour-open")
    ids = []
    for n, check in enumerate(CHECKS):
        got = wait_step(pg, n)
        assert not got["error"], (got["id"], got["error"])
        assert (
            got["count"] == f"{n + 1} / {STEPS}"
            and f"tour={n + 1}" in got["search"]
            and f"lang={lang}" in got["search"]
        )
        assert "{" not in got["body"], got["body"]  # every field filled
        check(pg, ref, got)
        ids.append(got["id"])
        if n < STEPS - 1:
            pg.click("#tour-next")
    assert ids == ["worked", "hull", "why_v", "apple", "heads", "positions", "residual", "next", "translate", "llm"]
    pg.click("#tour-next")  # the last step's button closes the tour
    assert pg.is_hidden("#tour") and "tour=" not in pg.evaluate("location.search")
    assert pg.errors == []


def test_keyboard_and_address(browser, server):
    pg = open_page(browser, viewport={"width": 1280, "height": 900})
    load_page(pg, server + "?lang=en&tour=3")  # a shared address opens on its step
    assert wait_step(pg, 2)["id"] == "why_v"
    token = pg.evaluate("qkv.state.token")
    pg.keyboard.press("ArrowRight")
    assert wait_step(pg, 3)["id"] == "apple"
    pg.keyboard.press("ArrowLeft")
    got = wait_step(pg, 2)
    assert got["state"]["token"] == token  # the arrows moved the tour, not the query token
    pg.keyboard.press("Escape")
    pg.wait_for_function("() => document.querySelector('#tour').hidden", polling=50)
    search = pg.evaluate("location.search")  # the tour's key gone; the view's keys (address.js) stay
    assert "tour=" not in search and "lang=en" in search
    assert pg.errors == []


def test_phone_screen(browser, server):
    pg = open_page(browser, viewport={"width": 375, "height": 667}, is_mobile=True, has_touch=True)
    load_page(pg, server + "?lang=zh")
    button = pg.locator("#tour-open").bounding_box()
    assert button and button["x"] + button["width"] <= 375 and button["y"] >= 0
    pg.tap("#tour-open")
    for n in range(STEPS):
        got = wait_step(pg, n)
        panel = pg.locator("#tour").bounding_box()
        assert panel["x"] >= 0 and panel["x"] + panel["width"] <= 375 + 0.5
        assert panel["height"] <= 0.6 * 667 and panel["y"] + panel["height"] <= 667 + 0.5
        nxt = pg.locator("#tour-next").bounding_box()
        assert nxt["y"] >= panel["y"] and nxt["y"] + nxt["height"] <= 667 + 0.5  # reachable without scrolling
        if got["id"] != "translate":  # the card the step points at starts above the panel (translate's is in it)
            top = _focus_top_above(pg, panel["y"])  # the page scrolls it there after the step is ready
            assert top is not None and 0 <= top["top"] < panel["y"], got["id"]
        if n < STEPS - 1:
            pg.tap("#tour-next")
    assert pg.errors == []


def _focus_top_above(pg, y: float):
    """The focused card's box once it starts above `y` (waiting up to 5 s for the scroll), else as it is then."""
    box = "(document.querySelector('.tour-focus') || {getBoundingClientRect: () => null}).getBoundingClientRect()"
    try:
        pg.wait_for_function(f"y => {{ const b = {box}; return b && b.top >= 0 && b.top < y; }}", arg=y, timeout=5_000)
    except PlaywrightTimeout:
        pass  # the assertion after says what the box is
    return pg.evaluate(box)


def test_language_switch_mid_tour(browser, server):
    pg = open_page(browser, viewport={"width": 1280, "height": 900})
    load_page(pg, server + "?lang=en&tour=6")
    got = wait_step(pg, 5)
    assert got["id"] == "positions" and "Positions off" in pg.inner_text("#heatmap-title")
    act(pg, lambda: pg.click("#lang"))
    got = wait_step(pg, 5)
    assert "位置" in pg.inner_text("#tour-title") and "位置：关" in pg.inner_text("#heatmap-title")
    assert "关位置" in pg.inner_text("#tour .tour-leak") and "我打了你" in pg.inner_text("#tour .tour-toggles")
    assert pg.get_attribute("#tour [data-order='0,0']", "aria-pressed") == "true"  # still the view shown
    assert "lang=zh" in got["search"] and "tour=6" in got["search"]
    assert pg.errors == []


def test_no_tour_in_a_static_export(browser, bundled_export):
    pg = open_page(browser, viewport={"width": 1280, "height": 900})
    load_page(pg, bundled_export.as_uri())
    assert pg.is_hidden("#tour-open") and pg.is_hidden("#tour")  # no server to measure with
    assert pg.errors == []
