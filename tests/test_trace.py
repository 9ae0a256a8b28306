"""Tests for run_with_trace: every named activation, the shorthand, filtering, and unchanged logits."""

from __future__ import annotations

import math

import pytest
import torch

from qkv import GPT, ModelConfig
from qkv.core.nn import tap
from qkv.core.trace import trace_names

KINDS = [(pos, norm) for pos in ("learned", "sinusoidal", "rope", "none") for norm in ("pre", "post")]


def model_for(pos="learned", norm="pre", **kw) -> GPT:
    torch.manual_seed(0)
    cfg = ModelConfig(d_vocab=23, n_ctx=16, d_model=24, n_heads=3, n_layers=2, pos=pos, norm=norm, init_std=0.2, **kw)
    return GPT(cfg).eval()


IDS = torch.randint(0, 23, (2, 11), generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("pos,norm", KINDS)
def test_trace_holds_every_name_and_keeps_the_logits(pos, norm):
    model = model_for(pos, norm)
    logits, trace = model.run_with_trace(IDS)
    assert list(trace) and set(trace) == set(trace_names(model.cfg))
    assert torch.equal(logits, model(IDS, explicit=True))  # the explicit path, number for number
    assert torch.allclose(logits, model(IDS), atol=1e-5)  # and the fused path agrees
    assert not tap.active()


@pytest.mark.parametrize("pos,norm", KINDS)
def test_activations_follow_the_formulas(pos, norm):
    model = model_for(pos, norm)
    _, trace = model.run_with_trace(IDS)
    B, T = IDS.shape
    H, D = model.cfg.n_heads, model.cfg.d_head
    for layer in range(model.cfg.n_layers):
        attn = model.blocks[layer].attn
        x = trace["normalized", layer, "ln1"] if norm == "pre" else trace["resid_pre", layer]
        W = attn.head_weights()
        b_q = attn.W_QKV.bias[: H * D].view(H, D)
        q = torch.einsum("btm,hmd->bthd", x, W["W_Q"]) + b_q  # q = x W_Q + b_Q, per head
        assert torch.allclose(trace["q", layer], q, atol=1e-5)
        qk = trace["rot_q", layer] if pos == "rope" else trace["q", layer]
        kk = trace["rot_k", layer] if pos == "rope" else trace["k", layer]
        dots = torch.einsum("bihd,bjhd->bhij", qk, kk)
        assert torch.allclose(trace["dots", layer], dots, atol=1e-5)
        scores = trace["attn_scores", layer]
        visible = torch.ones(T, T, dtype=torch.bool).tril()
        assert torch.allclose(scores[..., visible], dots[..., visible] / math.sqrt(D), atol=1e-5)
        assert torch.isinf(scores[..., ~visible]).all()
        assert torch.allclose(trace["pattern", layer], scores.softmax(-1), atol=1e-6)
        z = torch.einsum("bhij,bjhd->bihd", trace["pattern", layer], trace["v", layer])  # z = A v
        assert torch.allclose(trace["z", layer], z, atol=1e-5)
        assert trace["result", layer].shape == (B, T, H, model.cfg.d_model)
    assert torch.allclose(trace["probs"].sum(-1), torch.ones(B, T), atol=1e-5)


def test_rope_rotates_q_and_k_but_not_v():
    _, trace = model_for("rope").run_with_trace(IDS)
    assert not torch.allclose(trace["rot_q", 0][:, 1:], trace["q", 0][:, 1:])
    assert torch.allclose(trace["rot_q", 0][:, 0], trace["q", 0][:, 0], atol=1e-6)  # position 0: no rotation
    assert torch.allclose(trace["rot_q", 0].norm(dim=-1), trace["q", 0].norm(dim=-1), atol=1e-5)
    assert "blocks.0.attn.hook_rot_v" not in trace


def test_shorthand_keys():
    _, trace = model_for().run_with_trace(IDS)
    assert trace["pattern", 0] is trace["blocks.0.attn.hook_pattern"]
    assert trace["pattern", -1] is trace["blocks.1.attn.hook_pattern"]
    assert trace["resid_post", 1] is trace["blocks.1.hook_resid_post"]
    assert trace["pre", 0] is trace["blocks.0.mlp.hook_pre"]
    assert trace["normalized", 0, "ln2"] is trace["blocks.0.ln2.hook_normalized"]
    assert trace["embed"] is trace["hook_embed"]
    assert trace["normalized", None, "ln_final"] is trace["ln_final.hook_normalized"]
    with pytest.raises(KeyError, match="out of range"):
        trace["pattern", 2]
    with pytest.raises(KeyError):
        trace["nonsense", 0]


def test_names_keep_only_what_is_asked():
    model = model_for()
    logits, trace = model.run_with_trace(IDS, names=["blocks.1.attn.hook_pattern", "probs"])
    assert set(trace) == {"blocks.1.attn.hook_pattern", "probs"}
    assert torch.equal(logits, model(IDS, explicit=True))
    _, trace = model.run_with_trace(IDS, names=lambda name: name.endswith("hook_z"))
    assert set(trace) == {"blocks.0.attn.hook_z", "blocks.1.attn.hook_z"}
    with pytest.raises(ValueError, match="unknown activation"):
        model.run_with_trace(IDS, names=["blocks.0.attn.hook_patern"])


def test_a_failed_trace_leaves_nothing_recording():
    model = model_for()
    with pytest.raises(ValueError):
        model.run_with_trace(torch.zeros(1, 40, dtype=torch.long))  # longer than n_ctx
    assert not tap.active()
    model.run_with_trace(IDS)  # and the next trace works


def test_untraced_forward_records_nothing():
    model = model_for()
    with tap.recording() as rec:
        pass
    model(IDS)
    assert rec.activations == {}
