"""The decoding step with grouped-query attention (SmolLM2: 9 heads reading 3 key/value heads) gives
the forward's logits, with or without padding (generate_batch's key mask), in float32 and bfloat16: the
guard for any change to the step (one tried here, each group's queries as rows of their key head, was
faster in bfloat16 but no longer bit-equal to transformers' greedy tokens there, and was left out)."""

from __future__ import annotations

import pytest
import torch

from qkv.core.decode.sample import generate_batch, generate_ids
from qkv.core.model import make_model
from qkv.core.spec.config import ModelConfig

LLM = dict(pos="rope", norm="rms", mlp="gated", activation="silu", rope_layout="halves", bias=False)


def build(n_heads: int, n_kv_heads: int, pos: str = "rope", dtype=torch.float32):
    torch.manual_seed(n_heads * 10 + n_kv_heads)
    cfg = ModelConfig(
        **{**LLM, "pos": pos},
        d_vocab=41,
        n_ctx=32,
        d_model=n_heads * 8,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        n_layers=2,
    )
    model = make_model(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.3)  # peaked patterns, so that a mixed-up head shows
    return model.to(dtype)


@pytest.mark.parametrize("heads", [(9, 3), (4, 1), (4, 4), (6, 2)])
@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-4), (torch.bfloat16, 3e-2)])
def test_the_step_gives_the_forwards_logits(heads, dtype, tol):
    model = build(*heads, dtype=dtype)
    ids = torch.randint(0, 41, (2, 12), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        want = model(ids).float()  # (2, 12, d_vocab)
        cache = model.new_cache(batch_size=2, capacity=12)
        got = [model(ids[:, :5], cache)[:, -1]]
        step = model.stepper()
        got += [step(ids[:, t], cache) for t in range(5, 12)]
    torch.testing.assert_close(torch.stack(got, 1).float(), want[:, 4:], atol=tol, rtol=tol)


@pytest.mark.parametrize("pos", ["rope", "learned"])
def test_padded_rows_decode_as_each_alone(pos):
    model = build(9, 3, pos=pos)
    prompts = [[1, 2, 3], [4, 5, 6, 7, 8, 9, 10], [11]]
    batch = generate_batch(model, prompts, 8, temperature=0, stop_ids=())
    assert batch == [list(generate_ids(model, p, 8, temperature=0, stop_ids=(), use_cache=False)) for p in prompts]


@pytest.mark.parametrize("faster", [True, False])
def test_one_bfloat16_row_is_multiplied_without_onednn_and_the_switch_comes_back(faster, monkeypatch):
    """linear_step in bfloat16 on the CPU: where one row is faster without oneDNN (the CPU kind it was
    measured on, whatever this machine is), one row by PyTorch's own kernel (oneDNN off around the call,
    on again after, also after an error), several rows as F.linear does; elsewhere oneDNN for both. All
    within bfloat16's rounding."""
    import torch.nn.functional as F

    from qkv.core.model.nn import linear
    from qkv.core.model.nn.linear import linear_step

    monkeypatch.setattr(linear, "one_row_is_faster", lambda: faster)

    g = torch.Generator().manual_seed(0)
    lin = torch.nn.Linear(96, 200).to(torch.bfloat16)
    step = linear_step(lin)
    seen = []
    real = F.linear
    try:
        F.linear = lambda *a: (seen.append(torch._C._get_mkldnn_enabled()), real(*a))[1]
        for rows in (1, 5):
            x = torch.randn(rows, 96, generator=g).to(torch.bfloat16)
            want = (x.double() @ lin.weight.double().T + lin.bias.double()).float()
            torch.testing.assert_close(step(x).float(), want, atol=0.05, rtol=0.01)
    finally:
        F.linear = real
    assert seen == ([False, True] if faster else [True, True]) and torch._C._get_mkldnn_enabled()
    with pytest.raises(RuntimeError):
        step(torch.ones(1, 7, dtype=torch.bfloat16))  # the wrong width: the product fails
    assert torch._C._get_mkldnn_enabled()
