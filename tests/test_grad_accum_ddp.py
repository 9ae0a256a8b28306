"""--set grad_accum=N on two processes (gloo on CPU): each rank cuts its rows of the global batch into
N micro-batches and DDP averages the gradients once, in the last one's backward; the run trains what one
process trains without accumulation, and a batch that does not split into processes x micro-batches is
refused in one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cli_util import step_losses

from qkv.core.train.checkpoint import load

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

SETTINGS = ["--set", "steps=6", "--set", "batch_size=8", "--set", "eval_interval=6", "--set", "eval_steps=2"]
SETTINGS += ["--set", "dropout=0", "--set", "d_model=32", "--set", "n_ctx=32", "--quiet", "--device", "cpu"]
SETTINGS += ["--precision", "float32"]


def qkv(*argv, check=True) -> subprocess.CompletedProcess:
    run = subprocess.run(
        [sys.executable, "-m", "qkv", *argv], capture_output=True, text=True, timeout=300, env=os.environ
    )
    assert run.returncode == 0 or not check, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    return run


def test_two_processes_accumulating_train_what_one_trains_at_once(text_file, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    qkv("train", "--text", str(text_file), "--out", str(one), *SETTINGS)
    qkv("train", "--nproc", "2", "--text", str(text_file), "--out", str(two), *SETTINGS, "--set", "grad_accum=2")
    la, lb = step_losses(one), step_losses(two)
    assert [s for s, _ in la] == [s for s, _ in lb] == list(range(1, 7))
    assert max(abs(x - y) for (_, x), (_, y) in zip(la, lb)) <= 1e-5
    wa, wb = load(one)[0].state_dict(), load(two)[0].state_dict()
    assert max((wa[k] - wb[k]).abs().max().item() for k in wa) <= 1e-5


def test_rows_that_do_not_split_into_micro_batches_are_refused_in_one_line(text_file, tmp_path):
    out = tmp_path / "odd"
    argv = ["train", "--nproc", "2", "--text", str(text_file), "--out", str(out), *SETTINGS, "--set", "grad_accum=8"]
    run = qkv(*argv, check=False)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        "qkv: error: batch_size=8 does not split into 2 process(es) x grad_accum=8 micro-batches "
        "(choose a batch_size that is a multiple of 16)"
    ]
    assert not out.exists()
