"""Switching heads off (qkv.analysis.ablate and the attention's head_mask).

The references are other computations: the same model with the head's rows of W_O zeroed (a copy of
the weights, no mask), the unablated model itself (bit for bit), and the trace of the ablated model
(nothing before the ablated head's z changes). Expectations come from the Python API at test time."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from qkv.analysis.ablate import ablate, heads_off
from qkv.analysis.packing import unpack
from qkv.core.hub.bundled import default_ckpt
from qkv.core.model import make_model
from qkv.core.see.indices import TextError
from qkv.core.see.trace import trace_names
from qkv.core.spec.config import ModelConfig
from qkv.core.train.checkpoint import load

SENTENCE = "我 投资了 苹果 ，"
RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(scope="module")
def bundled():
    model, tok = load(default_ckpt())
    return model.eval(), tok


def w_o_zeroed(model, heads):
    """A copy of the model whose W_O ignores the given heads: the columns of W_O.weight (d_model, n_heads*d_head)
    that multiply head h's z set to 0, so z_h W_O[h] = 0 without touching z."""
    other = copy.deepcopy(model)
    d = model.cfg.d_head
    with torch.no_grad():
        for L, h in heads:
            other.blocks[L].attn.W_O.weight[:, h * d : (h + 1) * d] = 0.0
    return other


def probs_and_patterns(model, ids):
    _, tr = model.run_with_trace(torch.tensor([ids]))
    return tr["probs"][0], [tr["pattern", L][0] for L in range(model.cfg.n_layers)], tr


def all_heads(cfg):
    return [(L, h) for L in range(cfg.n_layers) for h in range(cfg.n_heads)]


def test_ablating_nothing_is_the_model_bit_for_bit(bundled):
    model, tok = bundled
    ids = tok.encode(SENTENCE)
    p, A, _ = probs_and_patterns(model, ids)
    doc = ablate(model, tok, SENTENCE, heads=[])
    assert doc["first"] == model.cfg.n_layers and doc["changes"] == [] and not np.any(doc["max_change"])
    for n in doc["next"]:
        for r in n["rows"]:
            assert r["before"] == r["after"] == float(p[n["pos"], r["id"]])
    x = torch.tensor([ids])
    with torch.no_grad():
        plain, plain_explicit = model(x), model(x, explicit=True)
        with heads_off(model, []):
            assert torch.equal(model(x), plain) and torch.equal(model(x, explicit=True), plain_explicit)
        ones = lambda z, hook: z * 1.0  # a hook that multiplies every z by 1.0: exact, on the written-out path
        with model.hooks([(lambda name: name.endswith("attn.hook_z"), ones)]):
            assert torch.equal(model(x), plain_explicit) and torch.equal(model(x, explicit=True), plain_explicit)


@pytest.mark.parametrize("pick", ["each", "sets"])
def test_ablation_equals_zeroing_w_o(bundled, pick):
    model, tok = bundled
    ids = tok.encode(SENTENCE)
    cfg = model.cfg
    every = all_heads(cfg)
    cases = [[p] for p in every] if pick == "each" else [every[::3], every[1::2], every]
    for heads in cases:
        doc = ablate(model, tok, None, heads=heads, ids=ids)
        ref_p, ref_A, _ = probs_and_patterns(w_o_zeroed(model, heads), ids)
        for n in doc["next"]:
            got = torch.tensor([r["after"] for r in n["rows"]], dtype=torch.float64)
            want = ref_p[n["pos"], [r["id"] for r in n["rows"]]].double()
            assert torch.allclose(got, want, rtol=RTOL, atol=ATOL), (heads, n["pos"])
        after = unpack(doc["patterns"]["after"])
        first = min(L for L, _ in heads)
        assert doc["first"] == first and after.shape[0] == cfg.n_layers - first
        for L in range(first, cfg.n_layers):
            assert np.allclose(after[L - first], ref_A[L].numpy(), rtol=RTOL, atol=ATOL), (heads, L)


