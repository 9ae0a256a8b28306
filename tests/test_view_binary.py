"""The view document as one binary body (qkv.analysis.packing.binary, what the page asks /api/view for):
the same document as the JSON one, every array bit for bit (NaN and infinities included), and the
page's decoder reads both to the same typed arrays."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from qkv import GPT, CharTokenizer, ModelConfig
from qkv.analysis.packing import ALIGN, MAGIC, binary, dumps, from_binary, pack, unpack
from qkv.apps.web.server import BINARY, create_app
from qkv.apps.web.view import unpack_view, view

TEXT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def tiny():
    tok = CharTokenizer.train("abcdefghijklmnopqrstuvwxyz .,")
    torch.manual_seed(0)
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=32, d_model=32, n_heads=2, n_layers=2)).eval()
    return model, tok


def without_data(doc: dict) -> dict:
    """doc with each packed array's bytes left out (what a header says beside them)."""
    return {**doc, "arrays": {k: {f: v for f, v in p.items() if f != "data"} for k, p in doc["arrays"].items()}}


def test_binary_view_is_the_json_view_bit_for_bit(tiny):
    doc, raw = view(*tiny, TEXT), view(*tiny, TEXT, raw=True)
    back = from_binary(binary(raw))
    assert without_data(back) == without_data(doc)
    ours, theirs = unpack_view(back), unpack_view(doc)
    assert ours.keys() == theirs.keys() and "pattern" in ours and "next_ids" in ours
    for key in ours:
        assert ours[key].dtype == theirs[key].dtype and ours[key].tobytes() == theirs[key].tobytes(), key
    # and it is the same document, data included, once its bytes are base64 again
    rewritten = {
        **back,
        "arrays": {k: pack(unpack(p), lower=p.get("layout") == "lower") for k, p in back["arrays"].items()},
    }
    assert json.loads(dumps(rewritten)) == json.loads(dumps(doc))


def test_binary_layout_is_aligned_and_says_where_each_array_lies(tiny):
    body = binary(view(*tiny, TEXT, raw=True))
    assert body[:4] == MAGIC
    n = int.from_bytes(body[4:8], "little")
    header = json.loads(body[8 : 8 + n])
    start = 8 + n + (-(8 + n) % ALIGN)
    assert start % ALIGN == 0
    end = 0
    for key, p in header["arrays"].items():
        offset, length = p["at"]
        assert offset % ALIGN == 0 and offset >= end, key  # in order, none overlapping, each aligned
        count = math.prod(p["shape"])
        if p.get("layout") == "lower":
            T = p["shape"][-1]
            count = count // (T * T) * T * (T + 1) // 2
        assert length == 4 * count, key
        end = offset + length
    assert len(body) - start - end < ALIGN  # nothing after the last array but its padding


def test_binary_keeps_nan_and_infinities_and_notes_a_non_finite_header_number():
    x = torch.tensor([[1.5, float("nan")], [-float("inf"), float("inf")]])
    doc = {
        "kind": "view",
        "scale": float("nan"),
        "arrays": {"x": pack(x, raw=True), "i": pack(torch.tensor([3, -1]), raw=True)},
    }
    back = from_binary(binary(doc))
    got = unpack(back["arrays"]["x"])
    assert got.tobytes() == x.numpy().tobytes()  # NaN's bits too
    assert unpack(back["arrays"]["i"]).tolist() == [3, -1] and unpack(back["arrays"]["i"]).dtype == np.int32
    assert back["scale"] is None and back["non_finite"] == {"count": 1, "first": "scale"}  # as dumps writes JSON


def test_from_binary_refuses_what_is_not_one():
    with pytest.raises(ValueError):
        from_binary(b'{"kind": "view"}')


def test_view_endpoint_answers_binary_only_when_asked(tiny):
    client = TestClient(create_app(*tiny, "tiny"), base_url="http://127.0.0.1:8000")
    plain = client.post("/api/view", json={"text": TEXT})
    assert plain.headers["content-type"].startswith("application/json")
    asked = client.post("/api/view", json={"text": TEXT}, headers={"accept": f"{BINARY}, application/json"})
    assert asked.status_code == 200 and asked.headers["content-type"] == BINARY
    assert len(asked.content) < 0.8 * len(plain.content)  # no base64
    doc, back = plain.json(), from_binary(asked.content)
    assert without_data(back) == without_data(doc)
    ours, theirs = unpack_view(back), unpack_view(doc)
    assert all(ours[k].tobytes() == theirs[k].tobytes() for k in theirs)
    refused = client.post("/api/view", json={"text": "x" * 100}, headers={"accept": BINARY})  # too long: JSON
    assert refused.status_code == 400 and refused.headers["content-type"].startswith("application/json")
    assert refused.json()["error"]
