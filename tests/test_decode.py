"""decode_step, generation's fast path, against GPT.forward: the same logits, the same cache."""

from __future__ import annotations

import pytest
import torch

from qkv import GPT, ModelConfig
from qkv.core.nn.decode import decode_step


@pytest.mark.parametrize("pos", ["learned", "sinusoidal", "rope", "none"])
@pytest.mark.parametrize(
    "norm,activation,bias", [("pre", "gelu", True), ("post", "relu", True), ("pre", "gelu_tanh", False)]
)
def test_decode_step_equals_forward(pos, norm, activation, bias):
    torch.manual_seed(0)
    cfg = ModelConfig(
        d_vocab=31,
        n_ctx=20,
        d_model=24,
        n_heads=3,
        n_layers=2,
        pos=pos,
        norm=norm,
        activation=activation,
        bias=bias,
        unembed_bias=bias,
        init_std=0.3,
    )
    model = GPT(cfg).eval()
    ids = torch.randint(0, 31, (1, 20), generator=torch.Generator().manual_seed(1))
    full = model(ids)[0]  # (T, d_vocab)
    fast, slow = model.new_cache(), model.new_cache()
    model(ids[:, :5], fast)
    model(ids[:, :5], slow)
    for t in range(5, 20):
        got = decode_step(model, int(ids[0, t]), fast)
        want = model(ids[:, t : t + 1], slow)[0, -1]
        assert torch.allclose(got, want, atol=1e-5) and torch.allclose(got, full[t], atol=1e-5)
        assert fast.length == slow.length == t + 1
    for layer in range(cfg.n_layers):
        assert torch.allclose(fast.k[layer], slow.k[layer], atol=1e-5), (fast.k[layer] - slow.k[layer]).abs().max()
        assert torch.allclose(fast.v[layer], slow.v[layer], atol=1e-5), (fast.v[layer] - slow.v[layer]).abs().max()


def test_decode_step_refuses_a_full_cache():
    model = GPT(ModelConfig(d_vocab=7, n_ctx=4, d_model=8, n_heads=2, n_layers=1)).eval()
    cache = model.new_cache()
    model(torch.zeros(1, 4, dtype=torch.long), cache)
    with pytest.raises(ValueError, match="full"):
        decode_step(model, 0, cache)
