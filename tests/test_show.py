"""qkv.show: the explorer inline in a notebook (qkv.apps.notebook).

What a front end is handed (the widget view, text/html, text/plain), that the text/html fetches nothing,
that bad input is refused as `qkv explain --html` refuses it, the size bound in both languages; in
Chromium: the text/html opened from a file, and the widget's ES module rendered by a host page with
a fake anywidget model, each draw the heatmap with the text's tokens (read off the heatmap's own
tooltip), two views in one page keep their own, the iframe grows to the page, and the theme follows
the host's (JupyterLab, VS Code, the background behind the view).
"""

from __future__ import annotations

import base64
import html
import json
import re

import pytest

import qkv
from qkv.apps.notebook import show as show_mod
from qkv.apps.notebook import widget as widget_mod
from qkv.apps.web.export import export_html
from qkv.core.io.refusal import Refusal
from qkv.presentation.i18n import say_error

pytestmark = pytest.mark.slow  # each reads a model and computes a page (about a second)

A = "我 投资了 苹果 ，"
B = "我 昨天 吃了 苹果"
WIDGET = "application/vnd.jupyter.widget-view+json"
NETWORK = re.compile(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", re.I)


@pytest.fixture(scope="module")
def bundled():
    return qkv.load()


@pytest.fixture(scope="module")
def shown(bundled):
    return qkv.show(*bundled, A, layer=1, head=2, lang="en")


def srcdoc(text_html: str) -> str:
    return html.unescape(re.search(r'srcdoc="([^"]*)"', text_html).group(1))


def test_the_display_holds_the_widget_view_the_html_and_a_line(shown):
    data, _ = shown._repr_mimebundle_()
    assert set(data) == {WIDGET, "text/html", "text/plain"}
    assert data[WIDGET]["model_id"] == shown.model_id
    assert data["text/plain"] == "qkv explorer of 4 tokens (model), opening on layer 1, head 2: " + A
    assert shown.page == shown.view.page and shown.view.tokens == A.split()
    assert '"start":{"layer":1,"head":2}' in shown.page  # the page opens where it was asked to


def test_the_html_is_self_contained(shown):
    text_html = shown._repr_mimebundle_()[0]["text/html"]
    page = srcdoc(text_html)
    assert page == shown.view.page  # the attribute holds the page exactly
    for doc in (text_html, page):
        assert not NETWORK.search(doc), NETWORK.search(doc)
    assert 'sandbox="allow-scripts allow-downloads"' in text_html
    png = re.search(r'src="data:image/png;base64,([^"]+)"', text_html).group(1)
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")  # the still picture, inline
    assert "this viewer runs no scripts" in text_html


def test_without_anywidget_the_view_itself_is_shown(bundled, monkeypatch):
    monkeypatch.setattr(widget_mod, "_CLASS", [None])
    view = qkv.show(*bundled, A, lang="zh")
    assert isinstance(view, show_mod.View)
    assert set(view._repr_mimebundle_()) == {"text/html", "text/plain"}
    assert view.plain().startswith("qkv 探索页：4 个词元")


@pytest.mark.parametrize(
    "args",
    [{"layer": 9}, {"head": -9}, {"token": 4}, {"lang": "fr"}],
)
def test_bad_input_is_refused_as_the_export_refuses_it(bundled, tmp_path, args):
    with pytest.raises(Refusal) as got:
        qkv.show(*bundled, A, **args)
    with pytest.raises(Refusal) as want:
        export_html(*bundled, A, tmp_path / "p.html", **args)
    assert (got.value.key, got.value.fields) == (want.value.key, want.value.fields)


def test_a_translation_model_shows_as_the_export_does():
    mt, words = qkv.load("src/qkv/assets/translate")
    w = qkv.show(mt, words, A, token=-1, lang="en")
    data = json.loads(re.search(r'<script id="qkv-data" type="application/json">(.*?)</script>', w.page, re.S)[1])
    assert data["view"]["kind"] == "translation-view" and w.view.tokens == data["view"]["source"]["tokens"]
    assert data["start"]["token"] == len(data["view"]["target"]["ids"]) - 1
    assert w.view.still.startswith(b"\x89PNG")


@pytest.mark.parametrize("bound, key", [(100_000, "notebook.too_large"), (1_000, "notebook.too_large_early")])
def test_a_view_past_the_bound_is_refused_in_both_languages(bundled, monkeypatch, bound, key):
    monkeypatch.setattr(show_mod, "MAX_PAGE_BYTES", bound)
    with pytest.raises(Refusal) as e:
        qkv.show(*bundled, A)
    assert e.value.key == key and e.value.fields["n"] == 4
    en, zh = say_error(e.value, "en"), say_error(e.value, "zh")
    assert "\n" not in en + zh and "qkv serve" in en and "qkv serve" in zh
    assert (
        "a shorter text" in en
        and "更短的文本" in zh
        and (f"{bound / 1000:.1f} kB" if bound >= 1000 else f"{bound} bytes") in en
    )


def test_the_bound_keeps_the_bundled_model_at_its_longest_text(bundled):
    model, tokenizer = bundled
    words = ("我 投资了 苹果 ， 股价 上涨 了 。 " * 20).split()[: model.cfg.n_ctx]
    view = show_mod.view_of(model, tokenizer, " ".join(words))
    assert len(view.tokens) == model.cfg.n_ctx
    assert len(view.page.encode()) < show_mod.MAX_PAGE_BYTES / 4  # measured: 0.84 MB of 8 MB


def test_the_front_end_must_keep_its_one_export():
    module = show_mod.front_end()
    assert show_mod._as_function_body(module).rstrip().endswith("return { render, adopt };")
    with pytest.raises(RuntimeError):
        show_mod._as_function_body(module + "\nexport const x = 1;\n")


# ---- in Chromium


@pytest.fixture(scope="module")
def chromium():
    from browser_fixtures import require_chromium

    require_chromium()
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    from browser_util import ARGS, CHROMIUM

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


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


@pytest.mark.browser
def test_the_html_opened_from_a_file_draws_each_view(bundled, chromium, tmp_path):
    a, b = (show_mod.view_of(*bundled, text, lang="en") for text in (A, B))
    page = tmp_path / "notebook.html"
    page.write_text(
        f'<!doctype html><meta charset="utf-8"><body style="background:#111">{a.fallback_html()}{b.fallback_html()}',
        encoding="utf-8",
    )
    pg = new_page(chromium, offline=True)
    pg.goto(page.as_uri())
    drawn = explorers(pg, 2)
    for view, got in zip((a, b), drawn):
        assert got["rows"] == view.tokens and got["cols"] == view.tokens  # each its own text
        assert got["theme"] == "dark"  # the background behind the view is dark
        assert abs(got["frame_height"] - got["height"]) <= 2  # the iframe is as tall as its page
    assert pg.errors == [] and pg.requests == [page.as_uri()]
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


@pytest.mark.browser
def test_the_widget_draws_two_views_each_with_its_own_tokens(bundled, chromium):
    a, b = (show_mod.view_of(*bundled, text, lang="zh") for text in (A, B))
    pg = open_host(chromium, {"a": a, "b": b}, 'data-jp-theme-light="true"')
    drawn = explorers(pg, 2)
    for view, got in zip((a, b), drawn):
        assert got["rows"] == view.tokens and got["cols"] == view.tokens
        assert got["theme"] == "light" and abs(got["frame_height"] - got["height"]) <= 2
    titles = pg.eval_on_selector_all("iframe", "fs => fs.map(f => [f.title, f.getAttribute('sandbox')])")
    assert titles == [[v.title(), "allow-scripts allow-downloads"] for v in (a, b)]
    assert pg.errors == [] and set(pg.requests) == {"http://qkv.test/", "http://qkv.test/widget.js"}
    pg.context.close()


@pytest.mark.browser
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
def test_the_widget_follows_the_notebooks_theme(bundled, chromium, body, theme):
    view = show_mod.view_of(*bundled, A, lang="en")
    pg = open_host(chromium, {"a": view}, body)
    (got,) = explorers(pg, 1)
    assert got["theme"] == theme and got["rows"] == view.tokens
    if theme == "dark":  # the page is dark; the heatmap keeps its light paper, so its ink reads
        assert got["bg"] == "rgb(21, 24, 30)" and got["paper"] == "rgb(248, 250, 252)"
    assert pg.errors == []
    pg.context.close()


@pytest.mark.browser
def test_the_widget_redraws_when_the_notebook_changes_its_theme(bundled, chromium):
    view = show_mod.view_of(*bundled, A, lang="en")
    pg = open_host(chromium, {"a": view}, 'data-jp-theme-light="true"')
    assert explorers(pg, 1)[0]["theme"] == "light"
    pg.evaluate("document.body.dataset.jpThemeLight = 'false'")
    frame = pg.query_selector("iframe").content_frame()
    frame.wait_for_function("() => document.documentElement.dataset.theme === 'dark'", timeout=30_000)
    frame.wait_for_function("() => +(document.body.dataset.renders || 0) > 0", timeout=30_000)
    assert frame.evaluate(READ_HEATMAP)["rows"] == view.tokens
    pg.context.close()


@pytest.mark.browser
def test_the_still_picture_shows_exactly_where_the_iframe_is_gone(shown, chromium, tmp_path):
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
        pg = new_page(chromium, offline=True)
        pg.goto(page.as_uri())
        pg.wait_for_load_state("load")
        seen[name] = pg.evaluate(hit)
        pg.context.close()
    assert seen == {"live": [True, "IFRAME"], "stripped": [True, "IMG"]}
