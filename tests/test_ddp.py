"""Data-parallel training on several processes (gloo on CPU): the same losses and weights as one
process with the same global batch, an exact resume under another number of processes, torchrun's
multi-machine rendezvous on 127.0.0.1, and a one-line error, never a hang, when a peer is lost.

Each test starts real processes (`qkv train --nproc N`, torchrun), as a user would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
from cli_util import eval_lines, step_losses

from qkv.core.machine.processes import World, free_port
from qkv.core.train.checkpoint import load

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

# 24 steps of 8 windows of a tiny model; no dropout, so one process and two compute the same function
SETTINGS = [
    "--set",
    "steps=24",
    "--set",
    "batch_size=8",
    "--set",
    "eval_interval=12",
    "--set",
    "eval_steps=3",
    "--set",
    "dropout=0",
    "--set",
    "d_model=32",
    "--set",
    "n_ctx=32",
    "--quiet",
    "--device",
    "cpu",
    "--precision",
    "float32",  # exact: auto is bf16 autocast on a CPU with AMX or AVX-512 BF16
]
TOL = 1e-5
WAIT_S = 300  # a guard against a hang, not a speed limit


def qkv(*argv, env=None, check=True) -> subprocess.CompletedProcess:
    run = subprocess.run(
        [sys.executable, "-m", "qkv", *argv],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        env={**os.environ, **(env or {})},
    )
    if check:
        assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    return run


def same_run(a, b) -> None:
    """Step by step the same training losses and evaluations, and the same final weights, to TOL."""
    la, lb = step_losses(a), step_losses(b)
    assert [s for s, _ in la] == [s for s, _ in lb] == list(range(1, 25))
    assert max(abs(x - y) for (_, x), (_, y) in zip(la, lb)) <= TOL
    ea, eb = eval_lines(a), eval_lines(b)
    assert [e["step"] for e in ea] == [e["step"] for e in eb] == [12, 24]
    assert all(abs(x[k] - y[k]) <= TOL for x, y in zip(ea, eb) for k in ("train_loss", "val_loss"))
    wa, wb = load(a)[0].state_dict(), load(b)[0].state_dict()
    assert wa.keys() == wb.keys()
    assert max((wa[k] - wb[k]).abs().max().item() for k in wa) <= TOL


@pytest.fixture(scope="module")
def one(tmp_path_factory, text_file):
    out = tmp_path_factory.mktemp("ddp") / "one"
    qkv("train", "--text", str(text_file), "--out", str(out), *SETTINGS)
    return out


def test_two_processes_train_what_one_trains(one, text_file, tmp_path):
    out = tmp_path / "two"
    run = qkv("train", "--nproc", "2", "--text", str(text_file), "--out", str(out), *SETTINGS)
    same_run(one, out)
    assert run.stdout.count("trained to step 24") == 1  # rank 0 speaks for both
    # the weights did move: the comparison above would pass for two runs that learned nothing
    assert step_losses(out)[-1][1] < step_losses(out)[0][1] - 0.1


@pytest.mark.parametrize("first, then", [(2, 1), (1, 2)])
def test_a_resume_under_another_number_of_processes_continues_the_same_batches(one, text_file, tmp_path, first, then):
    out = tmp_path / "run"
    qkv("train", "--nproc", str(first), "--text", str(text_file), "--out", str(out), *SETTINGS, "--until", "12")
    assert load(out)[0] is not None
    qkv("train", "--nproc", str(then), "--resume", "--out", str(out), "--quiet", "--precision", "float32")
    same_run(one, out)


def test_a_global_batch_that_does_not_divide_is_refused_in_one_line(text_file, tmp_path):
    out = tmp_path / "odd"
    run = qkv(
        "train",
        "--nproc",
        "2",
        "--text",
        str(text_file),
        "--out",
        str(out),
        *SETTINGS,
        "--set",
        "batch_size=7",
        check=False,
    )
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        "qkv: error: batch_size=7 does not divide among 2 processes; "
        "the global batch is split evenly (choose a multiple of 2)"
    ]
    assert not out.exists()


def test_two_machines_meet_through_torchrun_rendezvous(one, text_file, tmp_path):
    """Two "nodes" of one process each, as on two machines, meeting at a c10d rendezvous on 127.0.0.1."""
    out, port = tmp_path / "nodes", free_port()
    nodes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--nnodes",
                "2",
                "--nproc-per-node",
                "1",
                "--rdzv-backend",
                "c10d",
                "--rdzv-endpoint",
                f"127.0.0.1:{port}",
                "--rdzv-id",
                "qkv-test",
                "-m",
                "qkv",
                "train",
                "--text",
                str(text_file),
                "--out",
                str(out),
                *SETTINGS,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        results = [node.communicate(timeout=WAIT_S) for node in nodes]
    finally:
        for node in nodes:
            node.kill()
    assert [node.returncode for node in nodes] == [0, 0], results
    assert sum(stdout.count("trained to step 24") for stdout, _ in results) == 1
    same_run(one, out)


PEER = textwrap.dedent("""
    import os, sys, torch
    from qkv.core.machine import processes as distributed
    world = distributed.join()
    if world.rank == 1:
        os._exit(0)  # a peer that dies without a word
    try:
        for _ in range(100):
            world.mean(torch.tensor(1.0))
    except distributed.PeerLost as e:
        print(e, file=sys.stderr)
        distributed.leave()  # as prepare.run_task does on its way out: left to interpreter shutdown,
        sys.exit(3)  # gloo's broken group aborts the process now and then (exit -6, a second line)
