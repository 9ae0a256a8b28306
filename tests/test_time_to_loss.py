"""Tests for benchmarks/time_to_loss.py's pieces: nanoGPT's data format, its stdout read into a curve
with evaluations left out of the training time, the interpolated time to a loss.

nanoGPT itself is not needed: a stand-in train.py prints lines in its format."""

from __future__ import annotations

import importlib
import pickle
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
nanogpt_ref = importlib.import_module("nanogpt_ref")
time_to_loss = importlib.import_module("time_to_loss")


def test_reach_interpolates_between_the_evaluations_around_the_target():
    curve = [(0, 0.0, 4.0), (50, 10.0, 2.0), (100, 20.0, 1.8)]
    step, wall, hit = time_to_loss.reach(curve, 1.9)
    assert hit and step == pytest.approx(75) and wall == pytest.approx(15.0)
    step, wall, hit = time_to_loss.reach(curve, 1.5)
    assert not hit and (step, wall) == (100, 20.0)  # never reached: the whole run, a lower bound


def test_prepare_writes_nanogpts_format(tmp_path):
    checkout = tmp_path / "nanoGPT"
    checkout.mkdir()
    (checkout / "train.py").write_text("")
    (checkout / "model.py").write_text("")
    text = "hello world, " * 10  # 130 chars
    root = nanogpt_ref.prepare(checkout, text, tmp_path / "work")
    data = root / "data" / "shakespeare_char"
    meta = pickle.loads((data / "meta.pkl").read_bytes())
    train = np.fromfile(data / "train.bin", dtype=np.uint16)
    val = np.fromfile(data / "val.bin", dtype=np.uint16)
    assert meta["vocab_size"] == len(set(text)) and meta["itos"][0] == min(text)
    assert (len(train), len(val)) == (117, 13)  # the first 90 %, the last 10 %
    assert "".join(meta["itos"][int(i)] for i in np.concatenate([train, val])) == text


@pytest.mark.slow
@pytest.mark.subprocess  # nanogpt_ref.run starts train.py
def test_run_reads_the_curve_and_leaves_evaluations_out(tmp_path):
    root = tmp_path / "fake"
    (root / "config").mkdir(parents=True)
    (root / "config" / "train_shakespeare_char.py").write_text("")
    (root / "train.py").write_text(
        textwrap.dedent(
            """
            import time
            for i in range(4):
                if i % 2 == 0:
                    time.sleep(1.0)  # an evaluation: not training time
                    print(f"step {i}: train loss 3.0, val loss {3.0 - i / 2:.4f}")
                time.sleep(0.05)
                print(f"iter {i}: loss 3.0, time 50.00ms, mfu -100.00%")
            """
        )
    )
    run = nanogpt_ref.run(root, [], threads=1)
    assert [(s, v) for s, _, v in run.curve] == [(0, 3.0), (2, 2.0)]
    # 4 iterations of at least 0.05 s each (sleep never returns early); an interval that held an evaluation
    # would last at least 1.0 s, so every one below that shows the evaluations were left out
    assert len(run.iter_s) == 4 and run.train_s == pytest.approx(sum(run.iter_s)) and run.train_s >= 0.2
    assert max(run.iter_s) < 1.0
    assert run.curve[1][1] == pytest.approx(sum(run.iter_s[:2]))
    stopped = nanogpt_ref.run(root, [], threads=1, stop=lambda r: bool(r.curve) and r.curve[-1][2] <= 2.5)
    assert [s for s, _, _ in stopped.curve] == [0, 2]


def test_a_missing_checkout_says_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.delenv("NANOGPT_DIR", raising=False)
    with pytest.raises(SystemExit) as e:
        nanogpt_ref.find_checkout(str(tmp_path))
    assert "git clone https://github.com/karpathy/nanoGPT" in str(e.value)


def test_the_cpu_clock_counts_this_process_work():
    t0 = nanogpt_ref.cpu_seconds()
    total = sum(i * i for i in range(300_000))  # some work on this thread
    assert total > 0 and nanogpt_ref.cpu_seconds() > t0
