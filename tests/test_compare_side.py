"""Two sentences side by side: qkv.analysis.prediction_diff and POST /api/side, against the model run directly."""

from __future__ import annotations

import pytest
import torch
from fastapi.testclient import TestClient

from qkv.analysis.inputs import read_text
from qkv.analysis.prediction_diff import side_by_side
from qkv.apps.web.server import create_app
from qkv.apps.web.view import unpack_view, view
from qkv.core.hub.bundled import default_ckpt
from qkv.core.train.checkpoint import load


@pytest.fixture(scope="module")
def bundled():
    return load(default_ckpt())


@pytest.fixture(scope="module")
def client(bundled):
    return TestClient(create_app(*bundled, "bundled"), base_url="http://127.0.0.1:8000")


def _probs(model, ids):
    with torch.no_grad():
        return torch.softmax(model(torch.tensor([ids]))[0, -1].double(), -1)  # the logits, another path than the trace


def test_side_reads_both_texts_and_lists_the_union_of_the_top_tokens(bundled, client):
    model, tok = bundled
    doc = client.post("/api/side", json={"a": "我打了你", "b": "你打了我", "top": 10}).json()
    assert doc == side_by_side(model, tok, "我打了你", "你打了我")
    for key, typed in (("a", "我打了你"), ("b", "你打了我")):
        text, ids = read_text(tok, typed, model.cfg.n_ctx)
        assert doc[key] == {"text": text, "ids": ids, "tokens": [tok.display(i) for i in ids]}
    assert doc["same_length"] is True and doc["same_tokens"] is True  # the same words in another order
    pa, pb = _probs(model, doc["a"]["ids"]), _probs(model, doc["b"]["ids"])
    union = set(pa.topk(10).indices.tolist()) | set(pb.topk(10).indices.tolist())
    assert {r["id"] for r in doc["next"]} == union and len(doc["next"]) == len(union)
    for r in doc["next"]:
        assert r["p_a"] == pytest.approx(pa[r["id"]].item(), rel=1e-5, abs=1e-7)
        assert r["p_b"] == pytest.approx(pb[r["id"]].item(), rel=1e-5, abs=1e-7)
        assert r["diff"] == pytest.approx(r["p_a"] - r["p_b"], abs=1e-12) and r["token"] == tok.display(r["id"])
    tops = [max(r["p_a"], r["p_b"]) for r in doc["next"]]
    assert tops == sorted(tops, reverse=True)


def test_side_probabilities_are_the_views_next_probs(bundled):
    """The page shows the view's top 10 under each pattern and api/side's union beside them: one number each."""
    model, tok = bundled
    doc = side_by_side(model, tok, "我 昨天 吃了 苹果", "我 上周 投资了 苹果", top=10)
    for key, p in (("a", "p_a"), ("b", "p_b")):
        arrays = unpack_view(view(model, tok, doc[key]["text"]))
        last = len(doc[key]["ids"]) - 1
        rows = {r["id"]: r[p] for r in doc["next"]}
        for i, q in zip(arrays["next_ids"][last], arrays["next_probs"][last], strict=True):
            assert rows[int(i)] == pytest.approx(float(q), rel=1e-6)
    assert doc["same_tokens"] is False


def test_side_errors_are_one_line_4xx(client):
    r = client.post("/api/side", json={"a": "", "b": "你"})
    assert r.status_code == 400 and "empty" in r.json()["error"]
    assert client.post("/api/side", json={"a": "我", "b": "你", "top": 0}).status_code == 422
    assert client.post("/api/side", json={"a": "我"}).status_code == 422
    assert client.post("/api/side", json={"a": "我", "b": "你", "extra": 1}).status_code == 422
