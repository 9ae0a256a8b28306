"""The decoding fast path: each module's stepper against its own forward, and GPT.stepper against GPT.forward.

Every module with a one-token step (LayerNorm, MLP, attention, RoPE's per-row positions, each block class) is
checked on its own, then the whole model: the same logits and the same cache as forward, for every
positional kind, both norms, the experiment switches, and rows at their own positions."""

from __future__ import annotations

import pytest
import torch

from qkv import GPT, ModelConfig
from qkv.core.model.nn.block import MLP, make_block
from qkv.core.model.nn.layernorm import LayerNorm, NoNorm
from qkv.core.model.nn.position import RoPE

POSITIONS = ["learned", "sinusoidal", "rope", "none"]


def _cfg(**kw) -> ModelConfig:
    return ModelConfig(**{**dict(d_vocab=31, n_ctx=20, d_model=24, n_heads=3, n_layers=2, init_std=0.3), **kw})


def test_layernorm_and_mlp_steps_are_their_forwards():
    torch.manual_seed(0)
    x = torch.randn(5, 24)
    ln = LayerNorm(24, 1e-5)
    with torch.no_grad():
        ln.weight.normal_()
        ln.bias.normal_()
    assert torch.allclose(ln.stepper()(x), ln(x), atol=1e-6)
    assert torch.allclose(ln.stepper()(x), torch.nn.functional.layer_norm(x, (24,), ln.weight, ln.bias), atol=1e-6)
    assert torch.equal(NoNorm().stepper()(x), x)
    for activation in ("gelu", "gelu_tanh", "relu"):
        mlp = MLP(_cfg(activation=activation, dropout_resid=0.5)).eval()
        assert torch.allclose(mlp.stepper()(x), mlp(x[:, None])[:, 0], atol=1e-6)


def test_rope_with_a_position_per_row_rotates_each_row_as_the_range_does():
    torch.manual_seed(0)
    rope = RoPE(16, 8)
    x = torch.randn(4, 2, 1, 8)  # (B, n_heads, 1, d_head): one token per row
    positions = torch.tensor([0, 5, 15, 5])
    got = rope(x, positions)
    for b, t in enumerate(positions.tolist()):
        assert torch.allclose(got[b], rope(x[b : b + 1], t)[0], atol=1e-6)
    assert not torch.allclose(got[1], got[0])  # the positions did something


@pytest.mark.parametrize("pos", POSITIONS)
@pytest.mark.parametrize(
    "kw", [dict(norm="pre"), dict(norm="post"), dict(norm="none"), dict(residual=False), dict(values="k")]
)
def test_each_blocks_step_is_its_forward_for_one_new_token(pos, kw):
    """A block's step (and its attention's) writes the same keys and values and returns the same x."""
    torch.manual_seed(0)
    cfg = _cfg(pos=pos, **kw)
    block = make_block(cfg).eval()
    x = torch.randn(2, 9, 24)
    fast, slow, step = _cache(cfg, 2), _cache(cfg, 2), block.stepper()
    with torch.no_grad():
        block(x[:, :6], fast)
        block(x[:, :6], slow)
        fast.length = slow.length = 6
        for t in range(6, 9):
            got = step(x[:, t], fast)
            want = block(x[:, t : t + 1], slow)[:, 0]
            assert torch.allclose(got, want, atol=1e-5), (got - want).abs().max()
            fast.length = slow.length = t + 1
    assert torch.allclose(fast.k[0], slow.k[0], atol=1e-6) and torch.allclose(fast.v[0], slow.v[0], atol=1e-6)


def _cache(cfg, batch):
    from qkv.core.model.nn.attention import KVCache

    return KVCache(cfg, batch)


