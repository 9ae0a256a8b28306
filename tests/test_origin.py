"""Where q, k and v come from (qkv.analysis.origin): its x, q, k, v and dot products, computed from the
weights by the formula, equal the trace's own hook_q/hook_k/hook_v/hook_dots (float32's tolerance),
for the bundled model and for tiny models of every block kind (pre/post/no norm, RoPE, values="k",
an encoder); and /api/origin answers the same document, with one-line errors for bad input."""

from __future__ import annotations

import pytest
import torch
from fastapi.testclient import TestClient

from qkv.analysis.origin import attention_input_name, origin
from qkv.core.hub.bundled import default_ckpt
from qkv.core.model import make_model
from qkv.core.see.indices import TextError
from qkv.core.spec.config import ModelConfig
from qkv.core.train.checkpoint import load

SENTENCE = "我 投资了 苹果 ，"
RTOL, ATOL = 1e-5, 1e-5  # float32's rounding: the trace computes in float32, origin in float64


class Names:
    """A stand-in tokenizer for tiny random models: token i is shown as t<i>."""

    def display(self, i):
        return f"t{i}"

    def decode(self, ids, prev=None):
        return " ".join(f"t{i}" for i in ids)


@pytest.fixture(scope="module")
def bundled():
    return load(default_ckpt())


def close(a, b) -> bool:
    return torch.allclose(torch.as_tensor(a, dtype=torch.float64), b.double(), rtol=RTOL, atol=ATOL)


def check_against_trace(model, doc) -> None:
    """Every vector and number of `doc` against the trace of the same ids (another computation)."""
    L, h, i = doc["layer"], doc["head"], doc["token"]
    _, tr = model.run_with_trace(torch.tensor([doc["ids"]]))
    a = f"blocks.{L}.attn."
    x, q, k, v, dots = (
        tr[attention_input_name(model.cfg, L)][0],
        tr[a + "hook_q"][0, :, h],
        tr[a + "hook_k"][0, :, h],
        tr[a + "hook_v"][0, :, h],
        tr[a + "hook_dots"][0, h],
    )
    rope = a + "hook_rot_q" in tr
    assert doc["rope"] == rope
    qd, kd = (tr[a + "hook_rot_q"][0, :, h], tr[a + "hook_rot_k"][0, :, h]) if rope else (q, k)
    assert close(doc["query"]["x"], x[i]) and close(doc["query"]["q"], q[i])
    assert close(torch.tensor(doc["query"]["xW_Q"]) + torch.tensor(doc["b_Q"]), q[i])
    if rope:
        assert close(doc["query"]["q_rot"], qd[i])
    T = len(doc["ids"])
    expected = list(range(i + 1)) if model.cfg.causal else list(range(T))
    assert [key["pos"] for key in doc["keys"]] == expected
    for key in doc["keys"]:
        j = key["pos"]
        assert close(key["x"], x[j]) and close(key["k"], k[j]) and close(key["v"], v[j]), j
        assert close(key["product"], qd[i] * kd[j]), j  # coordinate by coordinate
        assert abs(key["dot"] - float(dots[i, j])) <= ATOL + RTOL * abs(float(dots[i, j])), (
            j,
            key["dot"],
            float(dots[i, j]),
        )
        assert abs(key["scaled"] - key["dot"] / doc["scale"]) <= 1e-12 * max(1.0, abs(key["dot"]))
        if rope:
            assert close(key["k_rot"], kd[j])


@pytest.mark.parametrize("layer,head,token", [(0, 0, -1), (1, 2, 2), (-1, -1, 0), (2, 3, 4)])
def test_bundled_origin_equals_the_trace(bundled, layer, head, token):
    model, tok = bundled  # indices taken modulo the model's size: the bundled model may be retrained
    T = len(tok.encode(SENTENCE))
    doc = origin(
        model,
        tok,
        SENTENCE,
        layer=layer % model.cfg.n_layers,
        head=head % model.cfg.n_heads,
        token=min(token, T - 1) if token >= 0 else token,
    )
    assert doc["kind"] == "origin" and doc["x_name"].endswith("ln1.hook_out")  # the bundled model is pre-norm
    check_against_trace(model, doc)


def test_ids_and_text_give_the_same_document(bundled):
    model, tok = bundled
    a = origin(model, tok, SENTENCE, layer=0, head=1, token=-1)
    b = origin(model, tok, None, layer=0, head=1, token=-1, ids=a["ids"])
    assert a["keys"] == b["keys"] and a["query"] == b["query"]


