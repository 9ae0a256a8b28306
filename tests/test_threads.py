"""qkv.core.machine.threads: who decides the thread count; importing qkv leaves the user's OpenMP settings alone."""

import os
import subprocess
import sys

import pytest
import torch

from qkv.core.machine import threads

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


def run_python(code: str, **env) -> str:
    """stdout of a fresh Python (no thread settings inherited, the env given added)."""
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "QKV_THREADS")}
    base["PYTHONPATH"] = SRC + os.pathsep + base.get("PYTHONPATH", "")
    done = subprocess.run(
        [sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def keep_threads():
    n = torch.get_num_threads()
    yield
    torch.set_num_threads(n)


def test_precedence(monkeypatch):
    monkeypatch.setattr(threads, "policy_threads", lambda: 99)  # the policy only when the user chose nothing
    assert threads.requested(None, {}) == (99, "policy")
    assert threads.user_choice(None, {}) is None
    assert threads.requested(None, {"OMP_NUM_THREADS": "3"}) == (3, "OMP_NUM_THREADS")
    assert threads.requested(None, {"OMP_NUM_THREADS": "4,2"}) == (4, "OMP_NUM_THREADS")
    assert threads.requested(None, {"OMP_NUM_THREADS": "3", "QKV_THREADS": "5"}) == (5, "QKV_THREADS")
    assert threads.requested(7, {"OMP_NUM_THREADS": "3", "QKV_THREADS": "5"}) == (7, "--threads")
    assert threads.requested(None, {"QKV_THREADS": " ", "OMP_NUM_THREADS": ""}) == (99, "policy")


@pytest.mark.parametrize("bad", [0, -1, "two", "1.5"])
def test_bad_counts_are_one_line_errors(bad):
    with pytest.raises(ValueError, match="whole number of threads"):
        threads.requested(bad, {})
    with pytest.raises(ValueError, match="QKV_THREADS"):
        threads.requested(None, {"QKV_THREADS": str(bad)})


def test_policy_and_per_process_stay_within_the_cores():
    cores = threads.cores()
    assert 1 <= threads.policy_threads() <= cores
    assert threads.per_process(1) == cores
    assert threads.per_process(cores) == 1
    assert threads.per_process(cores * 4) == 1  # never zero
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="number of processes"):
            threads.per_process(bad)


def test_configure_applies_and_returns(keep_threads, monkeypatch):
    monkeypatch.delenv("QKV_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    other = 1 if torch.get_num_threads() != 1 else 2
    assert threads.configure(other) == other and torch.get_num_threads() == other
    monkeypatch.setenv("QKV_THREADS", "3")
    assert threads.configure() == 3 and torch.get_num_threads() == 3
    monkeypatch.delenv("QKV_THREADS")
    monkeypatch.setattr(threads, "policy_threads", lambda: other)  # the load, measured twice, could differ
    monkeypatch.setattr(threads, "_by_policy", False)
    assert threads.configure() == other == torch.get_num_threads()
    assert threads.governor() is not None  # the policy chose: a long run follows the load
    threads.configure(1)
    assert threads.governor() is None  # the user chose: nothing changes it


@pytest.mark.slow
@pytest.mark.subprocess
def test_import_leaves_the_users_settings_alone():
    code = "import os, qkv; print(os.environ.get('OMP_WAIT_POLICY'), os.environ.get('OMP_NUM_THREADS'))"
    assert run_python(code, OMP_WAIT_POLICY="ACTIVE", OMP_NUM_THREADS="1") == "ACTIVE 1"


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_users_omp_num_threads_is_what_configure_applies():
    code = "from qkv.core.machine import threads; import torch; print(threads.configure(), torch.get_num_threads())"
    assert run_python(code, OMP_NUM_THREADS="1") == "1 1"
    assert run_python(code, OMP_NUM_THREADS="1", QKV_THREADS="2") == "2 2"


def test_the_policy_leaves_busy_cores_to_their_programs(monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 4)
    for busy, n in [(0.0, 4), (0.3, 4), (0.7, 3), (1.0, 3), (2.2, 2), (3.9, 1), (9.0, 1), (None, 4)]:
        monkeypatch.setattr(threads, "others_busy", lambda seconds=0.1, b=busy: b)
        assert threads.policy_threads() == n, busy


def test_others_busy_is_a_share_of_the_cores():
    busy = threads.others_busy(0.05)
    assert busy is None or 0.0 <= busy <= threads.cores() + 0.5


def test_governor_follows_the_load_unless_the_user_chose(keep_threads, monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 2)
    monkeypatch.setattr(threads.os, "sysconf", lambda name: 100)  # clock ticks per second
    monkeypatch.setattr(threads.time, "monotonic", lambda: 100.0)  # every tick is past the interval
    # (busy ticks of our CPUs, our CPU seconds, wall seconds)
    samples = iter([(0, 0.0, 0.0), (200, 1.0, 1.0), (400, 3.0, 2.0)])
    monkeypatch.setattr(threads, "_sample", lambda: next(samples))
    g = threads.Governor(interval=2.0, environ={})
    assert g.tick() == 1 and torch.get_num_threads() == 1  # 2 busy core-seconds, 1 of them ours
    assert g.tick() == 2 and torch.get_num_threads() == 2  # all the busy time ours: both cores free
    for chose in ({"QKV_THREADS": "2"}, {"OMP_NUM_THREADS": "1"}):
        assert threads.Governor(environ=chose).tick() is None
    assert threads.Governor(user_chose=True, environ={}).tick() is None
