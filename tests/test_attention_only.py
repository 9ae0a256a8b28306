"""Attention-only models (ModelConfig(mlp="none")): x = x + Attn(LN1(x)) per block, the induction-heads toy."""

from __future__ import annotations

import pytest
import torch

from qkv.apps.web.view import view
from qkv.core.hub.adapters.gpt2 import to_hf
from qkv.core.hub.size import param_count
from qkv.core.model import make_model
from qkv.core.see.invariants import check
from qkv.core.see.trace import trace_names
from qkv.core.spec.config import ModelConfig
from qkv.core.train.checkpoint import load
from qkv.core.train.lm import train

TEXT = "the cat sat on the mat. the dog sat on the log. " * 40


def build(**kw):
    torch.manual_seed(0)
    return make_model(ModelConfig(d_vocab=31, n_ctx=16, d_model=24, n_heads=3, n_layers=2, mlp="none", **kw)).eval()


@pytest.mark.parametrize("norm", ["pre", "rms", "none"])
def test_a_block_is_attention_and_the_residual_alone(norm):
    model = build(norm=norm)
    assert param_count(model.cfg) == sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, 31, (2, 9), generator=torch.Generator().manual_seed(1))
    logits, tr = model.run_with_trace(ids)
    assert list(tr) == trace_names(model.cfg)
    assert not any(".mlp." in n or "ln2" in n or "mlp_out" in n for n in tr)
    x = model.embed(ids) + model.pos_embed(0, 9)
    with torch.no_grad():
        for block in model.blocks:  # by hand, from the modules: x + Attn(LN1(x))
            x = x + block.attn(block.ln1(x))
        torch.testing.assert_close(logits, model.unembed(model.ln_final(x)), rtol=1e-5, atol=1e-5)
    for L in range(2):
        assert torch.equal(tr["resid_mid", L], tr["resid_post", L])
    assert check(tr).passed
    step = model.stepper()
    cache = model.new_cache()
    with torch.no_grad():
        model(ids[:1, :8], cache)
        torch.testing.assert_close(step(int(ids[0, 8]), cache)[0], logits[0, 8], rtol=1e-5, atol=1e-5)


def test_other_blocks_are_refused_and_gpt2_export_says_why():
    for bad in (dict(norm="post"), dict(residual=False)):
        with pytest.raises(ValueError, match="attention only"):
            ModelConfig(mlp="none", **bad)
    with pytest.raises(ValueError, match="mlp='none' is for a GPT"):
        ModelConfig(arch="bert", causal=False, norm="post", mlp="none")
    with pytest.raises(ValueError, match="plain MLP"):
        to_hf(build())


def test_it_trains_saves_loads_and_is_viewed(tmp_path):
    out = tmp_path / "run"
    overrides = ["mlp=none", "n_layers=2", "d_model=32", "n_heads=2", "n_ctx=32", "steps=30", "eval_interval=30"]
    result = train(TEXT, out=out, overrides=overrides, progress=False)
    model, tok = load(out)
    assert model.cfg.mlp == "none" and model.blocks[0].mlp is None and model.blocks[0].ln2 is None
    assert result.step == 30 and result.val_loss < 2.5  # from ln(vocab) ~ 2.9 at the start: it learned
    doc = view(model, tok, "the cat sat")
    assert doc["kind"] == "view" and "mlp_out_norm" in doc["arrays"]
