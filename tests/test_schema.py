"""Every JSON document qkv writes validates against its schema (docs/trace-format.md)."""

from __future__ import annotations

import json

import jsonschema
import pytest
import torch

from qkv import GPT, ModelConfig, check, train_tokenizer
from qkv.analysis.schema import validate
from qkv.presentation.derivation import attend
from qkv.presentation.explanation import explain

TEXT = "患者 服用 华法林 后 出现 黑便 。"


@pytest.fixture(scope="module")
def model_and_tokenizer():
    tok = train_tokenizer("char", TEXT)
    torch.manual_seed(0)
    return GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=32, d_model=16, n_heads=2, n_layers=2)).eval(), tok


def roundtrip(doc: dict) -> dict:
    return json.loads(json.dumps(doc, ensure_ascii=False))


def test_attend_json_validates():
    doc = roundtrip(attend("sqrt(2),0", "ln(2),0; 0,1; 0,-1", "0,0; 4,0; 0,4").to_json())
    validate(doc)
    assert doc["z"] == pytest.approx([1.0, 1.0])


@pytest.mark.parametrize("kw", [dict(layer=1, head=0), dict()])
def test_explain_json_validates(model_and_tokenizer, kw):
    model, tok = model_and_tokenizer
    doc = roundtrip(explain(model, tok, TEXT, **kw).to_json())
    validate(doc)
    assert doc["mode"] == ("head" if kw else "summary")


def test_trace_and_check_json_validate(model_and_tokenizer):
    model, tok = model_and_tokenizer
    _, trace = model.run_with_trace(torch.tensor([tok.encode(TEXT)]))
    doc = trace.to_json(tok)
    doc["check"] = check(trace).to_json()
    doc = roundtrip(doc)
    validate(doc)
    validate(doc["check"])
    pattern = doc["activations"]["blocks.0.attn.hook_pattern"]
    assert pattern["shape"] == [2, len(TEXT), len(TEXT)]
    assert len(pattern["data"]) == 2 * len(TEXT) ** 2
    scores = doc["activations"]["blocks.0.attn.hook_attn_scores"]["data"]
    assert None in scores  # masked scores (-inf) are written as null
    assert doc["tokens"][:3] == ["患", "者", "␣"]


def test_broken_documents_fail(model_and_tokenizer):
    doc = roundtrip(attend("1,0", "1,0; 0,1", "0,0; 1,1").to_json())
    for broken in ({**doc, "version": 2}, {k: v for k, v in doc.items() if k != "weights"}, {**doc, "z": "1,1"}):
        with pytest.raises(jsonschema.ValidationError):
            validate(broken)
    with pytest.raises(ValueError, match="not a qkv-explain document"):
        validate({"kind": "mystery"})


def test_the_panels_documents_validate():
    """The explorer's panel documents (origin, ablate, side, vocab, transform, and the view's `unknown`)
    on the bundled model, through the server as the page reads them."""
    from fastapi.testclient import TestClient

    from qkv.apps.web.server import create_app
    from qkv.core.hub.bundled import default_ckpt
    from qkv.core.train.checkpoint import load

    model, tok = load(default_ckpt())
    client = TestClient(create_app(model, tok, "bundled"), base_url="http://127.0.0.1:8000")
    text = "我吃了苹果，味道很龘"  # 龘: no word, not even a character of the vocabulary
    answers = {
        "view": client.post("/api/view", json={"text": text}),
        "origin": client.post("/api/origin", json={"text": text, "layer": 1, "head": 2, "token": 3}),
        "ablate": client.post("/api/ablate", json={"text": text, "heads": [[0, 1], [2, 3]]}),
        "side": client.post("/api/side", json={"a": "我打了你", "b": "你打了我"}),
        "vocab": client.post("/api/vocab", json={"query": "苹"}),
        "transform": client.post("/api/transform", json={"layer": 0, "head": 1}),
        "compare": client.post(
            "/api/compare", json={"a": "我 昨天 吃了 苹果", "b": "我 上周 投资了 苹果", "word": "苹果"}
        ),
    }
    for kind, res in answers.items():
        assert res.status_code == 200, (kind, res.text)
        doc = res.json()
        assert doc["kind"] == kind
        validate(doc)
    assert [u["text"] for u in answers["view"].json()["unknown"]]  # 龘
    bad = dict(answers["origin"].json(), keys=[{"pos": 0}])  # a key without its vectors
    with pytest.raises(jsonschema.ValidationError):
        validate(bad)
