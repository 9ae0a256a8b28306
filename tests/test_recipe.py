"""Tests for the `fast` preset (docs/recipe.md): it builds valid configs and a short run of it learns.

How fast it reaches a val loss is measured by benchmarks/time_to_loss.py, not here.
"""

from __future__ import annotations

import math

import pytest
from cli_util import step_losses

from qkv.core.spec.config import PRESETS, ModelConfig, TrainConfig, apply_overrides
from qkv.core.text import corpus
from qkv.core.train import checkpoint
from qkv.core.train.lm import train
from qkv.core.train.loop import lr_at

TEXT = corpus.generate(n_sentences=200, lang="en")


def fast_configs(overrides=()) -> tuple[ModelConfig, TrainConfig]:
    model, train_ = apply_overrides(PRESETS["fast"].model, PRESETS["fast"].train, list(overrides))
    return ModelConfig(d_vocab=65, **model), TrainConfig(**train_)


def test_fast_preset_builds_valid_configs():
    mc, tc = fast_configs()
    assert (mc.pos, mc.bias, mc.tie_embeddings, mc.unembed_bias) == ("rope", False, True, False)
    # the speedrun's changes that measured best together (docs/recipe.md's ablation)
    assert (tc.optimizer, mc.activation, mc.qk_norm, mc.zero_init) == ("muon", "relu2", True, True)
    assert mc.output_logits_soft_cap == 30.0
    assert mc.n_ctx >= 64 and mc.d_head % 2 == 0  # rope rotates pairs
    assert mc.d_mlp < 4 * mc.d_model  # the narrower MLP of the recipe
    assert 0 < tc.warmup_steps < tc.steps and tc.min_lr < tc.lr
    # a sensible schedule: the warmup is a small part of it and the lr ends at min_lr
    assert tc.warmup_steps <= tc.steps // 5
    assert math.isclose(lr_at(tc.steps - 1, tc), tc.min_lr, rel_tol=1e-9)
    assert math.isclose(lr_at(tc.warmup_steps - 1, tc), tc.lr, rel_tol=1e-9)


def test_fast_preset_overrides_like_any_preset():
    mc, tc = fast_configs(["steps=50", "pos=learned"])
    assert tc.steps == 50 and mc.pos == "learned"
    assert PRESETS["fast"].model["pos"] == "rope"  # the preset itself is not changed


@pytest.mark.slow
def test_a_short_fast_run_lowers_the_loss(tmp_path):
    # the preset's model and optimizer settings; fewer, smaller steps so that the test is quick
    out = tmp_path / "run"
    result = train(
        TEXT,
        out=out,
        preset="fast",
        progress=False,
        overrides=["steps=40", "batch_size=8", "warmup_steps=5", "eval_interval=40", "eval_steps=2"],
    )
    vocab = checkpoint.load(out)[1].vocab_size
    losses = [loss for _, loss in step_losses(out)]
    assert abs(losses[0] - math.log(vocab)) < 0.3  # untrained: nearly uniform
    assert sum(losses[-5:]) / 5 < losses[0] - 1.0
    assert result.val_loss is not None and result.val_loss < math.log(vocab) - 1.0
    model, _ = checkpoint.load(out)
    assert model.cfg.pos == "rope" and model.unembed.weight is model.embed.weight  # tied, as saved