@pytest.mark.parametrize("pos", POSITIONS)
@pytest.mark.parametrize(
    "norm,activation,bias", [("pre", "gelu", True), ("post", "relu", True), ("pre", "gelu_tanh", False)]
)
def test_gpt_step_equals_forward(pos, norm, activation, bias):
    torch.manual_seed(0)
    cfg = _cfg(pos=pos, norm=norm, activation=activation, bias=bias, unembed_bias=bias)
    model = GPT(cfg).eval()
    ids = torch.randint(0, 31, (1, 20), generator=torch.Generator().manual_seed(1))
    full = model(ids)[0]  # (T, d_vocab)
    fast, slow, step = model.new_cache(), model.new_cache(), model.stepper()
    model(ids[:, :5], fast)
    model(ids[:, :5], slow)
    for t in range(5, 20):
        got = step(ids[0, t : t + 1], fast)[0]
        want = model(ids[:, t : t + 1], slow)[0, -1]
        assert torch.allclose(got, want, atol=1e-5) and torch.allclose(got, full[t], atol=1e-5)
        assert fast.length == slow.length == t + 1
    for layer in range(cfg.n_layers):
        assert torch.allclose(fast.k[layer], slow.k[layer], atol=1e-5), (fast.k[layer] - slow.k[layer]).abs().max()
        assert torch.allclose(fast.v[layer], slow.v[layer], atol=1e-5), (fast.v[layer] - slow.v[layer]).abs().max()


@pytest.mark.parametrize("pos", POSITIONS)
def test_gpt_step_with_rows_at_their_own_positions_is_each_row_alone(pos):
    """Two rows in one cache, the shorter right-aligned (padded on the left): its step reads only its
    own slots and its positions count from its own first token, as if it ran alone."""
    torch.manual_seed(0)
    model = GPT(_cfg(pos=pos)).eval()
    a, b = [3, 1, 4, 1, 5, 9], [2, 6, 5]
    cache = model.new_cache(2)
    pad = torch.tensor([0, len(a) - len(b)])  # row 1 leaves 3 slots empty on the left
    for row, prompt in enumerate((a, b)):
        alone = model.new_cache()
        model(torch.tensor([prompt]), alone)
        for layer in range(model.cfg.n_layers):
            cache.k[layer][row, :, pad[row] : len(a)] = alone.k[layer][0, :, : len(prompt)]
            cache.v[layer][row, :, pad[row] : len(a)] = alone.v[layer][0, :, : len(prompt)]
    cache.length = t = len(a)
    key_mask = torch.arange(t + 1) >= pad[:, None]  # (B, t + 1)
    got = model.stepper()(torch.tensor([7, 8]), cache, positions=t - pad, key_mask=key_mask)
    want_a = model(torch.tensor([a + [7]]))[0, -1]
    want_b = model(torch.tensor([b + [8]]))[0, -1]
    assert torch.allclose(got[0], want_a, atol=1e-5) and torch.allclose(got[1], want_b, atol=1e-5)


def test_step_refuses_a_full_cache():
    model = GPT(ModelConfig(d_vocab=7, n_ctx=4, d_model=8, n_heads=2, n_layers=1)).eval()
    cache = model.new_cache()
    model(torch.zeros(1, 4, dtype=torch.long), cache)
    with pytest.raises(ValueError, match="full"):
        model.stepper()(torch.tensor([0]), cache)


def test_a_steps_transposed_weights_are_kept_until_the_weight_changes():
    from qkv.core.model.nn.linear import linear_step, transposed

    torch.manual_seed(0)
    linear = torch.nn.Linear(6, 4)
    x = torch.randn(3, 6)
    first = transposed(linear)
    assert transposed(linear) is first  # nothing changed: the copy is reused
    assert torch.allclose(linear_step(linear)(x), linear(x), atol=1e-6)
    with torch.no_grad():
        linear.weight.mul_(2)  # in place: the version moves on
    assert transposed(linear) is not first and torch.allclose(linear_step(linear)(x), linear(x), atol=1e-6)
    linear.load_state_dict(torch.nn.Linear(6, 4).state_dict())
    assert torch.allclose(linear_step(linear)(x), linear(x), atol=1e-6)
    linear.double()  # new storage
    assert torch.allclose(linear_step(linear)(x.double()), linear(x.double()), atol=1e-12)
    assert "_transposed" not in linear.state_dict()


def test_what_has_no_one_token_step_says_so():
    from qkv.core.model.nn.attention import MultiHeadAttention

    with pytest.raises(ValueError, match="one token per row"):
        RoPE(8, 4)(torch.zeros(2, 1, 3, 4), torch.tensor([0, 1]))  # a position per row, but 3 tokens
    cfg = _cfg()
    with pytest.raises(ValueError, match="only a causal self-attention"):
        MultiHeadAttention(cfg, cross=True).stepper()
    with pytest.raises(ValueError, match="only a causal self-attention"):
        MultiHeadAttention(cfg, causal=False).stepper()
    with pytest.raises(ValueError, match="causal mask"):
        GPT(_cfg(causal=False)).stepper()