""")


def test_a_lost_peer_stops_the_others_with_one_line_not_a_hang():
    port = free_port()
    env = {
        **os.environ,
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "WORLD_SIZE": "2",
        "QKV_DDP_TIMEOUT": "30",
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PEER],
            env={**env, "RANK": str(r), "LOCAL_RANK": str(r)},
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in range(2)
    ]
    try:
        errors = [p.communicate(timeout=WAIT_S)[1] for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert procs[1].returncode == 0
    assert procs[0].returncode == 3, errors[0]
    lines = errors[0].strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("another training process stopped or stopped answering"), errors[0]


def test_each_rank_takes_its_own_rows_of_the_global_batch():
    batch = torch.arange(12).view(6, 2)
    rows = [World(r, 3).shard(batch) for r in range(3)]
    assert torch.equal(torch.cat(rows), batch)
    assert [r.shape for r in rows] == [torch.Size([2, 2])] * 3
    assert World().shard(batch) is batch
    with pytest.raises(ValueError, match="does not divide among 3 processes"):
        World(0, 3).check_batch(8)


class _Seen(Exception):
    pass


class _Spy(torch.nn.Module):
    """A model that records the batch it is given, then stops the step."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x):
        self.seen = x
        raise _Seen


def test_a_training_step_feeds_each_rank_only_its_rows():
    from qkv.core.spec.config import TrainConfig
    from qkv.core.text.batches import get_batch
    from qkv.core.train.lm import LMData
    from qkv.core.train.loop import step_seed

    ids, tc = torch.arange(500), TrainConfig(batch_size=6, seed=5)
    whole = get_batch(ids, 6, 16, torch.Generator().manual_seed(step_seed(5, 3)))[0]  # (6, 16)
    seen = []
    for rank in range(2):
        spy = _Spy()
        with pytest.raises(_Seen):
            LMData(ids, None, tc, 16, World(rank, 2)).step(spy, None, 3)
        seen.append(spy.seen)
    assert [s.shape for s in seen] == [torch.Size([3, 16])] * 2
    assert torch.equal(torch.cat(seen), whole)


def _start_long_run(text_file, out, **popen):
    """`qkv train --nproc 2` on a run long enough to be stopped midway; returns once it is training."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "qkv",
            "train",
            "--nproc",
            "2",
            "--text",
            str(text_file),
            "--out",
            str(out),
            *SETTINGS,
            "--set",
            "steps=100000",
            "--set",
            "eval_interval=100000",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )
    log, deadline = out / "log.jsonl", time.monotonic() + WAIT_S
    while not (log.exists() and log.read_text().count("\n") >= 5):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    return proc


def _ranks(launcher: int) -> list[int]:
    """The training processes `qkv train --nproc` started (its children, from /proc)."""
    children = Path(f"/proc/{launcher}/task/{launcher}/children")
    return [int(pid) for pid in children.read_text().split()] if children.exists() else []


def _gone(pids: list[int]) -> bool:
    return not any(Path(f"/proc/{pid}").exists() for pid in pids)


def test_ctrl_c_stops_every_process_and_rank_0_keeps_what_was_trained(text_file, tmp_path):
    out = tmp_path / "stopped"
    proc = _start_long_run(
        text_file, out, start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    )
    ranks = _ranks(proc.pid)
    assert len(ranks) == 2
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: every process of the group
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130
    assert err.strip() == "interrupted"
    steps = [line["step"] for line in map(json.loads, (out / "log.jsonl").read_text().splitlines())]
    assert load(out)[0] is not None and json.loads((out / "state.json").read_text())["step"] == steps[-1] >= 5
    assert _gone(ranks)


@pytest.mark.parametrize("rank", [0, 1])
def test_a_stop_signal_that_reaches_one_rank_stops_every_rank_at_the_same_step(text_file, tmp_path, rank):
    """The signal reaches each process at its own moment; a rank that stopped a step before the
    other would leave it waiting on a peer that is gone. The extreme case: only one rank hears it."""
    out = tmp_path / f"one-heard-{rank}"
    proc = _start_long_run(text_file, out)
    ranks = _ranks(proc.pid)
    assert len(ranks) == 2
    os.kill(ranks[rank], signal.SIGTERM)
    _, err = proc.communicate(timeout=WAIT_S)
    assert "another training process" not in err, err
    assert proc.returncode == 130 and err.strip() == "interrupted", err
    steps = [line["step"] for line in map(json.loads, (out / "log.jsonl").read_text().splitlines())]
    assert json.loads((out / "state.json").read_text())["step"] == steps[-1] >= 5
    assert _gone(ranks)


def test_a_killed_process_stops_the_run_with_one_line(text_file, tmp_path):
    out = tmp_path / "killed"
    proc = _start_long_run(text_file, out)
    ranks = _ranks(proc.pid)
    assert len(ranks) == 2
    os.kill(ranks[-1], signal.SIGKILL)  # one of the two, without a word
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "another training process stopped or stopped answering" in lines[0], err
    assert _gone(ranks)


def test_a_refusal_of_rank_0_is_one_line_and_an_abbreviated_nproc_works(one, text_file):
    before = (one / "state.json").read_text()
    run = qkv("train", "--npro", "2", "--text", str(text_file), "--out", str(one), *SETTINGS, check=False)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        f"qkv: error: {one} already holds a checkpoint; use --resume to continue it or --force to replace it"
    ]
    assert (one / "state.json").read_text() == before


def test_a_translation_model_is_refused_on_several_processes_before_anything_is_written(tmp_path):
    out = tmp_path / "mt"
    run = qkv(
        "train",
        "--task",
        "translate",
        "--nproc",
        "2",
        "--out",
        str(out),
        "--n-sentences",
        "200",
        "--set",
        "steps=2",
        "--quiet",
        check=False,
    )
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        "qkv: error: only a GPT (qkv train without --task translate) trains on several processes"
    ]
    assert not (out / "state.json").exists()
