"""nanoGPT's own train.py as the reference of benchmarks/time_to_loss.py: data prep, a run, its curve.

Nothing of nanoGPT is copied here: its checkout (`git clone https://github.com/karpathy/nanoGPT`,
given by --nanogpt DIR or the NANOGPT_DIR environment variable) is copied to a temp dir, its data
files are written in its format (data/<name>/train.bin and val.bin: the char ids as uint16, the
first 90 % of the text and the last 10 %; meta.pkl: vocab_size, itos, stoi over the sorted
distinct chars), and its train.py runs in a subprocess, unchanged, with the options given.

The curve comes from its stdout, read line by line as it is printed (PYTHONUNBUFFERED):
"step N: train loss X, val loss Y" (its estimate_loss, every eval_interval) and "iter N: loss X,
time T ms" (every iteration with --log_interval=1). Training time excludes its evaluations and
checkpoint writes: an iteration's time is the wall time from the line printed before its "iter"
line (the previous iteration's, or the evaluation's, or "saving checkpoint") to its own line, so
only get_batch, forward, backward, clip and the optimizer step are counted.

Two clocks: "wall" (perf_counter at each line) or "cpu" (the on-CPU time of the training process,
all its threads, from /proc/PID/task/*/schedstat, at each line). On a machine shared with other
jobs the wall time measures the scheduler as much as the recipe; the CPU time of a one-thread run
is what its wall time would be on an idle core (cache and memory contention aside).
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

STEP = re.compile(r"^step (\d+): train loss ([\d.]+), val loss ([\d.]+)")
ITER = re.compile(r"^iter (\d+): loss ([\d.]+), time ([\d.]+)ms")
HOW = "nanoGPT not found: git clone https://github.com/karpathy/nanoGPT, then --nanogpt DIR or NANOGPT_DIR=DIR"
# nanoGPT's README "baby GPT" CPU recipe, on top of config/train_shakespeare_char.py
BABY = [
    "--device=cpu",
    "--compile=False",
    "--log_interval=1",
    "--block_size=64",
    "--batch_size=12",
    "--n_layer=4",
    "--n_head=4",
    "--n_embd=128",
    "--max_iters=2000",
    "--lr_decay_iters=2000",
    "--dropout=0.0",
]
# config/train_shakespeare_char.py as it is (batch 64, block 256, 6 layers of 384, dropout 0.2), on the CPU
SMALL = ["--device=cpu", "--compile=False", "--log_interval=1"]


def cpu_seconds(pid: int | str = "self") -> float:
    """The on-CPU seconds of process `pid` so far, summed over its threads (Linux schedstat, in ns)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total / 1e9


def clock(kind: str, pid: int | str = "self"):
    """A function returning seconds: wall (perf_counter) or the process's CPU time."""
    return time.perf_counter if kind == "wall" else (lambda: cpu_seconds(pid))


def find_checkout(given: str | None) -> Path:
    """The nanoGPT checkout: --nanogpt, else $NANOGPT_DIR; exits with one line saying how to get it."""
    path = given or os.environ.get("NANOGPT_DIR")
    if not path or not (Path(path) / "train.py").is_file() or not (Path(path) / "model.py").is_file():
        sys.exit(HOW)
    return Path(path)


def prepare(checkout: Path, text: str, work: Path) -> Path:
    """A copy of the checkout under `work` whose data/shakespeare_char holds `text` in nanoGPT's format."""
    root = work / "nanogpt"
    shutil.copytree(checkout, root, ignore=shutil.ignore_patterns(".git", "out*", "*.bin", "*.pkl", "assets"))
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    if len(chars) > 65535:
        raise SystemExit(f"{len(chars)} distinct chars do not fit nanoGPT's uint16 ids")
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    cut = int(len(ids) * 0.9)
    data = root / "data" / "shakespeare_char"
    data.mkdir(parents=True, exist_ok=True)
    ids[:cut].tofile(data / "train.bin")
    ids[cut:].tofile(data / "val.bin")
    meta = {"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": stoi}
    (data / "meta.pkl").write_bytes(pickle.dumps(meta))
    return root


class Run:
    """One run of nanoGPT's train.py: its curve [(step, training seconds, val loss)] and iteration times."""

    def __init__(self):
        self.curve: list[tuple[int, float, float]] = []
        self.iter_s: list[float] = []  # each iteration's seconds, evaluations excluded
        self.train_s = 0.0
        self.log: list[str] = []

    def feed(self, line: str, now: float, last: float) -> None:
        self.log.append(line)
        if m := ITER.match(line):
            self.iter_s.append(now - last)
            self.train_s += now - last
        elif m := STEP.match(line):
            self.curve.append((int(m[1]), self.train_s, float(m[3])))


def run(root: Path, options: list[str], threads: int, stop=None, clock_kind: str = "wall") -> Run:
    """Run train.py with config/train_shakespeare_char.py and `options`; stop(run) -> True ends it early.
    Times by `clock_kind`: "wall" or "cpu" (the subprocess's CPU time)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "train.py", "config/train_shakespeare_char.py", f"--out_dir={out}", *options]
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        now = clock(clock_kind, proc.pid)
        result, last = Run(), now()
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                t = now()
            except OSError:  # the process has just ended: its last line has no CPU time to add
                t = last
            result.feed(line.rstrip("\n"), t, last)
            last = t
            if stop is not None and stop(result):
                proc.terminate()
                break
        proc.wait()
        if proc.returncode not in (0, -15) and not result.curve:
            raise SystemExit("nanoGPT's train.py failed:\n" + "\n".join(result.log[-20:]))
    return result
