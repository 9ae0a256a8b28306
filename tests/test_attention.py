"""Tests for attention: the written-out formula, the fused kernel, per-head weights and positions."""

import math

import pytest
import torch
import torch.nn.functional as F

from qkv import GPT, ModelConfig, attention
from qkv.core.model.nn.attention import MultiHeadAttention, causal_mask
from qkv.core.model.nn.position import RoPE, sinusoidal_table
from qkv.core.spec.config import POS_KINDS


def randomize_(model: torch.nn.Module, std: float = 0.3, seed: int = 0) -> torch.nn.Module:
    """Every parameter (biases and LayerNorm too) set to noise, so no term can hide behind a zero."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * std)
    return model


def test_worked_example_by_hand():
    q = torch.tensor([[[[math.sqrt(2), 0.0]]]], dtype=torch.float64)  # (1, 1, 1, 2)
    k = torch.tensor([[[[math.log(2), 0.0], [0.0, 1.0], [0.0, -1.0]]]], dtype=torch.float64)
    v = torch.tensor([[[[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]]]], dtype=torch.float64)
    z, pattern, scores = attention(q, k, v)
    assert scores.shape == (1, 1, 1, 3)
    torch.testing.assert_close(
        scores[0, 0, 0], torch.tensor([math.log(2), 0.0, 0.0], dtype=torch.float64), atol=1e-6, rtol=0
    )
    torch.testing.assert_close(
        pattern[0, 0, 0], torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64), atol=1e-6, rtol=0
    )
    torch.testing.assert_close(z[0, 0, 0], torch.tensor([1.0, 1.0], dtype=torch.float64), atol=1e-6, rtol=0)


def test_causal_mask_shape_and_offset():
    m = causal_mask(3, 3)
    assert torch.equal(m, torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool))
    # two queries after three cached keys: they sit at positions 3 and 4
    m = causal_mask(2, 5)
    assert torch.equal(m, torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool))


def _qkv(B=2, H=3, Tq=5, Tk=5, D=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(B, H, Tq, D, generator=g),
        torch.randn(B, H, Tk, D, generator=g),
        torch.randn(B, H, Tk, D, generator=g),
    )


def test_matches_sdpa_without_mask():
    q, k, v = _qkv(Tq=4, Tk=6)
    z, _, _ = attention(q, k, v)
    torch.testing.assert_close(z, F.scaled_dot_product_attention(q, k, v), atol=1e-6, rtol=0)


def test_matches_sdpa_causal():
    q, k, v = _qkv(Tq=7, Tk=7)
    z, _, _ = attention(q, k, v, causal_mask(7, 7))
    torch.testing.assert_close(z, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-6, rtol=0)
    # and the mask matters: without it the answer differs
    z_full, _, _ = attention(q, k, v)
    assert (z_full - z).abs().max() > 1e-2


def test_matches_sdpa_offset_mask():
    q, k, v = _qkv(Tq=3, Tk=8)
    mask = causal_mask(3, 8)
    z, _, _ = attention(q, k, v, mask)
    torch.testing.assert_close(z, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=1e-6, rtol=0)


def test_pattern_rows_sum_to_one_and_masked_entries_are_zero():
    q, k, v = _qkv(Tq=6, Tk=6)
    mask = causal_mask(6, 6)
    _, pattern, scores = attention(q, k, v, mask)
    torch.testing.assert_close(pattern.sum(-1), torch.ones(pattern.shape[:-1]), atol=1e-6, rtol=0)
    assert (pattern >= 0).all()
    assert (pattern[..., ~mask] == 0).all()
    assert (pattern[..., mask] > 0).all()
    assert torch.isneginf(scores[..., ~mask]).all()


def test_attention_dropout_breaks_row_sums():
    torch.manual_seed(0)
    q, k, v = _qkv(Tq=6, Tk=6)
    _, pattern, _ = attention(q, k, v, causal_mask(6, 6), dropout_p=0.5)
    sums = pattern.sum(-1)
    assert not torch.allclose(sums, torch.ones_like(sums), atol=1e-3)
    # kept weights are scaled by 1/(1-p): each entry is 0 or twice a softmax weight
    _, clean, _ = attention(q, k, v, causal_mask(6, 6))
    kept = pattern != 0
    torch.testing.assert_close(pattern[kept], 2 * clean[kept])
    assert (~kept & (clean > 0)).any()


@pytest.mark.parametrize("pos", POS_KINDS)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_explicit_matches_fused_in_model(pos, causal, norm):
    torch.manual_seed(0)
    cfg = ModelConfig(d_vocab=53, n_ctx=16, d_model=32, n_heads=4, n_layers=2, pos=pos, causal=causal, norm=norm)
    model = randomize_(GPT(cfg), std=0.2).eval()
    ids = torch.randint(0, 53, (2, 13))
    with torch.no_grad():
        fused = model(ids)
        explicit = model(ids, explicit=True)
    assert fused.abs().max() > 0.1  # the comparison below is not between near-zero numbers
    torch.testing.assert_close(explicit, fused, atol=1e-5, rtol=0)


def test_head_weights_reconstruct_the_fused_projection():
    torch.manual_seed(0)
    cfg = ModelConfig(d_model=24, n_heads=3, d_head=5, n_ctx=8, causal=True)  # d_head * n_heads != d_model
    mha = randomize_(MultiHeadAttention(cfg), std=0.5).eval()
    x = torch.randn(2, 6, 24)
    hw = mha.head_weights()
    assert hw["W_Q"].shape == (3, 24, 5) and hw["W_O"].shape == (3, 5, 24)
    d_attn = 15
    fused = mha.W_QKV(x)  # (B, T, 3 * d_attn)
    b = mha.W_QKV.bias
    for s, name in enumerate(("W_Q", "W_K", "W_V")):
        for h in range(3):
            cols = slice(s * d_attn + h * 5, s * d_attn + (h + 1) * 5)
            torch.testing.assert_close(x @ hw[name][h] + b[cols], fused[..., cols], atol=1e-5, rtol=0)
    # the whole module, rebuilt head by head: out = sum_h softmax(q_h k_h^T / sqrt(d)) v_h W_O[h] + b_O
    mask = causal_mask(6, 6)
    out = mha.W_O.bias.clone()
    for h in range(3):
        q = x @ hw["W_Q"][h] + b[h * 5 : (h + 1) * 5]
        k = x @ hw["W_K"][h] + b[d_attn + h * 5 : d_attn + (h + 1) * 5]
        v = x @ hw["W_V"][h] + b[2 * d_attn + h * 5 : 2 * d_attn + (h + 1) * 5]
        z, _, _ = attention(q, k, v, mask)
        out = out + z @ hw["W_O"][h]
    with torch.no_grad():
        torch.testing.assert_close(mha(x), out, atol=1e-5, rtol=0)


def _rotate_at(rope: RoPE, vec: torch.Tensor, position: int) -> torch.Tensor:
    return rope(vec.view(1, 1, 1, -1), offset=position).view(-1)


def test_rope_depends_only_on_offset():
    rope = RoPE(n_ctx=64, d_head=8)
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(8, generator=g), torch.randn(8, generator=g)
    for s, t in [(0, 3), (7, 2), (10, 10), (20, 31)]:
        a = _rotate_at(rope, q, s) @ _rotate_at(rope, k, t)
        b = _rotate_at(rope, q, s + 5) @ _rotate_at(rope, k, t + 5)
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)
    # but a different offset gives a different score
    a = _rotate_at(rope, q, 0) @ _rotate_at(rope, k, 1)
    b = _rotate_at(rope, q, 0) @ _rotate_at(rope, k, 4)
    assert (a - b).abs() > 1e-3


def test_rope_preserves_norms_and_is_identity_at_zero():
    rope = RoPE(n_ctx=32, d_head=6)
    x = torch.randn(2, 3, 32, 6, generator=torch.Generator().manual_seed(1))
    y = rope(x)
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1), atol=1e-5, rtol=0)
    torch.testing.assert_close(y[:, :, 0], x[:, :, 0])
    assert (y[:, :, 1:] - x[:, :, 1:]).abs().max() > 1e-2
    # an offset shifts positions: rotating positions 4..9 equals slicing the full rotation
    torch.testing.assert_close(rope(x[:, :, 4:10], offset=4), y[:, :, 4:10])


def test_rope_rotates_first_pair_by_t_radians():
    rope = RoPE(n_ctx=8, d_head=4)
    e0 = torch.tensor([1.0, 0.0, 0.0, 0.0])
    for t in (1, 3):  # theta_0 = 1: the first pair turns by t radians
        torch.testing.assert_close(_rotate_at(rope, e0, t), torch.tensor([math.cos(t), math.sin(t), 0.0, 0.0]))


@pytest.mark.parametrize("d_model", [8, 7])
def test_sinusoidal_table_formula(d_model):
    table = sinusoidal_table(20, d_model)
    assert table.shape == (20, d_model)
    for t in (0, 1, 5, 19):
        for i in range(d_model // 2 + d_model % 2):
            angle = t / 10000 ** (2 * i / d_model)
            assert table[t, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            if 2 * i + 1 < d_model:
                assert table[t, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)
