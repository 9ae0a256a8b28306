"""qkv.show in Chromium (qkv.apps.notebook): the text/html opened from a file, and the widget's ES
module rendered by a host page with a fake anywidget model, each draw the heatmap with the text's
tokens (read off the heatmap's own tooltip); two views in one page keep their own; the iframe grows to
the page; the theme follows the host's (JupyterLab, VS Code, the background behind the view); the still
picture is seen exactly where the iframe is gone."""

from __future__ import annotations

import json
import re

import pytest
from browser_fixtures import browser, require_chromium  # noqa: F401

import qkv
from qkv.apps.notebook import show as show_mod

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.slow]

A = "我 投资了 苹果 ，"
B = "我 昨天 吃了 苹果"


@pytest.fixture(scope="module")
def bundled():
    return qkv.load()


@pytest.fixture(scope="module")
def shown(bundled):
    return qkv.show(*bundled, A, layer=1, head=2, lang="en")


def new_page(browser, **kw):
    context = browser.new_context(viewport={"width": 1100, "height": 900}, **kw)
    pg = context.new_page()
    pg.errors, pg.requests = [], []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    context.on("request", lambda r: pg.requests.append(r.url))
    return pg


# The heatmap's tokens as the heatmap itself says them: the pointer moved down its last column reads
# each row's query in the tooltip, moved along its last row each column's key.
READ_HEATMAP = r"""() => {
  const cv = document.getElementById("heatmap"), r = cv.getBoundingClientRect(), tip = document.getElementById("tip");
  const at = (x, y) => {
    cv.dispatchEvent(new PointerEvent("pointermove", { clientX: x, clientY: y, pointerType: "mouse", bubbles: true }));
    const m = tip.hidden ? null : /(\d+)\s*[“「](.*?)[”」]\s*→\D*(\d+)\s*[“「](.*?)[”」]/.exec(tip.textContent);
    return m && { i: +m[1], q: m[2], j: +m[3], k: m[4] };
  };
  const rows = [], cols = [];
  for (let y = r.top + 1; y < r.bottom; y += 2) {
    const c = at(r.right - 6, y);
    if (c && (!rows.length || rows[rows.length - 1][0] !== c.i)) rows.push([c.i, c.q]);
  }
  for (let x = r.left + 1; x < r.right; x += 2) {
    const c = at(x, r.bottom - 6);
    if (c && (!cols.length || cols[cols.length - 1][0] !== c.j)) cols.push([c.j, c.k]);
  }
  return { rows: rows.map(p => p[1]), cols: cols.map(p => p[1]), theme: document.documentElement.dataset.theme || null,
           renders: +document.body.dataset.renders, height: Math.ceil(document.body.getBoundingClientRect().height),
           paper: getComputedStyle(cv).backgroundColor, bg: getComputedStyle(document.body).backgroundColor };
}"""


def explorers(pg, n: int) -> list[dict]:
    """What each of the n explorer iframes of the page draws, in document order."""
    pg.wait_for_function(
        """n => { const fs = [...document.querySelectorAll('iframe')];
                  return fs.length === n && fs.every(f => f.getBoundingClientRect().height > 1000); }""",
        arg=n,
        timeout=60_000,
    )
    out = []
    for handle in pg.query_selector_all("iframe"):
        frame = handle.content_frame()
        frame.wait_for_function("() => +(document.body.dataset.renders || 0) > 0", timeout=60_000)
        out.append({**frame.evaluate(READ_HEATMAP), "frame_height": handle.bounding_box()["height"]})
    return out


def test_the_html_opened_from_a_file_draws_each_view(bundled, browser, tmp_path):
    a, b = (show_mod.view_of(*bundled, text, lang="en") for text in (A, B))
    page = tmp_path / "notebook.html"
    page.write_text(
        f'<!doctype html><meta charset="utf-8"><body style="background:#111">{a.fallback_html()}{b.fallback_html()}',
        encoding="utf-8",
    )
    pg = new_page(browser, offline=True)
    pg.goto(page.as_uri())
    drawn = explorers(pg, 2)
    for view, got in zip((a, b), drawn):
        assert got["rows"] == view.tokens and got["cols"] == view.tokens  # each its own text
        assert got["theme"] == "dark"  # the background behind the view is dark
        assert abs(got["frame_height"] - got["height"]) <= 2  # the iframe is as tall as its page
    assert pg.errors == [] and pg.requests == [page.as_uri()]
    pg.context.close()


def test_a_translation_models_still_is_the_head_its_page_opens_on(browser, tmp_path):
    mt, words = qkv.load("src/qkv/assets/translate")
    view = show_mod.view_of(mt, words, A, lang="en")
    page = tmp_path / "translation.html"
    page.write_text(f'<!doctype html><meta charset="utf-8"><body>{view.fallback_html()}', encoding="utf-8")
    pg = new_page(browser, offline=True)
    pg.goto(page.as_uri())
    (got,) = explorers(pg, 1)
    frame = pg.query_selector("iframe").content_frame()
    assert frame.evaluate("[qkv.state.layer, qkv.state.head]") == [view.layer, view.head]
    assert got["cols"] == view.tokens  # the source words are the keys of the cross-attention
    pg.context.close()


