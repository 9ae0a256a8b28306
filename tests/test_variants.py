"""The experiment switches: values="k" (z = A k), residual=False, norm="none"."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from qkv import GPT, ModelConfig, check, to_hf
from qkv.core.model.nn import block
from qkv.core.model.nn.layernorm import LayerNorm

VARIANTS = [
    dict(values="k"),
    dict(residual=False),
    dict(norm="none"),
    dict(values="k", pos="rope"),
    dict(residual=False, norm="post"),
    dict(norm="none", residual=False),
]
IDS = torch.randint(0, 17, (2, 10), generator=torch.Generator().manual_seed(0))


def model_for(**kw) -> GPT:
    torch.manual_seed(0)
    return GPT(ModelConfig(d_vocab=17, n_ctx=12, d_model=16, n_heads=2, n_layers=2, init_std=0.3, **kw)).eval()


@pytest.mark.parametrize("kw", VARIANTS)
def test_paths_agree_and_invariants_hold(kw):
    model = model_for(**kw)
    fused = model(IDS)
    assert torch.allclose(model(IDS, explicit=True), fused, atol=1e-5)
    cache, step = model.new_cache(), model.stepper()
    model(IDS[:1, :4], cache)
    for t in range(4, 10):
        assert torch.allclose(step(IDS[0, t : t + 1], cache)[0], fused[0, t], atol=1e-5)
    _, trace = model.run_with_trace(IDS)
    report = check(trace)
    assert report.passed, str(report)


def test_values_k_mixes_the_keys():
    model = model_for(values="k")
    standard = model_for()
    d = 16
    assert standard.num_params() - model.num_params() == 2 * (d * d + d)  # W_V and b_V, two layers
    _, trace = model.run_with_trace(IDS)
    assert torch.equal(trace["v", 0], trace["k", 0])  # values="k": v is the tensor k itself
    assert torch.allclose(trace["z", 0], torch.einsum("bhij,bjhd->bihd", trace["pattern", 0], trace["k", 0]), atol=1e-6)
    W = model.blocks[0].attn.head_weights()
    assert torch.equal(W["W_V"], W["W_K"])  # the same rows of W_QKV, read twice
    with pytest.raises(ValueError, match="values=v"):
        to_hf(model)


def test_no_residual_and_no_norm_change_the_function():
    base = model_for()(IDS)
    for kw in (dict(residual=False), dict(norm="none")):
        assert not torch.allclose(model_for(**kw)(IDS), base, atol=1e-3)
    plain = model_for(norm="none")
    assert not any(isinstance(m, (nn.LayerNorm, LayerNorm)) for m in plain.modules())
    assert sum(isinstance(m, LayerNorm) for m in model_for().modules()) == 2 * 2 + 1  # ln1, ln2 per block, ln_final
    _, trace = model_for(residual=False).run_with_trace(IDS)
    assert torch.allclose(trace["resid_mid", 0], trace["attn_out", 0], atol=1e-6)  # nothing added to


@pytest.mark.parametrize(
    "kw,cls",
    [
        (dict(), block.PreNormBlock),
        (dict(norm="none"), block.PreNormBlock),
        (dict(norm="post"), block.PostNormBlock),
        (dict(residual=False), block.PreNormBlockNoResidual),
        (dict(residual=False, norm="post"), block.PostNormBlockNoResidual),
    ],
)
def test_each_switch_has_its_own_block(kw, cls):
    assert all(type(b) is cls for b in model_for(**kw).blocks)


def test_bad_values_kind():
    with pytest.raises(ValueError, match="values"):
        ModelConfig(values="q")
    with pytest.raises(ValueError, match="norm"):
        ModelConfig(norm="batch")
