"""The guided tour's endpoints (qkv.apps.web.routes_tour) and the model without positions behind them
(qkv.analysis.no_positions), through an in-process client.

Positions off is held against a model built here another way: the bundled model's copy with its
position table zeroed (x = W_E[id] + 0), and for RoPE a GPT of pos="none" given the same weights.
The translation answer is held against qkv.analysis.cross_attention run here on the bundled translator.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from qkv import GPT, ModelConfig, load
from qkv.analysis.cross_attention import explain_translation
from qkv.analysis.inputs import read_text
from qkv.analysis.no_positions import order_pair, permutation, without_positions
from qkv.apps.web.server import create_app
from qkv.apps.web.view import unpack_view
from qkv.core.hub.bundled import default_ckpt, default_translate_ckpt

A, B = "我 打了 你 ，", "你 打了 我 ，"
ZH = {"accept-language": "zh-CN,zh;q=0.9"}


@pytest.fixture(scope="module")
def bundled():
    model, tok = load(default_ckpt())
    return model.eval(), tok


@pytest.fixture(scope="module")
def client(bundled):
    return TestClient(create_app(*bundled, "bundled"), base_url="http://127.0.0.1:8000")


def zeroed(model):
    """The model with its learned position table set to zero: another road to 'no positions'."""
    z = copy.deepcopy(model)
    with torch.no_grad():
        for name, p in z.named_parameters():
            if name.startswith("pos_embed."):
                p.zero_()
    return z.eval()


def patterns(model, ids):
    L = model.cfg.n_layers
    with torch.no_grad():
        _, tr = model.run_with_trace(torch.tensor([ids]), names=[f"blocks.{i}.attn.hook_pattern" for i in range(L)])
    return np.stack([tr[f"blocks.{i}.attn.hook_pattern"][0].numpy() for i in range(L)])  # (L, H, T, T)


def test_view_without_positions_is_the_model_with_its_position_table_zeroed(client, bundled):
    model, tok = bundled
    doc = client.post("/api/tour/view", json={"text": A, "positions": False}).json()
    assert doc["positions"] == "off" and doc["kind"] == "view"
    ids = read_text(tok, A, model.cfg.n_ctx)[1]
    got = unpack_view(doc)["pattern"]
    np.testing.assert_allclose(got, patterns(zeroed(model), ids), atol=2e-6)
    assert np.abs(got - patterns(model, ids)).max() > 1e-2  # it is not the ordinary view


def test_view_with_positions_is_the_ordinary_view(client, bundled):
    on = client.post("/api/tour/view", json={"text": A, "positions": True}).json()
    plain = client.post("/api/view", json={"text": A}).json()
    assert on["positions"] == "on"
    np.testing.assert_array_equal(unpack_view(on)["pattern"], unpack_view(plain)["pattern"])


def test_order_pair_layer_zero_is_a_permutation_and_later_layers_leak(client, bundled):
    model, tok = bundled
    doc = client.post("/api/tour/order", json={"a": A, "b": B}).json()
    ids_a, ids_b = (read_text(tok, s, model.cfg.n_ctx)[1] for s in (A, B))
    assert doc["perm"] == [2, 1, 0, 3]
    z = zeroed(model)
    off_a, off_b = patterns(z, ids_a)[:, :, -1], patterns(z, ids_b)[:, :, -1]  # (L, H, T)
    np.testing.assert_allclose(np.array(doc["rows"]["off"]["a"]), off_a, atol=2e-6)
    leak = np.abs(off_b[:, :, doc["perm"]] - off_a).max(axis=(1, 2))
    np.testing.assert_allclose(doc["leak"]["off"], leak, atol=2e-6)
    assert doc["leak"]["off"][0] < 1e-6  # a bag of tokens in layer 0
    assert max(doc["leak"]["off"][1:]) > 1e-2  # the causal mask lets order in later
    assert doc["leak"]["on"][0] > 1e-2  # positions on: layer 0 already tells the two apart


def test_twin_shares_weights_and_leaves_the_model_alone(bundled):
    model, _ = bundled
    twin = without_positions(model)
    assert twin.pos_embed is None and model.pos_embed is not None
    assert twin.embed.weight is model.embed.weight and twin.blocks[0] is model.blocks[0]  # nothing copied


def test_rope_twin_is_a_gpt_without_positions():
    torch.manual_seed(0)
    cfg = dict(d_vocab=50, n_ctx=16, d_model=32, n_heads=4, n_layers=2, norm="pre")
    rope = GPT(ModelConfig(**cfg, pos="rope")).eval()
    plain = GPT(ModelConfig(**cfg, pos="none")).eval()
    plain.load_state_dict(rope.state_dict())
    ids = torch.tensor([[3, 7, 1, 9, 4]])
    with torch.no_grad():
        want, got, rotated = plain(ids), without_positions(rope)(ids), rope(ids)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-5)
    assert (rotated - want).abs().max() > 1e-4  # the original still rotates (at 100x the tolerance above)
    assert all(b.attn.rope is not None for b in rope.blocks)


def test_permutation():
    assert permutation([1, 2, 3, 9], [3, 2, 1, 9]) == [2, 1, 0, 3]
    assert permutation([1, 2, 3, 9], [3, 2, 9, 1]) is None  # another last token
    assert permutation([1, 2, 2], [2, 1, 2]) == [1, 0, 2]
    assert permutation([1, 2], [1, 3]) is None


def test_order_pair_without_a_permutation_has_no_leak(bundled):
    doc = order_pair(*bundled, "我 打了 你 ，", "我 吃了 苹果 ，")
    assert doc["perm"] is None and doc["leak"] == {"on": None, "off": None}


@pytest.mark.slow
def test_translate_is_the_bundled_translators_cross_attention(client):
    doc = client.post("/api/tour/translate", json={"text": "我 投资了 苹果 ，"}).json()
    tr_model, tr_tok = load(default_translate_ckpt())
    want = explain_translation(tr_model.eval(), tr_tok, "我 投资了 苹果 ，")
    assert (doc["layer"], doc["head"], doc["head_choice"]) == (want["layer"], want["head"], "sharpest")
    assert doc["translation"] == want["translation"]
    for got, exp in zip(doc["reads"], want["reads"], strict=True):
        np.testing.assert_allclose([r["weight"] for r in got["rows"]], [r["weight"] for r in exp["rows"]], atol=1e-6)


def test_bad_bodies_are_one_line(client):
    r = client.post("/api/tour/view", json={"text": A, "positions": "no"})
    assert r.status_code == 422 and "\n" not in r.json()["error"]
    r = client.post("/api/tour/order", json={"a": A}, headers=ZH)
    assert r.status_code == 422
    r = client.post("/api/tour/view", json={"text": "", "positions": False}, headers=ZH)
    assert r.status_code == 400 and "\n" not in r.json()["error"]
    r = client.post("/api/tour/translate", json={"text": "x" * 5000})
    assert r.status_code in (413, 422)


def test_positions_refused_for_a_translation_model():
    model, tok = load(default_translate_ckpt())
    c = TestClient(create_app(model.eval(), tok, "translate"), base_url="http://127.0.0.1:8000")
    for headers, word in (({}, "GPT"), (ZH, "位置")):
        r = c.post("/api/tour/view", json={"text": "我 投资了 苹果 ，", "positions": False}, headers=headers)
        assert r.status_code == 400 and word in r.json()["error"]
