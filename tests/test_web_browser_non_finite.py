"""The explorer over a model whose numbers overflow (the bundled weights ×1e30, as a diverged run
leaves them): the page draws without a script error, says that the numbers are NaN or infinite, in
English and in Chinese, and its panels still answer (core/finite.py)."""

from __future__ import annotations

import pytest
import torch
from browser_fixtures import browser, page, require_chromium  # noqa: F401
from browser_util import free_port, from_module, load_page, start_server, stop

from qkv.core.hub.bundled import BUNDLED
from qkv.core.train.checkpoint import load, save

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own


@pytest.fixture(scope="module")
def huge_server(tmp_path_factory):
    model, tok = load(BUNDLED)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1e30)
    d = tmp_path_factory.mktemp("huge") / "ckpt"
    save(d, model, tok)
    proc, url = start_server("--ckpt", str(d), "--port", str(free_port()))
    yield url
    stop(proc)


def test_page_says_the_numbers_are_not_finite(page, huge_server, tmp_path):  # noqa: F811
    load_page(page, huge_server + "?lang=en")
    note = page.locator("#non-finite")
    assert note.is_visible()
    assert "NaN or infinite" in note.inner_text() and "arrays." in note.inner_text()
    assert page.locator("#tokens .token").count() == len(page.evaluate("qkv.view.tokens")) > 0
    assert page.evaluate("document.body.dataset.nonFinite") == "1"  # each card's title is marked
    # a NaN weight is painted in its own colour, not as the darkest (largest) one of the ramp
    first = from_module(page, "heatmap.js", "m => Array.from(m.heat.img.data.slice(0, 3))")
    nan = from_module(page, "paint.js", "m => m.NOT_A_NUMBER")
    assert first == nan
    page.screenshot(path=str(tmp_path / "en.png"), full_page=True)
    page.click("#lang")
    assert "NaN 或无穷大" in note.inner_text()
    page.screenshot(path=str(tmp_path / "zh.png"), full_page=True)
    assert page.errors == []