def test_only_later_layers_change(bundled):
    model, tok = bundled
    ids = tok.encode(SENTENCE)
    cfg = model.cfg
    _, _, before = probs_and_patterns(model, ids)
    for L, h in [(0, 0), (cfg.n_layers - 1, cfg.n_heads - 1), (cfg.n_layers // 2, 1 % cfg.n_heads)]:
        with heads_off(model, [(L, h)]):
            _, _, after = probs_and_patterns(model, ids)
        order = trace_names(cfg)
        cut = order.index(f"blocks.{L}.attn.hook_z")
        for name in order[:cut]:  # everything computed before the head's z: bit for bit
            assert torch.equal(before[name], after[name]), name
        z0, z1 = before[f"blocks.{L}.attn.hook_z"][0], after[f"blocks.{L}.attn.hook_z"][0]  # (T, n_heads, d_head)
        assert not z1[:, h].any() and z0[:, h].any()
        others = [g for g in range(cfg.n_heads) if g != h]
        assert torch.equal(z0[:, others], z1[:, others])
        assert not after[f"blocks.{L}.attn.hook_result"][0, :, h].any()
        doc = ablate(model, tok, None, heads=[(L, h)], ids=ids)
        assert all(not any(row) for row in doc["max_change"][: L + 1])  # its own layer's patterns too
        assert doc["first"] == L
        later = doc["max_change"][L + 1 :]
        for n, row in enumerate(later):  # the document's numbers are the traces' differences
            diff = (after["pattern", L + 1 + n][0].double() - before["pattern", L + 1 + n][0].double()).abs()
            assert np.allclose(row, diff.amax(dim=(-1, -2)).numpy(), rtol=RTOL, atol=ATOL)
        if later:
            assert max(max(r) for r in later) > 0  # z_h is not zero, so later layers read something else


def test_the_switch_is_removed_after_an_error(bundled):
    model, tok = bundled
    x = torch.tensor([tok.encode(SENTENCE)])
    with torch.no_grad():
        plain = model(x)
        with pytest.raises(RuntimeError):
            with heads_off(model, [(0, 0)]):
                assert not torch.equal(model(x), plain)
                raise RuntimeError("boom")
        assert torch.equal(model(x), plain)


def test_fused_and_cached_paths_see_the_mask(bundled):
    model, tok = bundled
    ids = torch.tensor([tok.encode(SENTENCE)])
    heads = [(0, 1), (model.cfg.n_layers - 1, 0)]
    ref = w_o_zeroed(model, heads)
    with torch.no_grad(), heads_off(model, heads):
        fused, explicit = model(ids), model(ids, explicit=True)
        cache = model.new_cache()
        step = torch.cat([model(ids[:, t : t + 1], cache) for t in range(ids.shape[1])], dim=1)  # one token at a time
        want = ref(ids)
    for got in (fused, explicit, step):
        assert torch.allclose(got, want, rtol=RTOL, atol=1e-4)


def test_changes_and_next_rows_are_consistent(bundled):
    model, tok = bundled
    heads = [(0, 0), (0, 1 % model.cfg.n_heads)]
    doc = ablate(model, tok, SENTENCE, heads=heads, token=-1, top=3)
    assert len(doc["next"]) == 1 and doc["next"][0]["pos"] == len(doc["ids"]) - 1
    rows = doc["next"][0]["rows"]
    assert 3 <= len(rows) <= 6 and rows == sorted(rows, key=lambda r: (-r["before"], -r["after"]))
    A0, A1 = unpack(doc["patterns"]["before"]), unpack(doc["patterns"]["after"])
    deltas = [abs(c["after"] - c["before"]) for c in doc["changes"]]
    assert deltas == sorted(deltas, reverse=True)
    for c in doc["changes"]:
        L = c["layer"] - doc["first"]
        assert A0[L, c["head"], c["query"], c["key"]] == np.float32(c["before"])
        assert A1[L, c["head"], c["query"], c["key"]] == np.float32(c["after"])
    if doc["changes"]:
        assert np.isclose(deltas[0], np.abs(A1.astype(np.float64) - A0).max())
    assert ablate(model, tok, SENTENCE, heads=[(0, 0), (0, 0), (-model.cfg.n_layers, 0)])["heads"] == [[0, 0]]


def test_bad_input(bundled):
    model, tok = bundled
    for heads in ([(model.cfg.n_layers, 0)], [(0, model.cfg.n_heads)], [(0,)], [(0, 1, 2)]):
        with pytest.raises(TextError):
            ablate(model, tok, SENTENCE, heads=heads)
    with pytest.raises(TextError):
        ablate(model, tok, SENTENCE, heads=[], token=99)
    encoder = make_model(
        ModelConfig(
            arch="bert", causal=False, norm="post", d_vocab=20, n_ctx=8, d_model=8, n_heads=2, d_head=4, n_layers=1
        )
    )
    with pytest.raises(TextError):
        ablate(encoder, None, None, heads=[], ids=[1, 2])


def test_api_ablate(bundled):
    from qkv.apps.web.server import create_app

    model, tok = bundled
    c = TestClient(create_app(model, tok, "bundled"), base_url="http://127.0.0.1:8000")
    heads = [[0, 0], [model.cfg.n_layers - 1, model.cfg.n_heads - 1]]
    r = c.post("/api/ablate", json={"text": SENTENCE, "heads": heads})
    assert r.status_code == 200
    assert r.json() == ablate(model, tok, SENTENCE, heads=heads)
    with torch.no_grad():  # the switch stayed in the request's own pass: the model is as it was
        x = torch.tensor([tok.encode(SENTENCE)])
        assert torch.equal(model(x, explicit=True), model.run_with_trace(x)[0])
        assert not torch.allclose(model(x), w_o_zeroed(model, [tuple(h) for h in heads])(x), atol=1e-4)
    for bad, status in (
        ({"text": SENTENCE, "heads": [[99, 0]]}, 400),
        ({"text": SENTENCE, "heads": [[0, 0, 0]]}, 422),
        ({"text": SENTENCE, "heads": [["0", 0]]}, 422),
        ({"text": SENTENCE}, 422),
        ({"text": SENTENCE, "heads": [], "token": 99}, 400),
        ({"heads": []}, 422),
        ({"text": SENTENCE, "heads": [], "top": 0}, 422),
    ):
        r = c.post("/api/ablate", json=bad)
        assert r.status_code == status, (bad, r.json())
        assert r.json()["error"] and "\n" not in r.json()["error"]
