"""Pytest fixtures and page readers shared by the browser tests (tests/test_web_browser*.py).

browser_util (server and page driving) stays free of pytest, for benchmarks/explorer_redraw.py.

One `qkv serve` of the bundled model and one static export of it serve the whole test session
(conftest.py: `server`, `bundled_export`): no test changes the server's state (it holds the model and
answers; nothing a request does changes a later answer), and the export is only read. A module that
needs a server of its own (another checkpoint, its own settings) starts one in a module fixture.

Chromium is started once per test module (`browser`, imported into each): Playwright's synchronous
API keeps an asyncio loop running in the main thread for as long as it is started, so a browser
shared by the whole session would make every later test that runs an event loop of its own
(uvicorn in-process, asyncio.run) fail, depending on the order the tests run in. Each test gets a
fresh browser context and page (its own storage, cache and viewport).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from browser_util import ARGS, CHROMIUM, free_port, from_module, start_server, stop  # noqa: F401


def require_chromium() -> None:
    """Skip the calling test module without Debian's Chromium (and fail under CI=true, which must have it)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            raise RuntimeError(f"{CHROMIUM} is missing: CI must install Debian's chromium (scripts/chromium.sh)")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (Debian's), one for the test module; tests open their own contexts in it."""
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def open_page(browser, **context_args):
    """A page in a new browser context, collecting its script errors in `page.errors`."""
    context = browser.new_context(**context_args)
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.errors = errors
    return pg


@pytest.fixture()
def page(browser):
    pg = open_page(browser, viewport={"width": 1280, "height": 900})
    yield pg
    pg.context.close()


NUMBER = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


FLOAT32 = 1e-5  # relative: the page computes from the view's float32 arrays, the API by another path
#                  (explain; for the static export, in another process): they differ in the last bits


def near(x: float, value: float) -> bool:
    """x, read off the page (4 decimals), is `value` up to that rounding and float32's error."""
    return abs(x - value) <= 5e-5 + FLOAT32 * max(1.0, abs(value))


def shown_equal(text: str, value: float) -> bool:
    """`text` is `value` written as the page writes numbers: 4 decimals, or 3 significant digits below 1e-3."""
    x = float(text)
    if "e" in text.lower():
        return abs(x - value) <= (5e-3 + FLOAT32) * abs(value)
    return near(x, value)


def numbers(text: str) -> list[float]:
    return [float(m) for m in re.findall(NUMBER, text.replace("−", "-"))]


def step_rows(pg) -> dict[int, dict[str, str]]:
    rows = pg.eval_on_selector_all(
        "#steps tr[data-key]",
        """rows => rows.map(r => [+r.dataset.key,
        Object.fromEntries([...r.querySelectorAll('td[data-field]')]
            .map(td => [td.dataset.field, td.textContent.trim()]))])""",
    )
    return {key: fields for key, fields in rows}


def bring_into_view(pg, selector: str) -> None:
    """Scroll a card into view and let the page render it: off-screen cards are not laid out
    (content-visibility: auto), so their innerText reads '' until they come near the viewport.
    A lazy panel (panels.js) wakes when its IntersectionObserver reports; cards above it may still
    grow after the first scroll (a panel that computes at load), pushing it away again, so the
    wait scrolls it back each time it polls and finds the panel still asleep."""
    pg.eval_on_selector(selector, "el => el.scrollIntoView({block: 'start'})")
    pg.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    pg.wait_for_function(
        """id => { const p = qkv.panels().find(q => q.name === id);
                   if (!p || !p.lazy || p.awake) return true;
                   document.getElementById(id).scrollIntoView({block: 'start'}); return false; }""",
        arg=selector.lstrip("#"),
        polling=100,
        timeout=60_000,
    )
