"""Models whose numbers are not numbers (NaN weights, as a diverged fine-tune leaves them, and weights
×1e30, which overflow float32 within a layer): every document is still JSON (a NaN is written null,
and the document says so in "non_finite"), what has no answer is a one-line refusal naming the
weight, and `qkv info` and `qkv.check` say that the weights are not finite (core/finite.py)."""

from __future__ import annotations

import copy
import json

import pytest
import torch
from cli_util import run_error, run_ok
from fastapi.testclient import TestClient
from safetensors.torch import load_file, save_file

from qkv.analysis.schema import SCHEMAS, validate
from qkv.apps.web.server import create_app
from qkv.core.decode.sample import generate_batch, generate_ids
from qkv.core.hub.bundled import BUNDLED
from qkv.core.io.finite import NonFiniteError, dumps
from qkv.core.see.invariants import check
from qkv.core.train.checkpoint import load, save

TEXT = "我 吃了 苹果 ，"
NAN_AT = "blocks.0.mlp.fc_in.weight"  # (a NaN in W_Q alone: torch's fused CPU attention writes 0 for a NaN query row)


def _strict_json(text: str):
    """json.loads that refuses NaN and Infinity, as every JSON parser but Python's does."""

    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def bundled():
    return load(BUNDLED)


@pytest.fixture(scope="module")
def nan_model(bundled):
    model = copy.deepcopy(bundled[0])
    with torch.no_grad():
        model.get_parameter(NAN_AT)[0, 0] = float("nan")
    return model, bundled[1]


@pytest.fixture(scope="module")
def huge_model(bundled):
    model = copy.deepcopy(bundled[0])
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1e30)
    return model, bundled[1]


def test_dumps_writes_null_and_says_where():
    doc = {"kind": "x", "a": [1.0, float("nan")], "b": {"c": float("inf")}, "d": -float("inf")}
    out = _strict_json(dumps(doc))
    assert out["a"] == [1.0, None] and out["b"] == {"c": None} and out["d"] is None
    assert out["non_finite"] == {"count": 3, "first": "a[1]"}
    assert doc["a"][1] != doc["a"][1]  # the caller's document is left as it was


def test_dumps_of_finite_documents_is_plain_json():
    doc = {"kind": "x", "a": [1.5, 2], "s": "苹果"}
    assert dumps(doc) == json.dumps(doc, ensure_ascii=False)
    assert dumps(doc, indent=2) == json.dumps(doc, ensure_ascii=False, indent=2)


ENDPOINTS = [
    ("/api/view", {"text": TEXT}),
    ("/api/explain", {"text": TEXT}),
    ("/api/explain", {"text": TEXT, "layer": 1, "head": 2, "token": 2}),
    ("/api/origin", {"text": TEXT, "layer": 0, "head": 0, "token": 1}),
    ("/api/ablate", {"text": TEXT, "heads": [[0, 0]]}),
    ("/api/side", {"a": TEXT, "b": "我 投资了 苹果 ，"}),
    ("/api/generate", {"text": TEXT, "max_new_tokens": 3, "temperature": 0}),
    ("/api/generate", {"text": TEXT, "max_new_tokens": 3, "seed": 1}),
    ("/api/compare", {"a": "我 昨天 吃了 苹果", "b": "我 上周 投资了 苹果", "word": "苹果"}),
    ("/api/transform", {"layer": 0, "head": 0}),
    ("/api/vocab", None),
    ("/api/heads", None),
]


@pytest.mark.parametrize("which", ["nan_model", "huge_model"])
def test_every_endpoint_answers_json_or_one_line_refusal(which, request):
    model, tok = request.getfixturevalue(which)
    client = TestClient(create_app(model, tok, which), base_url="http://127.0.0.1", raise_server_exceptions=False)
    flagged = 0
    for path, body in [("/api/model", None), *ENDPOINTS]:
        r = client.get(path) if body is None else client.post(path, json=body)
        assert r.status_code < 500, (path, r.text[:300])
        doc = _strict_json(r.text)  # never a bare NaN
        if r.status_code == 400:  # what has no answer over NaN numbers says which weight, in one line
            assert "NaN or infinite" in doc["error"] and "\n" not in doc["error"], (path, doc)
        else:
            assert r.status_code == 200, (path, r.text[:300])
            flagged += "non_finite" in doc
            if doc.get("kind") in SCHEMAS:  # (the heads lesson's "head-labels" has no schema)
                validate(doc)
    assert flagged >= 5  # the view, explain, origin (huge: its q, k), ablate, side... say so


