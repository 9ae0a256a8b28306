"""qkv.show: the explorer inline in a notebook (qkv.apps.notebook).

What a front end is handed (the widget view, text/html, text/plain), that the text/html fetches nothing,
that bad input is refused as `qkv explain --html` refuses it, the size bound in both languages. In
Chromium: tests/test_show_browser.py.
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
    assert data["text/plain"] == "qkv explorer of 4 tokens (bundled), opening on layer 1, head 2: " + A
    assert '"loaded_from":{"name":"bundled"' in shown.page  # what qkv.load read names the model in the header
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
    assert len(view.page.encode()) < show_mod.MAX_PAGE_BYTES / 4  # measured: 0.94 MB of 8 MB


def test_the_front_end_must_keep_its_one_export():
    module = show_mod.front_end()
    assert show_mod._as_function_body(module).rstrip().endswith("return { render, adopt };")
    with pytest.raises(RuntimeError):
        show_mod._as_function_body(module + "\nexport const x = 1;\n")
