"""Tests for run_with_trace: every named activation, the shorthand, filtering, and unchanged logits."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from qkv import GPT, ModelConfig
from qkv.core.see import tap
from qkv.core.see.trace import trace_names

KINDS = [(pos, norm) for pos in ("learned", "sinusoidal", "rope", "none") for norm in ("pre", "post")]
KINDS += [("learned", "none"), ("rope", "none")]


def model_for(pos="learned", norm="pre", **kw) -> GPT:
    """A small model whose LayerNorms have random (not 1 and 0) scales and shifts, so they matter."""
    torch.manual_seed(0)
    cfg = ModelConfig(d_vocab=23, n_ctx=16, d_model=24, n_heads=3, n_layers=2, pos=pos, norm=norm, init_std=0.2, **kw)
    model = GPT(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ln" in f".{name}":  # ln1, ln2, ln_final
                p.copy_(torch.randn_like(p) * 0.3 + (1.0 if name.endswith("weight") else 0.0))
    return model


IDS = torch.randint(0, 23, (2, 11), generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("pos,norm", KINDS)
def test_trace_holds_every_name_and_keeps_the_logits(pos, norm):
    model = model_for(pos, norm)
    logits, trace = model.run_with_trace(IDS)
    assert list(trace) == trace_names(model.cfg)  # every name, in the order of the computation
    # bit for bit by construction: the same ops in the same process, the trace only reads them
    assert torch.equal(logits, model(IDS, explicit=True))
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
        x = trace["out", layer, "ln1"] if norm == "pre" else trace["resid_pre", layer]  # the attention's input
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


def _layer_norm_inputs(trace, norm: str, layer: int) -> dict[str, torch.Tensor]:
    """What each LayerNorm of a layer was applied to."""
    pre, mid = trace["resid_pre", layer], trace["resid_mid", layer]
    if norm == "pre":
        return {"ln1": pre, "ln2": mid}
    return {"ln1": pre + trace["attn_out", layer], "ln2": mid + trace["mlp_out", layer]}


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_layer_norm_hooks_follow_transformer_lens(norm):
    """hook_scale = sqrt(var + eps), hook_normalized = (x - mean) / scale before the learned scale
    and shift, hook_out = the LayerNorm's output (TransformerLens 4's meanings)."""
    model = model_for(norm=norm)
    _, trace = model.run_with_trace(IDS)
    lns = [
        (f"blocks.{L}.{sub}", getattr(model.blocks[L], sub), x)
        for L in range(2)
        for sub, x in _layer_norm_inputs(trace, norm, L).items()
    ]
    if norm == "pre":
        lns.append(("ln_final", model.ln_final, trace["resid_post", 1]))
    for name, ln, x in lns:
        mean, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
        scale, normalized, out = (trace[f"{name}.{hook}"] for hook in ("hook_scale", "hook_normalized", "hook_out"))
        assert scale.shape == (*x.shape[:2], 1)
        torch.testing.assert_close(scale, (var + ln.eps).sqrt(), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(normalized, (x - mean) / scale, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(out, F.layer_norm(x, (24,), ln.weight, ln.bias, ln.eps), atol=1e-5, rtol=1e-5)
        assert (out - normalized).abs().max() > 0.1  # the learned scale and shift are not 1 and 0 here
    if norm == "post":  # the LayerNorm's output is the residual stream itself: one tensor recorded twice
        assert torch.equal(trace["out", 0, "ln1"], trace["resid_mid", 0])
        assert torch.equal(trace["out", 0, "ln2"], trace["resid_post", 0])
    else:
        torch.testing.assert_close(
            trace["out", None, "ln_final"] @ model.unembed.weight.T + model.unembed.bias,
            trace["logits"],
            atol=1e-5,
            rtol=1e-5,
        )


def test_no_layer_norm_no_layer_norm_hooks():
    names = trace_names(model_for(norm="none").cfg)
    assert not [n for n in names if ".ln" in n or n.startswith("ln_final")]
    post = trace_names(model_for(norm="post").cfg)
    assert not [n for n in post if n.startswith("ln_final")]  # a post-norm block already ends in LN2
    assert "blocks.1.ln2.hook_normalized" in post


def test_probs_keep_the_model_dtype():
    model = model_for().double()
    logits, trace = model.run_with_trace(IDS)
    assert logits.dtype == trace["probs"].dtype == torch.float64
    torch.testing.assert_close(trace["probs"], torch.softmax(logits, -1), atol=1e-12, rtol=0)
    assert model_for().run_with_trace(IDS)[1]["probs"].dtype == torch.float32


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
    assert trace["scale", 1, "ln1"] is trace["blocks.1.ln1.hook_scale"]
    assert trace["out", None, "ln_final"] is trace["ln_final.hook_out"]
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
    assert torch.equal(logits, model(IDS, explicit=True))  # same ops, same process: identical by construction
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