@pytest.mark.parametrize(
    "kw",
    [
        dict(norm="pre"),
        dict(norm="post"),
        dict(norm="none"),
        dict(pos="rope"),
        dict(pos="rope", norm="post"),
        dict(values="k"),
        dict(bias=False),
        dict(arch="bert", causal=False, norm="post"),
    ],
)
def test_tiny_models_every_kind(kw):
    torch.manual_seed(0)
    cfg = ModelConfig(
        **{"d_vocab": 31, "n_ctx": 12, "d_model": 16, "n_heads": 2, "d_head": 8, "n_layers": 2, "init_std": 0.3, **kw}
    )
    model = make_model(cfg).eval()
    ids = torch.randint(0, cfg.d_vocab, (9,)).tolist()
    for layer, head, token in ((0, 0, 8), (1, 1, 3)):
        doc = origin(model, Names(), None, layer=layer, head=head, token=token, ids=ids)
        assert doc["norm"] == cfg.norm and doc["values"] == cfg.values
        expected_x = f"blocks.{layer}.ln1.hook_out" if cfg.norm == "pre" else f"blocks.{layer}.hook_resid_pre"
        assert doc["x_name"] == expected_x
        if cfg.values == "k":
            assert all(key["v"] == key["k"] for key in doc["keys"])
        check_against_trace(model, doc)


def test_bad_input_is_a_text_error(bundled):
    model, tok = bundled
    for kw in (dict(layer=model.cfg.n_layers), dict(head=-model.cfg.n_heads - 1), dict(token=99), dict(layer=True)):
        args = {"layer": 0, "head": 0, "token": 0, **kw}
        with pytest.raises(TextError):
            origin(model, tok, SENTENCE, **args)
    with pytest.raises(TextError):
        origin(model, tok, "", layer=0, head=0, token=0)
    with pytest.raises(TextError):
        origin(model, tok, SENTENCE, layer=0, head=0, token=0, ids=[1, 2])
    with pytest.raises(TextError):
        origin(model, tok, None, layer=0, head=0, token=0, ids=[model.cfg.d_vocab])


def test_api_origin(bundled):
    from qkv.apps.web.server import create_app

    model, tok = bundled
    c = TestClient(create_app(model, tok, "bundled"), base_url="http://127.0.0.1:8000")
    body = {"text": SENTENCE, "layer": 1, "head": 0, "token": 2}
    r = c.post("/api/origin", json=body)
    assert r.status_code == 200
    assert r.json() == origin(model, tok, SENTENCE, layer=1, head=0, token=2)
    ids = r.json()["ids"]
    r2 = c.post("/api/origin", json={"ids": ids, "layer": 1, "head": 0, "token": 2})
    assert r2.status_code == 200 and r2.json()["keys"] == r.json()["keys"]
    for bad, status in (
        ({**body, "layer": 99}, 400),
        ({**body, "token": len(ids)}, 400),
        ({**body, "layer": "1"}, 422),
        ({**body, "ids": ids}, 422),
        ({**body, "extra": 1}, 422),
        ({"text": SENTENCE, "layer": 0}, 422),
        ({**body, "text": "x" * 5000}, 422),
        ({**body, "text": ""}, 400),
    ):
        r = c.post("/api/origin", json=bad)
        assert r.status_code == status, (bad, r.json())
        err = r.json()["error"]
        assert err and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize("n_kv_heads", [1, 2, 4])
def test_origin_rebuilds_every_heads_dot_products_with_grouped_heads_q_k_norm_and_q_k_v_biases(n_kv_heads):
    """On a Qwen3-like model (RMSNorm, grouped-query attention, q/k/v biases, q/k norm, RoPE on halves) the
    panel's products give each head's hook_dots, and its biases are W_QKV's rows for that head (its own
    key/value head's, grouped)."""
    from qkv.core.text.tokenizers import train_tokenizer

    cfg = ModelConfig(
        d_vocab=23, n_ctx=24, d_model=32, n_heads=4, n_layers=2, init_std=0.25, norm="rms", mlp="gated",
        activation="silu", pos="rope", rope_layout="halves", bias=False, qkv_bias=True, qk_norm=True,
        n_kv_heads=n_kv_heads,
    )  # fmt: skip
    torch.manual_seed(3)
    model = make_model(cfg).eval()
    with torch.no_grad():  # norm weights far from 1 and biases far from 0, so that they matter
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(torch.randn_like(p) * 0.3 + (0.0 if name.endswith("bias") else 1.0))
    tok = train_tokenizer("char", "abcdefghijklmnopqrstuvw")
    ids = [5, 2, 9, 14, 7]
    _, trace = model.run_with_trace(torch.tensor([ids]))
    group = cfg.n_heads // n_kv_heads
    bias = model.blocks[1].attn.W_QKV.bias.detach().view(-1, cfg.d_head)  # (n_heads + 2 n_kv_heads, d_head)
    for head in range(cfg.n_heads):
        doc = origin(model, tok, layer=1, head=head, token=4, ids=ids)
        dots = [key["dot"] for key in doc["keys"]]
        want = trace["blocks.1.attn.hook_dots"][0, head, 4].double()  # (T,): q_4 . k_j of this head
        torch.testing.assert_close(torch.tensor(dots, dtype=torch.float64), want, atol=1e-5, rtol=0)
        kv = cfg.n_heads + head // group  # the row of its key/value head's bias
        assert doc["b_Q"] == pytest.approx(bias[head].tolist(), abs=1e-7)
        assert doc["b_K"] == pytest.approx(bias[kv].tolist(), abs=1e-7)
        assert doc["b_V"] == pytest.approx(bias[kv + n_kv_heads].tolist(), abs=1e-7)
        assert doc["pre_norm"] and doc["qk_norm"]