def host_page(views: dict[str, show_mod.View], body: str = "") -> str:
    """A page that imports the widget's module and renders it as anywidget does, with a fake model."""
    state = {name: {"page": v.page, "title": v.title()} for name, v in views.items()}
    divs = "".join(f'<div id="{name}"></div>' for name in views)
    payload = json.dumps(state).replace("<", "\\u003c")  # cannot close the script element
    return f"""<!doctype html><meta charset="utf-8"><body {body}>{divs}
<script type="module">
import widget from "./widget.js";
const state = {payload};
window.models = {{}};
for (const [name, s] of Object.entries(state)) {{
  const on = {{}};
  const model = {{ get: (k) => s[k], on: (ev, fn) => {{ (on[ev] = on[ev] || []).push(fn); }}, off() {{}} }};
  window.models[name] = model;
  widget.render({{ model, el: document.getElementById(name) }});
}}
</script>"""


def open_host(browser, views, body=""):
    pg = new_page(browser)
    served = {"http://qkv.test/": host_page(views, body), "http://qkv.test/widget.js": show_mod.front_end()}
    kinds = {"http://qkv.test/": "text/html", "http://qkv.test/widget.js": "text/javascript"}

    def answer(route):
        url = route.request.url
        if url in served:
            route.fulfill(status=200, content_type=kinds[url], body=served[url])
        else:
            route.abort()

    pg.route("**/*", answer)
    pg.goto("http://qkv.test/")
    return pg


def test_the_widget_draws_two_views_each_with_its_own_tokens(bundled, browser):
    a, b = (show_mod.view_of(*bundled, text, lang="zh") for text in (A, B))
    pg = open_host(browser, {"a": a, "b": b}, 'data-jp-theme-light="true"')
    drawn = explorers(pg, 2)
    for view, got in zip((a, b), drawn):
        assert got["rows"] == view.tokens and got["cols"] == view.tokens
        assert got["theme"] == "light" and abs(got["frame_height"] - got["height"]) <= 2
    titles = pg.eval_on_selector_all("iframe", "fs => fs.map(f => [f.title, f.getAttribute('sandbox')])")
    assert titles == [[v.title(), "allow-scripts allow-downloads"] for v in (a, b)]
    assert pg.errors == [] and set(pg.requests) == {"http://qkv.test/", "http://qkv.test/widget.js"}
    pg.context.close()


@pytest.mark.parametrize(
    "body, theme",
    [
        ('data-jp-theme-light="false"', "dark"),  # JupyterLab
        ('class="vscode-dark"', "dark"),  # VS Code
        ('class="vscode-light" style="background:#111"', "light"),  # VS Code's word wins over the colour
        ('style="background:#1e1e1e"', "dark"),  # elsewhere: the background behind the view
        ("", "light"),
    ],
)
def test_the_widget_follows_the_notebooks_theme(bundled, browser, body, theme):
    view = show_mod.view_of(*bundled, A, lang="en")
    pg = open_host(browser, {"a": view}, body)
    (got,) = explorers(pg, 1)
    assert got["theme"] == theme and got["rows"] == view.tokens
    if theme == "dark":  # the page is dark; the heatmap keeps its light paper, so its ink reads
        assert got["bg"] == "rgb(21, 24, 30)" and got["paper"] == "rgb(248, 250, 252)"
    assert pg.errors == []
    pg.context.close()


def test_the_page_turns_dark_when_the_notebook_does_and_keeps_its_view(bundled, browser):
    view = show_mod.view_of(*bundled, A, lang="en")
    pg = open_host(browser, {"a": view}, 'data-jp-theme-light="true"')
    assert explorers(pg, 1)[0]["theme"] == "light"
    pg.evaluate("document.body.dataset.jpThemeLight = 'false'")
    frame = pg.query_selector("iframe").content_frame()
    frame.wait_for_function("() => document.documentElement.dataset.theme === 'dark'", timeout=30_000)
    frame.wait_for_function("() => +(document.body.dataset.renders || 0) > 0", timeout=30_000)
    assert frame.evaluate(READ_HEATMAP)["rows"] == view.tokens
    pg.context.close()


def test_the_still_picture_shows_exactly_where_the_iframe_is_gone(shown, browser, tmp_path):
    text_html = shown._repr_mimebundle_()[0]["text/html"]
    # as GitHub's viewer shows it: no iframe, no script, no style attribute
    stripped = re.sub(r"<iframe\b.*?</iframe>|<script\b.*?</script>", "", text_html, flags=re.S)
    stripped = re.sub(r'\sstyle="[^"]*"', "", stripped)
    hit = """() => { const img = document.querySelector('.qkv-still img'), r = img.getBoundingClientRect();
                     const el = document.elementFromPoint(r.left + r.width / 2, r.top + Math.min(r.height / 2, 300));
                     return [r.width > 100 && r.height > 100, el ? el.tagName : null]; }"""
    seen = {}
    for name, body in (("live", text_html), ("stripped", stripped)):
        page = tmp_path / f"{name}.html"
        page.write_text(f'<!doctype html><meta charset="utf-8"><body>{body}', encoding="utf-8")
        pg = new_page(browser, offline=True)
        pg.goto(page.as_uri())
        pg.wait_for_load_state("load")
        seen[name] = pg.evaluate(hit)
        pg.context.close()
    assert seen == {"live": [True, "IFRAME"], "stripped": [True, "IMG"]}
