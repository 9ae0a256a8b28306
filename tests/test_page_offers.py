"""What the page offers a model is fit for its vocabulary: MiniLM (an English WordPiece vocabulary) is
offered English side-by-side sentences and the page is told its unknown token; the bundled model keeps
its Chinese pair and has no unknown token."""

from __future__ import annotations

import re

import qkv
from qkv.core.hub.bundled import default_ckpt

CJK = re.compile(r"[\u3400-\u9fff]")

# ---------------------------------------------------------------------------
# 6. what the page is offered for MiniLM (and for the bundled model)
# ---------------------------------------------------------------------------


def test_minilm_is_offered_english_side_by_side_sentences_and_names_its_unknown_token(minilm):
    from qkv.apps.web.model_doc import model_doc

    model, tok = minilm
    doc = model_doc(model, tok, "minilm")
    assert doc["model"]["unknown_token"] == "[UNK]"
    side = doc["side"]
    assert side and not CJK.search(side["a"] + side["b"]), side
    for text in (side["a"], side["b"], *doc["examples"], doc["compare"]["a"], doc["compare"]["b"]):
        assert "[UNK]" not in tok.pieces(text), text
    assert "[UNK]" in tok.pieces("我打了你")  # what the bundled model is offered would not do


def test_the_api_offers_the_side_pair(minilm):
    from fastapi.testclient import TestClient

    from qkv.apps.web.server import create_app

    client = TestClient(create_app(*minilm, "minilm"), base_url="http://127.0.0.1:8000")
    info = client.get("/api/model").json()
    assert info["side"]["a"].lower().split() and not CJK.search(info["side"]["a"])
    assert info["model"]["unknown_token"] == "[UNK]"
    views = [client.post("/api/view", json={"text": info["side"][k]}).json() for k in ("a", "b")]
    assert all("[UNK]" not in v["tokens"] for v in views)
    unk = client.post("/api/view", json={"text": "我投资了苹果"}).json()
    assert "[UNK]" in unk["tokens"]  # what the page's note counts


def test_the_bundled_model_keeps_its_chinese_pair_and_has_no_unknown_token():
    from qkv.apps.web.model_doc import model_doc

    model, tok = qkv.load(default_ckpt())
    doc = model_doc(model, tok, "bundled")
    assert doc["side"] == {"a": "我打了你", "b": "你打了我"} and doc["model"]["unknown_token"] is None
