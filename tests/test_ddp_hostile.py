"""Training processes in a hostile world: a rendezvous that accepts and never answers, a torchrun
environment that makes no sense, SIGTERM from a shell script whose background jobs ignore Ctrl-C.
Each ends in bounded time, with one line, and keeps what was trained when it is asked to stop."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from qkv.core.machine import processes as distributed
from qkv.core.train.checkpoint import load_checkpoint

# a tiny model on the CPU: the processes start, fail or train as quickly as qkv train allows
SETTINGS = [
    "--set",
    "batch_size=8",
    "--set",
    "dropout=0",
    "--set",
    "d_model=32",
    "--set",
    "n_ctx=32",
    "--quiet",
    "--device",
    "cpu",
]
LONG = ["--set", "steps=100000", "--set", "eval_interval=100000"]  # cannot finish before it is stopped
WAIT_S = 300  # a guard against a hang, not a speed limit
# the variables of torchrun's environment, unset: each test says which it sets
TORCHRUN = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "QKV_LAUNCHED")


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in TORCHRUN}
    return {**env, **values}


def _set_env(monkeypatch, env: dict[str, str]) -> None:
    for name in (*TORCHRUN, "QKV_DDP_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_rendezvous_that_accepts_and_never_answers_ends_within_the_timeout(text_file, tmp_path):
    """rank 1 of 2 meets rank 0's store at MASTER_ADDR:MASTER_PORT; here something listens there and never
    says a word. The kernel accepts the connection (a listening socket's backlog) without the test
    calling accept(): to TCPStore, a server that accepted and stays silent."""
    out = tmp_path / "never"
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        env = _env(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="1", WORLD_SIZE="2", QKV_DDP_TIMEOUT="3")
        t0 = time.monotonic()
        try:
            run = subprocess.run(
                [sys.executable, "-m", "qkv", "train", "--text", str(text_file), "--out", str(out), *SETTINGS],
                capture_output=True,
                text=True,
                timeout=30,
                env=env,
            )
        except subprocess.TimeoutExpired:
            pytest.fail("rank 1 still waits for the silent rendezvous after 30 s (QKV_DDP_TIMEOUT=3)")
    assert time.monotonic() - t0 < 30
    assert run.returncode != 0
    assert run.stderr.strip().splitlines() == [
        f"qkv: error (rank 1): could not join the 2 training processes at 127.0.0.1:{port} "
        "(waited up to 3 s: no answer from the store)"
    ], run.stderr
    assert not out.exists()  # only rank 0 writes


MASTER = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
TWO = {"RANK": "0", "WORLD_SIZE": "2", **MASTER}

# (the environment, the variable the error names)
NONSENSE = [
    ({"WORLD_SIZE": "0"}, "WORLD_SIZE=0"),
    ({"WORLD_SIZE": "-2"}, "WORLD_SIZE=-2"),
    ({"WORLD_SIZE": "two"}, "WORLD_SIZE=two"),
    ({"WORLD_SIZE": "1.5"}, "WORLD_SIZE=1.5"),
    ({"RANK": "1"}, "RANK=1"),  # without WORLD_SIZE
    ({"WORLD_SIZE": "2", **MASTER}, "RANK"),  # without RANK
    ({**TWO, "RANK": "5"}, "RANK=5"),
    ({**TWO, "RANK": "-1"}, "RANK=-1"),
    ({**TWO, "RANK": "one"}, "RANK=one"),
    ({"RANK": "2", "WORLD_SIZE": "1"}, "RANK=2"),
    ({**TWO, "LOCAL_RANK": "-1"}, "LOCAL_RANK=-1"),
    ({**TWO, "LOCAL_RANK": "x"}, "LOCAL_RANK=x"),
    ({**TWO, "LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "2"}, "LOCAL_RANK=2"),
    ({**TWO, "LOCAL_WORLD_SIZE": "0"}, "LOCAL_WORLD_SIZE=0"),
    ({**TWO, "MASTER_PORT": "0"}, "MASTER_PORT=0"),
    ({**TWO, "MASTER_PORT": "65536"}, "MASTER_PORT=65536"),
    ({**TWO, "MASTER_PORT": "http"}, "MASTER_PORT=http"),
    ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_PORT": "29500"}, "MASTER_ADDR"),
    ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1"}, "MASTER_PORT"),
    ({**TWO, "QKV_DDP_TIMEOUT": "soon"}, "QKV_DDP_TIMEOUT"),
]


@pytest.mark.parametrize("env, named", NONSENSE, ids=[named for _, named in NONSENSE])
def test_a_torchrun_environment_that_makes_no_sense_is_one_value_error_naming_it(monkeypatch, env, named):
    _set_env(monkeypatch, env)
    with pytest.raises(ValueError) as e:
        distributed.current()
    message = str(e.value)
    assert len(message.splitlines()) == 1 and named in message, message


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"WORLD_SIZE": "1"},
        {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0"},
        {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", **MASTER},
        {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "MASTER_ADDR": "node-0", "MASTER_PORT": "65535"},
    ],
)
def test_a_torchrun_environment_that_makes_sense_is_the_world(monkeypatch, env):
    _set_env(monkeypatch, env)
    world = distributed.current()
    assert (world.rank, world.size, world.local_rank) == (
        int(env.get("RANK", 0)),
        int(env.get("WORLD_SIZE", 1)),
        int(env.get("LOCAL_RANK", 0)),
    )


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(
    "env, named",
    [
        ({"WORLD_SIZE": "0"}, "WORLD_SIZE=0"),  # was: internal error: ZeroDivisionError
        ({"WORLD_SIZE": "-2"}, "WORLD_SIZE=-2"),  # was: trained, then two lines
        ({**TWO, "RANK": "5"}, "RANK=5"),  # was: 39 lines of c10d's logs first
        ({**TWO, "MASTER_PORT": "http"}, "MASTER_PORT=http"),
    ],
    ids=["WORLD_SIZE=0", "WORLD_SIZE=-2", "RANK=5", "MASTER_PORT=http"],
)
def test_qkv_train_refuses_a_torchrun_environment_that_makes_no_sense_in_one_line(text_file, tmp_path, env, named):
    out = tmp_path / "run"
    run = subprocess.run(
        [sys.executable, "-m", "qkv", "train", "--text", str(text_file), "--out", str(out), *SETTINGS],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        env=_env(**env, QKV_DDP_TIMEOUT="5"),
    )
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qkv: error") and named in lines[0], run.stderr
    assert not out.exists()


# In a non-interactive shell a job started with `&` ignores SIGINT, and so does every process it
# starts: the way Ctrl-C reaches training processes is closed. SIGTERM must still stop and save.
STOP_IN_BACKGROUND = """
"$@" &
pid=$!
log="$OUT/log.jsonl"
for _ in $(seq 1500); do  # until training has logged 5 steps (300 s at most)
    [ -f "$log" ] && [ "$(wc -l < "$log")" -ge 5 ] && break
    sleep 0.2
done
cat "/proc/$pid/task/$pid/children" > "$OUT.children" 2>/dev/null
start=$(date +%s%N)
kill -TERM "$pid"
wait "$pid"
status=$?
echo "$(( ($(date +%s%N) - start) / 1000000 ))"
exit "$status"
"""


def _stop_in_background(out, *argv) -> tuple[subprocess.CompletedProcess, float, list[int]]:
    """Start `qkv *argv` as `cmd &` in a bash script, SIGTERM it once it trains: (bash's run, the seconds
    from the signal to the end, the processes the command had started)."""
    run = subprocess.run(
        ["bash", "-c", STOP_IN_BACKGROUND, "bash", sys.executable, "-m", "qkv", *argv],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        env={**_env(), "OUT": str(out)},
    )
    children = out.with_name(out.name + ".children")
    pids = [int(p) for p in children.read_text().split()] if children.exists() else []
    return run, int(run.stdout.split()[-1]) / 1000, pids


def _saved_at_the_stop(out) -> None:
    """A checkpoint that loads, of the last step logged (none was saved before: no evaluation yet)."""
    steps = [line["step"] for line in map(json.loads, (out / "log.jsonl").read_text().splitlines())]
    assert load_checkpoint(out).state["step"] == steps[-1] >= 5


@pytest.mark.slow
@pytest.mark.subprocess
def test_sigterm_to_a_background_job_of_a_script_stops_every_process_and_rank_0_saves(text_file, tmp_path):
    out = tmp_path / "job"
    run, seconds, ranks = _stop_in_background(
        out, "train", "--nproc", "2", "--text", str(text_file), "--out", str(out), *SETTINGS, *LONG
    )
    assert run.returncode == 143, run.stderr
    assert seconds < 15, f"{seconds:.1f} s from SIGTERM to the end (the launcher's grace is 30 s)"
    assert (out / "state.json").exists(), run.stderr
    _saved_at_the_stop(out)
    assert len(ranks) == 2 and not any(os.path.exists(f"/proc/{pid}") for pid in ranks)


@pytest.mark.slow
@pytest.mark.subprocess
def test_sigterm_to_a_training_process_stops_it_as_ctrl_c_does(text_file, tmp_path):
    """A scheduler's SIGTERM (or the launcher's) to a process that trains: it saves, says so, exits 130."""
    out = tmp_path / "one"
    run, seconds, _ = _stop_in_background(out, "train", "--text", str(text_file), "--out", str(out), *SETTINGS, *LONG)
    assert run.returncode == 130, run.stderr
    assert run.stderr.strip() == "interrupted"
    assert seconds < 15
    _saved_at_the_stop(out)
