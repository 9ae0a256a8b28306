"""POST /api/export ("Export this view", qkv.apps.web.routes_export): the page `qkv explain --html` writes,
opening on the view asked for, through an in-process client; its refusals are one line in the request's language."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient

from qkv import load
from qkv.apps.web.export import MAX_INPUT_CHARS, MAX_INPUTS, page_data, page_html
from qkv.apps.web.inputs import MAX_CHARS
from qkv.apps.web.server import create_app
from qkv.core.hub.bundled import default_ckpt

SENTENCE = "我 投资了 苹果 ，"


@pytest.fixture(scope="module")
def bundled():
    return load(default_ckpt())


@pytest.fixture(scope="module")
def client(bundled):
    model, tokenizer = bundled
    return TestClient(create_app(model, tokenizer, "bundled"), base_url="http://127.0.0.1:8000")


def embedded(html: str) -> dict:
    found = re.search(r'<script id="qkv-data" type="application/json">(.*?)</script>', html, re.S)
    assert found, "the page embeds no data"
    return json.loads(found.group(1))


def refused(response, status=400) -> str:
    assert response.status_code == status, response.text
    line = response.json()["error"]
    assert line and "\n" not in line and "Traceback" not in line
    return line


@pytest.mark.slow  # two pages' data (the view, the model document, the comparison) and the bundle
def test_export_is_the_page_explain_html_writes_opening_on_the_view(client, bundled):
    body = {
        "text": SENTENCE,
        "layer": 1,
        "head": 0,
        "token": 2,
        "lang": "zh",
        "panel": "attribution",
        "inputs": {"attribution": {"target": "苹果"}, "compare": {"a": "我 吃了 苹果", "word": "苹果"}},
    }
    r = client.post("/api/export", json=body)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["content-disposition"].startswith("attachment") and ".html" in r.headers["content-disposition"]
    data = embedded(r.text)
    assert data["start"] == {"layer": 1, "head": 0, "token": 2, "panel": "attribution", "inputs": body["inputs"]}
    assert data["lang"] == "zh" and data["view"]["text"] == SENTENCE
    # the same data export_html's page holds for the same request (one function builds both)
    model, tok = bundled
    want = page_data(model, tok, SENTENCE, "bundled", 1, 0, 2, "zh", None, "attribution", body["inputs"])
    assert data["view"]["ids"] == want["view"]["ids"] and data["model"]["model"] == want["model"]["model"]
    assert r.text == page_html(want)
    assert data["model"]["model"]["loaded_from"]["path"] is None  # a file to share: no path of this computer


def test_negative_token_counts_from_the_end(client):
    data = embedded(client.post("/api/export", json={"text": SENTENCE, "token": -1}).text)
    assert data["start"] == {"token": len(data["view"]["ids"]) - 1}


@pytest.mark.parametrize(
    ("body", "lang", "words"),
    [
        ({"text": SENTENCE, "layer": 99}, "en", "layer"),
        ({"text": SENTENCE, "token": 99}, "en", "token"),
        ({"text": SENTENCE, "panel": "nowhere"}, "en", "panel must be one of"),
        ({"text": SENTENCE, "panel": "nowhere"}, "zh", "panel 只能是"),
        ({"text": SENTENCE, "part": "cross"}, "en", "this model has one kind"),
        ({"text": SENTENCE, "inputs": {"bogus": {"a": "x"}}}, "en", "panel must be one of"),
    ],
)
def test_refusals_are_one_line_in_the_request_language(client, body, lang, words):
    line = refused(client.post("/api/export", json=body, headers={"Accept-Language": lang}))
    assert words in line


def test_the_request_is_bounded(client):
    refused(client.post("/api/export", json={"text": "我" * (MAX_CHARS + 1)}), 422)  # as /api/view's text
    refused(client.post("/api/export", json={"text": ""}), 422)
    long = {"text": SENTENCE, "inputs": {"side": {"a": "我" * (MAX_INPUT_CHARS + 1)}}}
    refused(client.post("/api/export", json=long), 422)
    many = {"text": SENTENCE, "inputs": {p: {str(k): "x" for k in range(8)} for p in ("side", "patch", "vocab")}}
    assert sum(len(f) for f in many["inputs"].values()) > MAX_INPUTS
    assert "at most 16 values" in refused(client.post("/api/export", json=many))
    huge = json.dumps({"text": SENTENCE, "inputs": {"side": {"a": "x" * 300_000}}})
    r = client.post("/api/export", content=huge, headers={"content-type": "application/json"})
    assert r.status_code == 413  # refused before the body is read


def test_the_passes_hold_nothing_after_an_export(client):
    client.post("/api/export", json={"text": SENTENCE})
    assert client.app.state.passes.budget.held == 0


def test_the_page_keeps_the_bounds_and_panels_the_export_accepts():
    """static/address.js writes into the address what POST /api/export takes back: one set of bounds."""
    from qkv.apps.web.export import KEPT_PANELS
    from qkv.apps.web.server import asset

    js = asset("address.js")
    bounds = re.search(r"export const TEXT_MAX = (\d+), INPUT_MAX = (\d+), INPUTS_MAX = (\d+);", js)
    assert bounds and (int(bounds[2]), int(bounds[3])) == (MAX_INPUT_CHARS, MAX_INPUTS)
    assert int(bounds[1]) <= MAX_CHARS  # a text the address keeps is one the export accepts
    kept = re.search(r"export const KEPT = \[([^\]]*)\];", js)
    assert kept and tuple(re.findall(r'"(\w+)"', kept[1])) == KEPT_PANELS
