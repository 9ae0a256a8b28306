"""Pytest fixtures and page readers shared by the browser tests (tests/test_web_browser*.py).

browser_util (server and page driving) stays free of pytest, for benchmarks/explorer_redraw.py.

One Chromium, one `qkv serve` of the bundled model and one static export of it serve the whole test
session: each test module imports these fixtures, and pytest would make a fixture imported into two
modules two fixtures, so what they hand out is started once per process (`_shared`) and stopped when
the session ends. The tests stay independent: each gets a fresh browser context and page (its own
storage, cache and viewport), no test changes the server's state (it holds the model and answers;
nothing a request does changes a later answer), and the export is only read. A module that needs a
server of its own (another checkpoint, its own settings) starts one in a module fixture.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from browser_util import ARGS, CHROMIUM, free_port, from_module, start_server, stop  # noqa: F401

SENTENCE = "我 投资了 苹果 ，"  # the bundled model's sentence of the shared export
_shared: dict[str, object] = {}  # what one process started, by name, for the whole session


def require_chromium() -> None:
    """Skip the calling test module without Debian's Chromium (and fail under CI=true, which must have it)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            raise RuntimeError(f"{CHROMIUM} is missing: CI must install Debian's chromium (scripts/chromium.sh)")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)", allow_module_level=True)


def _once(config, name: str, start, close):
    """The object `start()` made the first time `name` was asked for in this process; `close(it)`
    runs when the session ends."""
    if name not in _shared:
        it = start()
        _shared[name] = it
        config.add_cleanup(lambda: close(_shared.pop(name)))
    return _shared[name]


@pytest.fixture(scope="session")
def browser(pytestconfig):
    """Headless Chromium (Debian's), one for the session; tests open their own contexts in it."""
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright

    def start():
        p = sync_playwright().start()
        return p, p.chromium.launch(executable_path=CHROMIUM, args=ARGS)

    def close(pair):
        p, b = pair
        b.close()
        p.stop()

    return _once(pytestconfig, "browser", start, close)[1]


@pytest.fixture(scope="session")
def server(pytestconfig):
    """`qkv serve` of the bundled model, one for the session: its base URL. Started as a user starts
    it, with no arguments (port 8000), unless something else holds that port here."""

    def start():
        with socket.socket() as s:
            taken = s.connect_ex(("127.0.0.1", 8000)) == 0
        return start_server(*(["--port", str(free_port())] if taken else []))

    return _once(pytestconfig, "server", start, lambda pair: stop(pair[0]))[1]


@pytest.fixture(scope="session")
def bundled_export(pytestconfig, tmp_path_factory) -> Path:
    """`qkv explain SENTENCE --html FILE` of the bundled model, written once (read-only: copy it to change it)."""

    def start():
        out = tmp_path_factory.mktemp("export") / "attention.html"
        subprocess.run(
            [sys.executable, "-m", "qkv", "explain", SENTENCE, "--html", str(out)],
            check=True,
            capture_output=True,
            text=True,
        )
        return out

    return _once(pytestconfig, "bundled_export", start, lambda out: None)


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
        Object.fromEntries([...r.querySelectorAll('td[data-field]')].map(td => [td.dataset.field, td.textContent.trim()]))])""",
    )
    return {key: fields for key, fields in rows}


def bring_into_view(pg, selector: str) -> None:
    """Scroll a card into view and let the page render it: off-screen cards are not laid out
    (content-visibility: auto), so their innerText reads '' until they come near the viewport."""
    pg.eval_on_selector(selector, "el => el.scrollIntoView({block: 'start'})")
    pg.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    # a lazy panel (panels.js) wakes when its IntersectionObserver reports: wait for that too
    pg.wait_for_function(
        """id => { const p = qkv.panels().find(q => q.name === id); return !p || !p.lazy || p.awake; }""",
        arg=selector.lstrip("#"),
        polling=50,
    )