def test_view_flags_its_packed_arrays(nan_model, bundled):
    client = TestClient(create_app(*nan_model, "nan"), base_url="http://127.0.0.1")
    note = client.post("/api/view", json={"text": TEXT}).json()["non_finite"]
    assert note["count"] > 0 and note["first"].startswith("arrays.")
    clean = TestClient(create_app(*bundled, "bundled"), base_url="http://127.0.0.1")
    assert "non_finite" not in clean.post("/api/view", json={"text": TEXT}).json()


def test_generation_refuses_nan_logits_in_one_line(nan_model):
    model, tok = nan_model
    ids = tok.encode(TEXT)
    for run in (
        lambda: list(generate_ids(model, ids, 3, temperature=0)),
        lambda: list(generate_ids(model, ids, 3, temperature=1, seed=0)),
        lambda: generate_batch(model, [ids, ids[:2]], 3, temperature=0),
    ):
        with pytest.raises(NonFiniteError, match=f"NaN or infinite values in the next-token logits.*{NAN_AT}"):
            run()


def test_check_says_the_weights_are_not_finite(nan_model, bundled):
    model, tok = nan_model
    _, tr = model.run_with_trace(torch.tensor([tok.encode(TEXT)]))
    report = check(tr)
    assert not report.passed and NAN_AT in report.weights
    assert f"FAIL the model's weights are not finite: 1 NaN or infinite value, the first in {NAN_AT}" in str(report)
    doc = _strict_json(dumps(report.to_json()))
    assert doc["weights_finite"] is False
    validate(doc)
    _, tr = bundled[0].run_with_trace(torch.tensor([tok.encode(TEXT)]))
    assert check(tr).weights is None and check(tr).to_json()["weights_finite"] is True


@pytest.fixture(scope="module")
def huge_dir(huge_model, tmp_path_factory):
    d = tmp_path_factory.mktemp("huge")
    save(d, *huge_model)
    return d


def test_explain_json_of_overflowing_model_is_json(huge_dir, capsys):
    out, _ = run_ok(capsys, ["explain", TEXT, "--ckpt", str(huge_dir), "--format", "json"])
    doc = _strict_json(out)
    assert doc["non_finite"]["count"] > 0
    validate(doc)


@pytest.fixture(scope="module")
def nan_hf_dir(tmp_path_factory):
    """A small GPT exported as a GPT-2 directory, one weight then set to NaN (as a diverged fine-tune
    leaves it): Hugging Face directories are opened as they are, NaN included."""
    from qkv.core.hub.export import export_hf
    from qkv.core.model.gpt import GPT
    from qkv.core.spec.config import ModelConfig
    from qkv.core.text.tokenizers import train_tokenizer

    tok = train_tokenizer("char", TEXT + "\n我 投资了 苹果 。\n")
    torch.manual_seed(0)
    d = tmp_path_factory.mktemp("nanhf") / "hf"
    export_hf(GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=2)), tok, d)
    tensors = load_file(d / "model.safetensors")
    tensors["transformer.h.0.mlp.c_fc.weight"][3, 5] = float("nan")
    save_file(tensors, d / "model.safetensors", metadata={"format": "pt"})
    return d


def test_info_and_trace_check_say_the_weights_are_not_finite(nan_hf_dir, capsys):
    out, _ = run_ok(capsys, ["info", "--ckpt", str(nan_hf_dir)])
    assert "warning: the model's weights are not finite: 1 NaN or infinite value, the first in blocks.0.mlp" in out
    out, err = run_ok(capsys, ["trace", TEXT, "--ckpt", str(nan_hf_dir), "--check"])
    assert "FAIL the model's weights are not finite" in err
    doc = _strict_json(out)
    assert doc["check"]["weights_finite"] is False and doc["non_finite"]["count"] > 0
    line = run_error(capsys, ["generate", "--ckpt", str(nan_hf_dir), "--prompt", "我", "--max-new-tokens", "3"])
    assert "NaN or infinite values in the next-token logits" in line


def test_qkv_checkpoints_still_refuse_nan_weights(nan_model, bundled, tmp_path):
    """qkv's own trainer stops at a non-finite loss, so a NaN in its checkpoint is damage: refused when
    it loads, and `save` does not write one."""
    d = tmp_path / "ckpt"
    with pytest.raises(ValueError, match=f"not finite: 1 NaN or infinite value, the first in {NAN_AT}; a checkpoint"):
        save(d, *nan_model)
    assert not d.exists()
    save(d, *bundled)
    weights = d / json.loads((d / "state.json").read_text())["model"]
    tensors, meta = load_file(weights), safe_open_meta(weights)
    tensors[NAN_AT][0, 0] = float("nan")
    save_file(tensors, weights, metadata=meta)
    with pytest.raises(ValueError, match=f"tensor {NAN_AT} holds NaN or infinite values"):
        load(d)


def safe_open_meta(path) -> dict:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        return f.metadata()
