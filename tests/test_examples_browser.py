"""The executed example notebooks, converted to HTML by nbconvert (as `jupyter nbconvert --to html`
does), open in Chromium from disk with the network off, and the explorer of each qkv.show inside them
draws: the tokens, the layer, head and query token the notebook asked for, and the weights of that
query's row, as qkv computes them in Python for the same model and text (tests/test_examples.py runs the
notebooks and records those). The explorer fetches nothing beyond the file; nbconvert's own page asks
for require.js and MathJax from a CDN, which is nbconvert's template and not the view's."""

from __future__ import annotations

import time

import pytest
from browser_fixtures import browser, open_page, require_chromium  # noqa: F401
from test_examples import NOTEBOOKS, run  # noqa: F401

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.subprocess]  # Chromium and a kernel

LOCAL = ("file:", "about:", "data:", "blob:")


def drawn(frame) -> bool:
    """Whether `frame` holds a qkv explorer page (window.qkv, its test hook) that has drawn once."""
    try:
        return frame.evaluate("() => !!window.qkv && +(document.body.dataset.renders || 0) > 0")
    except Exception:  # a frame still loading, or gone
        return False


def explorer_frames(pg, n: int, seconds: float = 60) -> list:
    """The frames whose explorer has drawn, once there are `n` of them (or the time is up)."""
    deadline = time.monotonic() + seconds
    while True:
        frames = [f for f in pg.frames if f != pg.main_frame and drawn(f)]
        if len(frames) >= n or time.monotonic() > deadline:
            return frames
        pg.wait_for_timeout(100)


def weights_column(frame) -> list[float]:
    """The a_j column of the steps card's table, key by key (the Σ row left out)."""
    return frame.evaluate(
        """() => {
          const table = document.querySelector('#steps table');
          const head = [...table.querySelectorAll('tr')[0].children].map(c => c.textContent.trim());
          const col = head.indexOf('aj') >= 0 ? head.indexOf('aj') : head.findIndex(h => /^a\\s*j$/.test(h));
          return [...table.querySelectorAll('tr')].slice(1)
            .filter(r => /^\\d+$/.test(r.children[0].textContent.trim()))
            .map(r => parseFloat(r.children[col].textContent));
        }"""
    )


def painted_colours(frame) -> int:
    """How many different colours the heatmap's canvas holds (a blank canvas: 1)."""
    return frame.evaluate(
        """() => {
          const c = document.querySelector('#heatmap');
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          const seen = new Set();
          for (let i = 0; i < d.length; i += 4) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
          return seen.size;
        }"""
    )


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebooks_html_shows_the_explorer_with_the_right_tokens(browser, run, tmp_path, name):
    from nbconvert import HTMLExporter

    nb, views, _ = run(name)
    page = tmp_path / "notebook.html"
    page.write_text(HTMLExporter().from_notebook_node(nb)[0], encoding="utf-8")
    pg = open_page(browser, offline=True, viewport={"width": 1280, "height": 900})
    fetched = []
    pg.context.on("request", lambda r: fetched.append((r.frame != pg.main_frame, r.url)))
    try:
        pg.goto(page.as_uri())
        frames = explorer_frames(pg, len(views))
        assert len(frames) == len(views) == 1
        frame, want = frames[0], views[0]
        assert frame.evaluate("qkv.mode") == "static"
        assert frame.eval_on_selector_all("#tokens .token", "ts => ts.map(t => t.textContent)") == want["tokens"]
        state = frame.evaluate("[qkv.state.layer, qkv.state.head, qkv.state.token]")
        asked = [want["layer"], want["head"], want["token"]]
        assert [s if a is not None else None for s, a in zip(state, asked)] == asked
        if want["row"] is not None:  # layer, head and token given: the query's row of A, key by key
            shown = weights_column(frame)
            assert len(shown) in (want["token"] + 1, len(want["tokens"]))  # the keys a causal query sees, or all
            assert shown == pytest.approx(want["row"][: len(shown)], abs=1e-4)
        assert painted_colours(frame) > 3
        assert [url for inner, url in fetched if inner and not url.startswith(LOCAL)] == []
    finally:
        pg.context.close()
