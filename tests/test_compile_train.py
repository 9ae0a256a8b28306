"""qkv train --compile: the steps run through torch.compile and train what eager steps train; the
checkpoint keeps the model's own names (no `_orig_mod.`); a machine that cannot compile gets one line."""

from __future__ import annotations

import pytest
import torch
from cli_util import run_error, run_ok, step_losses

from qkv.apps.cli import main
from qkv.core.model import make_model
from qkv.core.spec.config import ModelConfig
from qkv.core.train.checkpoint import load

SETTINGS = ["steps=3", "eval_interval=3", "eval_steps=1", "d_model=16", "n_ctx=16", "batch_size=4", "n_layers=1"]
ARGV = [a for kv in SETTINGS for a in ("--set", kv)] + ["--device", "cpu", "--precision", "float32", "--quiet"]


class CannotCompile(torch.nn.Module):
    """What torch.compile gives on a machine without a C++ compiler: the backend fails at the first call."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *args, **kwargs):
        missing = RuntimeError("Failed to find a working C++ compiler. Tried: ['g++']")
        raise torch._dynamo.exc.BackendCompilerFailed(lambda *a: None, missing, None)


def test_a_machine_that_cannot_compile_is_one_line(capsys, monkeypatch, text_file, tmp_path):
    monkeypatch.setattr(torch, "compile", CannotCompile)
    argv = ["train", "--text", str(text_file), "--out", str(tmp_path / "run"), *ARGV, "--compile"]
    line = run_error(capsys, argv)
    assert line == (
        "qkv: error: torch.compile cannot compile the model on this machine (RuntimeError: Failed to find a "
        "working C++ compiler. Tried: ['g++']); train without --compile"
    )
    assert main([*argv, "--lang", "zh", "--force"]) != 0
    assert "torch.compile 在这台机器上编译不了模型" in capsys.readouterr().err


def test_translation_refuses_compile(capsys, tmp_path):
    line = run_error(capsys, ["train", "--task", "translate", "--out", str(tmp_path / "mt"), "--compile"])
    assert "--task translate does not compile its model" in line


@pytest.mark.slow
@pytest.mark.parametrize("kw", [{}, {"pos": "rope", "norm": "rms", "bias": False}])
def test_a_gpt_compiles_to_one_graph(kw):
    """The taps (trace and hook points) step aside while Dynamo traces: a break at each would leave
    torch.compile recompiling per name, then running eager."""
    torch.manual_seed(0)
    model = make_model(ModelConfig(n_ctx=16, d_model=16, n_heads=2, n_layers=2, d_vocab=11, **kw)).train()
    found = torch._dynamo.explain(model)(torch.randint(0, 11, (2, 16)))
    assert (found.graph_count, found.graph_break_count) == (1, 0), [str(b.reason)[:200] for b in found.break_reasons]


@pytest.mark.slow
def test_compiled_steps_train_what_eager_steps_train(capsys, text_file, tmp_path):
    """Slow: inductor compiles the forward and the backward (tens of seconds on two cores)."""
    run_ok(capsys, ["train", "--text", str(text_file), "--out", str(tmp_path / "eager"), *ARGV])
    progress = [a for a in ARGV if a != "--quiet"]  # with its progress: the line that says it compiles first
    _, err = run_ok(
        capsys, ["train", "--text", str(text_file), "--out", str(tmp_path / "compiled"), *progress, "--compile"]
    )
    assert "compiling the model with torch.compile" in err
    eager, compiled = step_losses(tmp_path / "eager"), step_losses(tmp_path / "compiled")
    assert max(abs(a - b) for (_, a), (_, b) in zip(eager, compiled)) < 1e-4  # fused kernels add up in other orders
    weights = load(tmp_path / "compiled")[0].state_dict()
    assert not any("_orig_mod" in k for k in weights)
    assert weights.keys() == load(tmp_path / "eager")[0].state_dict().keys()
