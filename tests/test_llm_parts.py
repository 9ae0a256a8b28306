"""The parts of today's LLMs (RMSNorm, the gated MLP, RoPE in halves and Llama 3's scaling) and
whole tiny Llama / Qwen2 / Qwen3 models, each compared with transformers' own modules and models,
or with a complex-number rotation. (The switches in every combination: test_llm_variants.py.)"""

from __future__ import annotations

import pytest
import torch

from qkv.core.decode.sample import generate_ids
from qkv.core.model.gpt import GPT
from qkv.core.model.nn.block import GatedMLP
from qkv.core.model.nn.layernorm import RMSNorm, rms_norm
from qkv.core.model.nn.position import RoPE, rope_frequencies
from qkv.core.see.tap import written_out
from qkv.core.spec.config import ModelConfig

transformers = pytest.importorskip("transformers")
from transformers import LlamaConfig  # noqa: E402
from transformers.modeling_rope_utils import _compute_llama3_parameters  # noqa: E402
from transformers.models.llama.modeling_llama import (  # noqa: E402
    LlamaForCausalLM,
    LlamaMLP,
    LlamaRMSNorm,
    LlamaRotaryEmbedding,
    apply_rotary_pos_emb,
)

LLAMA3 = dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=256)


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def ulps_bf16(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """How many bfloat16 steps lie between a and b, elementwise (the bits read as a signed-magnitude integer)."""

    def ordered(t):
        bits = t.contiguous().view(torch.int16).int()
        return torch.where(bits < 0, -(bits & 0x7FFF), bits)

    return (ordered(a) - ordered(b)).abs()


# ---------------------------------------------------------------------------- 1. RMSNorm


@pytest.mark.parametrize("eps", [1e-6, 1e-5])
def test_rms_norm_equals_llama_rms_norm_in_float32(eps):
    d = 48
    hf = LlamaRMSNorm(d, eps=eps)
    ours = RMSNorm(d, eps=eps, name="ln")
    with torch.no_grad():
        hf.weight.copy_(torch.rand(d, generator=gen(1)) * 2 + 0.25)
        ours.weight.copy_(hf.weight)
    x = torch.randn(3, 7, d, generator=gen(2)) * 3 + 0.5
    want = hf(x)
    written, normalized, scale = rms_norm(x, ours.weight, eps)
    fused = ours(x)  # no trace, not explicit: torch's fused kernel
    with written_out():
        explicit = ours(x)
    # float32: qkv divides by sqrt(mean(x^2) + eps), transformers multiplies by its rsqrt: a few ulps apart at most
    for got in (written, fused, explicit):
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    assert torch.equal(explicit, written)
    # the parts: scale = sqrt(mean(x^2) + eps) per token, normalized = x / scale (float64 here)
    x64 = x.double()
    scale64 = (x64.pow(2).mean(-1, keepdim=True) + eps).sqrt()
    torch.testing.assert_close(scale.double(), scale64, rtol=1e-6, atol=0)
    torch.testing.assert_close(normalized.double(), x64 / scale64, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("weight_dtype", [torch.bfloat16, torch.float32])
def test_rms_norm_equals_llama_rms_norm_in_bfloat16(weight_dtype):
    """Both compute the scale in float32 and cast the normalized vector to bfloat16 before the weight multiplies.
    Asserted: the fused path equals transformers bit for bit; the written-out one (x / sqrt rather than
    x * rsqrt) is within 1 ulp of bfloat16 everywhere (and equal on nearly every element)."""
    d = 64
    hf = LlamaRMSNorm(d, eps=1e-6).to(weight_dtype)
    ours = RMSNorm(d, eps=1e-6).to(weight_dtype)
    with torch.no_grad():
        hf.weight.copy_(torch.rand(d, generator=gen(3)) * 2 + 0.25)
        ours.weight.copy_(hf.weight)
    x = (torch.randn(4, 33, d, generator=gen(4)) * 5).to(torch.bfloat16)
    want = hf(x)
    fused = ours(x)
    written = rms_norm(x, ours.weight, 1e-6)[0]
    with written_out():
        explicit = ours(x)
    expect_dtype = torch.promote_types(torch.bfloat16, weight_dtype)
    assert want.dtype == fused.dtype == written.dtype == explicit.dtype == expect_dtype
    assert torch.equal(fused, want)
    assert torch.equal(explicit, written)
    if expect_dtype == torch.bfloat16:
        diff = ulps_bf16(written, want)
        assert int(diff.max()) <= 1, int(diff.max())
        assert float((diff == 0).float().mean()) > 0.95
    else:  # a float32 weight: the product is float32, of the same bfloat16 normalized vector (to 1 bf16 ulp)
        normalized_ours = rms_norm(x, torch.ones(d), 1e-6)[1]
        normalized_hf = (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)).to(torch.bfloat16)
        assert int(ulps_bf16(normalized_ours, normalized_hf).max()) <= 1
        torch.testing.assert_close(written, want, rtol=2**-7, atol=0)


# ---------------------------------------------------------------------------- 2. the gated MLP


@pytest.mark.parametrize("bias", [False, True])
def test_gated_mlp_equals_llama_mlp(bias):
    d, d_mlp = 32, 72
    hf = LlamaMLP(LlamaConfig(hidden_size=d, intermediate_size=d_mlp, hidden_act="silu", mlp_bias=bias))
    cfg = ModelConfig(
        d_vocab=11, n_ctx=8, d_model=d, n_heads=4, n_layers=1, d_mlp=d_mlp, mlp="gated", activation="silu", bias=bias
    )
    ours = GatedMLP(cfg, layer=0)
    torch.manual_seed(5)
    with torch.no_grad():
        for p in hf.parameters():
            p.normal_(0, 0.3)
        for mine, theirs in (("fc_gate", "gate_proj"), ("fc_in", "up_proj"), ("fc_out", "down_proj")):
            getattr(ours, mine).weight.copy_(getattr(hf, theirs).weight)
            if bias:
                getattr(ours, mine).bias.copy_(getattr(hf, theirs).bias)
    assert ours.fc_gate.weight.shape == (d_mlp, d) and (ours.fc_gate.bias is None) == (not bias)
    x = torch.randn(2, 9, d, generator=gen(6))
    with torch.no_grad():
        want = hf(x)
        torch.testing.assert_close(ours(x), want, rtol=1e-5, atol=1e-6)
        # the decoding step multiplies in another order: equal in float64, where the order's rounding is far below
        torch.testing.assert_close(ours.double().stepper()(x[:, 3].double()), hf.double()(x.double())[:, 3])
        ours.float(), hf.float()
        # the recorded parts, against transformers' projections
        from qkv.core.see.tap import recording

        with recording() as rec:
            ours(x)
        acts = rec.activations
        torch.testing.assert_close(acts["blocks.0.mlp.hook_pre"], hf.gate_proj(x), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(acts["blocks.0.mlp.hook_pre_linear"], hf.up_proj(x), rtol=1e-5, atol=1e-6)
        post = torch.nn.functional.silu(hf.gate_proj(x)) * hf.up_proj(x)
        torch.testing.assert_close(acts["blocks.0.mlp.hook_post"], post, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- 3. RoPE


def llama_config(d_head: int, base: float, n_ctx: int, scaling: dict | None = None) -> LlamaConfig:
    rope = {"rope_type": "llama3" if scaling else "default", "rope_theta": base, **(scaling or {})}
    return LlamaConfig(
        hidden_size=4 * d_head,
        num_attention_heads=4,
        head_dim=d_head,
        max_position_embeddings=n_ctx,
        rope_parameters=rope,
    )


@pytest.mark.parametrize("scaling", [None, LLAMA3], ids=["plain", "llama3"])
@pytest.mark.parametrize("offset", [0, 9])
def test_rope_halves_equals_transformers(scaling, offset):
    d_head, base, n_ctx, T = 16, 10000.0, 64, 12
    hf_rot = LlamaRotaryEmbedding(llama_config(d_head, base, n_ctx, scaling))
    rope = RoPE(n_ctx, d_head, base, layout="halves", scaling=scaling)
    x = torch.randn(2, 3, T, d_head, generator=gen(7))
    positions = torch.arange(offset, offset + T)[None]  # (1, T)
    cos, sin = hf_rot(x, positions)  # (1, T, d_head)
    want, _ = apply_rotary_pos_emb(x, x, cos, sin)  # unsqueeze_dim=1: x is (B, heads, T, d_head)
    got = rope(x, offset)
    # transformers takes t * theta in float32, qkv in float64: a few 1e-6 apart at these positions
    torch.testing.assert_close(got, want, rtol=0, atol=2e-5)
    # one token per row, each at its own position (a batched decoding step)
    rows = torch.tensor([offset, offset + 5])
    one = x[:, :, :1]
    c, s = hf_rot(one, rows[:, None])  # (2, 1, d_head)
    want_rows, _ = apply_rotary_pos_emb(one, one, c, s)
    torch.testing.assert_close(rope(one, rows), want_rows, rtol=0, atol=2e-5)


def complex_rotation(x: torch.Tensor, positions: torch.Tensor, base: float, halves: bool) -> torch.Tensor:
    """x (..., T, d) with each pair of dimensions a complex number times exp(i t theta_j), theta_j = base^(-2j/d),
    in float64; the pairs are (x_2j, x_2j+1), or with halves (x_j, x_j+d/2)."""
    d = x.shape[-1]
    x = x.double()
    theta = torch.tensor([base ** (-2 * j / d) for j in range(d // 2)], dtype=torch.float64)
    angle = positions.double()[:, None] * theta  # (T, d/2)
    turn = torch.polar(torch.ones_like(angle), angle)
    if halves:
        z = torch.complex(x[..., : d // 2], x[..., d // 2 :]) * turn
        return torch.cat((z.real, z.imag), dim=-1)
    z = torch.view_as_complex(x.unflatten(-1, (-1, 2)).contiguous()) * turn
    return torch.view_as_real(z).flatten(-2)


@pytest.mark.parametrize("halves", [False, True], ids=["adjacent", "halves"])
def test_rope_equals_a_complex_number_rotation(halves):
    d_head, base, n_ctx = 12, 500.0, 40
    rope = RoPE(n_ctx, d_head, base, layout="halves" if halves else "adjacent")
    x = torch.randn(2, 3, 10, d_head, generator=gen(8))
    for offset in (0, 7, 30):
        want = complex_rotation(x, torch.arange(offset, offset + 10), base, halves)
        torch.testing.assert_close(rope(x, offset).double(), want, rtol=0, atol=5e-6)
    # a rotation keeps each head's length; the two layouts are different functions of x
    torch.testing.assert_close(rope(x, 5).norm(dim=-1), x.norm(dim=-1), rtol=1e-5, atol=0)
    other = RoPE(n_ctx, d_head, base, layout="adjacent" if halves else "halves")
    assert not torch.allclose(rope(x, 3), other(x, 3), atol=1e-3)


@pytest.mark.parametrize(
    "d_head,base,scaling",
    [
        (16, 10000.0, LLAMA3),
        (
            128,
            500000.0,
            dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=8192),
        ),
        (
            64,
            10000.0,
            dict(factor=32.0, low_freq_factor=2.0, high_freq_factor=8.0, original_max_position_embeddings=512),
        ),
    ],
)
def test_llama3_frequencies_equal_transformers(d_head, base, scaling):
    want, attention_factor = _compute_llama3_parameters(llama_config(d_head, base, 4 * 8192, scaling))
    assert attention_factor == 1.0
    got = rope_frequencies(d_head, base, scaling)
    assert got.shape == want.shape == (d_head // 2,)
    torch.testing.assert_close(got, want.double(), rtol=1e-6, atol=0)
    # the three regimes all occur (so the comparison covers them): kept, divided by factor, in between
    plain = rope_frequencies(d_head, base)
    ratio = got / plain
    assert (ratio == 1).any() and torch.isclose(ratio, torch.tensor(1 / scaling["factor"], dtype=ratio.dtype)).any()
    assert ((ratio < 1 - 1e-9) & (ratio > 1 / scaling["factor"] + 1e-9)).any()


# ---------------------------------------------------------------------------- whole models against transformers


def _hf_pair(kind: str):
    """A tiny transformers model (random weights, norms included) and its config for qkv."""
    common = dict(
        vocab_size=29,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=12,
        max_position_embeddings=64,
        rms_norm_eps=1e-6,
        tie_word_embeddings=False,
        attn_implementation="eager",
    )
    qkv_kw = dict(
        d_vocab=29,
        n_ctx=64,
        d_model=32,
        n_heads=4,
        n_kv_heads=2,
        d_head=12,
        n_layers=2,
        d_mlp=48,
        norm="rms",
        mlp="gated",
        activation="silu",
        pos="rope",
        rope_layout="halves",
        bias=False,
        unembed_bias=False,
        ln_eps=1e-6,
    )
    if kind == "llama3":
        hf_cfg = LlamaConfig(
            **common,
            rope_parameters={
                "rope_type": "llama3",
                "rope_theta": 5000.0,
                **dict(LLAMA3, original_max_position_embeddings=16),
            },
        )
        hf = LlamaForCausalLM(hf_cfg)
        qkv_kw.update(rope_base=5000.0, rope_scaling=dict(LLAMA3, original_max_position_embeddings=16))
    elif kind == "qwen2":
        from transformers import Qwen2Config
        from transformers.models.qwen2.modeling_qwen2 import Qwen2ForCausalLM

        hf = Qwen2ForCausalLM(Qwen2Config(**common, rope_parameters={"rope_type": "default", "rope_theta": 1e6}))
        qkv_kw.update(rope_base=1e6, qkv_bias=True)
    else:
        from transformers import Qwen3Config
        from transformers.models.qwen3.modeling_qwen3 import Qwen3ForCausalLM

        hf = Qwen3ForCausalLM(Qwen3Config(**common, rope_parameters={"rope_type": "default", "rope_theta": 1e6}))
        qkv_kw.update(rope_base=1e6, qk_norm=True)
    torch.manual_seed(21)
    with torch.no_grad():
        for name, p in hf.named_parameters():
            if p.dim() == 1:
                p.copy_(
                    1 + 0.5 * (2 * torch.rand(p.shape) - 1)
                    if name.endswith("norm.weight")
                    else 0.3 * torch.randn(p.shape)
                )
            else:
                p.normal_(0, 0.2)
    hf.generation_config.eos_token_id = None  # greedy runs its 10 tokens, as generate_ids does
    return hf.eval(), ModelConfig(**qkv_kw)


@pytest.mark.parametrize("kind", ["llama3", "qwen2", "qwen3"])
def test_a_tiny_llm_equals_transformers(kind):
    hf, cfg = _hf_pair(kind)
    ours = GPT(cfg).eval()
    theirs = dict(hf.named_parameters())
    with torch.no_grad():
        ours.embed.weight.copy_(theirs["model.embed_tokens.weight"])
        ours.ln_final.weight.copy_(theirs["model.norm.weight"])
        ours.unembed.weight.copy_(theirs["lm_head.weight"])
        for i, block in enumerate(ours.blocks):
            p = f"model.layers.{i}."
            block.ln1.weight.copy_(theirs[p + "input_layernorm.weight"])
            block.ln2.weight.copy_(theirs[p + "post_attention_layernorm.weight"])
            qkv = [theirs[p + f"self_attn.{x}_proj.weight"] for x in "qkv"]
            block.attn.W_QKV.weight.copy_(torch.cat(qkv))
            if cfg.qkv_bias:
                block.attn.W_QKV.bias.copy_(torch.cat([theirs[p + f"self_attn.{x}_proj.bias"] for x in "qkv"]))
            block.attn.W_O.weight.copy_(theirs[p + "self_attn.o_proj.weight"])
            if cfg.qk_norm:
                block.attn.q_norm.weight.copy_(theirs[p + "self_attn.q_norm.weight"])
                block.attn.k_norm.weight.copy_(theirs[p + "self_attn.k_norm.weight"])
            for mine, their in (("fc_gate", "gate_proj"), ("fc_in", "up_proj"), ("fc_out", "down_proj")):
                getattr(block.mlp, mine).weight.copy_(theirs[p + f"mlp.{their}.weight"])
    copied = sum(p.numel() for p in ours.parameters())
    assert copied == sum(p.numel() for p in hf.parameters())
    ids = torch.randint(0, 29, (2, 40), generator=gen(22))
    with torch.no_grad():
        want = hf(ids).logits
        fused = ours(ids)
    traced, _ = ours.run_with_trace(ids)
    scale = float(want.abs().max())
    for got in (fused, traced):
        torch.testing.assert_close(got, want, rtol=0, atol=1e-5 * max(1.0, scale))
    # greedy continuations agree too
    prompt = ids[0, :6].tolist()
    hf_new = hf.generate(torch.tensor([prompt]), max_new_tokens=10, do_sample=False, pad_token_id=0)[0, 6:].tolist()
    assert list(generate_ids(ours, prompt, 10, temperature=0)) == hf_new
