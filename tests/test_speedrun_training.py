"""Each speedrun switch trains with a GPT preset through `--set` (train's overrides), and all of them together:
the loss falls, the switch is in the saved model, and the saved model generates."""

from __future__ import annotations

import math

import pytest
import torch
from cli_util import step_losses

from qkv.core.text import corpus
from qkv.core.train import checkpoint
from qkv.core.train.lm import train

TEXT = corpus.generate(n_sentences=200, lang="en")
SHORT = ["n_layers=2", "d_model=32", "n_ctx=16", "steps=40", "batch_size=4", "eval_interval=40", "eval_steps=2"]
SWITCHES = {
    "qk_norm": ["qk_norm=true"],
    "soft_cap": ["output_logits_soft_cap=2"],
    "untied": ["tie_embeddings=false"],
    "relu2": ["activation=relu2"],
    "zero_init": ["zero_init=true"],
    "value_embeds": ["value_embeds=1"],
    "muon": ["optimizer=muon"],
}
ALL = [s for v in SWITCHES.values() for s in v if not s.startswith("output_logits")] + ["output_logits_soft_cap=15"]


def _trained(tmp_path, sets, preset="fast"):
    out = tmp_path / "run"
    train(TEXT, out=out, preset=preset, overrides=[*SHORT, "lr=1e-2", "warmup_steps=4", *sets], progress=False)
    losses = [loss for _, loss in step_losses(out)]
    assert all(math.isfinite(x) for x in losses) and min(losses[-5:]) < losses[0] - 0.5
    return checkpoint.load(out)[0].eval()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SWITCHES))
def test_each_switch_trains(tmp_path, name):
    model = _trained(tmp_path, SWITCHES[name], preset="baby")
    cfg, attn = model.cfg, model.blocks[0].attn
    ids = torch.randint(0, cfg.d_vocab, (2, 16))
    if name == "qk_norm":  # the norm is there and applied: each head's q has RMS 1 before its learned scale
        from qkv.core.see.trace import run_with_trace

        _, trace = run_with_trace(model, ids)
        assert attn.q_norm is not None and "blocks.0.attn.hook_q_normed" in trace.activations
        unscaled = trace["blocks.0.attn.hook_q_normed"] / attn.q_norm.weight  # (B, T, n_heads, d_head)
        torch.testing.assert_close(unscaled.pow(2).mean(-1), torch.ones(2, 16, cfg.n_heads), atol=1e-2, rtol=0)
    if name == "soft_cap":  # every logit within (-cap, cap)
        with torch.no_grad():
            assert model(ids).abs().max() < 2
    if name == "untied":
        assert model.unembed.weight is not model.embed.weight
    if name == "value_embeds":
        assert attn.value_embed is not None and float(attn.value_embed.mix.detach()) != 0.5  # λ learned


@pytest.mark.slow
def test_all_switches_together_train_and_generate(tmp_path):
    """The speedrun's switches at once on `fast`'s shape (RoPE, no biases): trains, saves, loads, generates."""
    model = _trained(tmp_path, ALL)
    cfg = model.cfg
    assert (cfg.activation, cfg.qk_norm, cfg.zero_init, cfg.value_embeds) == ("relu2", True, True, 1)
    assert cfg.output_logits_soft_cap == 15 and not cfg.tie_embeddings and cfg.pos == "rope"
    from qkv.core.decode.sample import generate_ids

    cached = list(generate_ids(model, [1, 2, 3], max_new_tokens=5, temperature=0))
    assert len(cached) == 5  # the stepper (KV cache, value embeddings read from each new token) ...
    assert cached == list(generate_ids(model, [1, 2, 3], max_new_tokens=5, temperature=0, use_cache=False))
