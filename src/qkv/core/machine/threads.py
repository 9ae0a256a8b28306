"""How many CPU threads PyTorch uses on a machine that other programs share (docs/threads.md).

PyTorch splits each operation over its OpenMP threads, and the operation ends when the slowest
thread is done; a thread that finished first spins, busy, waiting. When another program keeps a
core busy, the thread that shares that core is the slowest every time: training ran 4.6x slower on
2 cores with one competing process. Letting the threads sleep instead of spin (OMP_WAIT_POLICY=PASSIVE)
helps there but costs a third of the idle speed, so qkv keeps the spinning and gives PyTorch one
thread per core that nobody else is using: `configure()` at start, measured over 0.1 s, and a
`Governor` that re-decides every few seconds during a long run. What the user sets wins:
configure(n) (`--threads N`), else QKV_THREADS, else OMP_NUM_THREADS. A computation whose numbers
must not depend on the machine (the lessons') runs inside `fixed(n)` instead.
"""

from __future__ import annotations

import contextlib
import os
import time

from qkv.core.io.refusal import Refusal


def cores() -> int:
    """CPUs this process may run on (its affinity mask, which taskset and containers narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _busy_ticks(cpus: set[int]) -> int:
    """Clock ticks the given CPUs have spent busy since boot (/proc/stat: all but idle and iowait)."""
    total = 0
    with open("/proc/stat") as f:
        for line in f:
            name, *fields = line.split()
            if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
                ticks = [int(x) for x in fields]
                total += sum(ticks[:8]) - ticks[3] - ticks[4]  # user nice system idle iowait irq softirq steal
    return total


def _sample() -> tuple[int, float, float] | None:
    """(busy ticks of this process's CPUs, its own CPU seconds, wall seconds), or None off Linux."""
    try:
        return _busy_ticks(os.sched_getaffinity(0)), time.process_time(), time.monotonic()
    except (AttributeError, OSError, ValueError):
        return None


def _others(a, b) -> float:
    """Cores other programs kept busy between samples a and b."""
    busy, own, wall = (b[0] - a[0]) / os.sysconf("SC_CLK_TCK"), b[1] - a[1], b[2] - a[2]
    return max(0.0, busy - own) / max(wall, 1e-9)


def others_busy(seconds: float = 0.1) -> float | None:
    """How many of this process's cores other programs keep busy, measured over `seconds` (Linux;
    None elsewhere): the busy time of those CPUs less this process's own CPU time."""
    a = _sample()
    if a is None:
        return None
    time.sleep(seconds)
    return _others(a, _sample())


def _fit(busy: float | None) -> int:
    """Threads for the cores that others leave free (a core counts as busy from half on), at least one."""
    return max(1, cores() - int(busy + 0.5)) if busy is not None else cores()


def policy_threads() -> int:
    """qkv's own choice when the user chose nothing: one thread per core that no other program keeps
    busy at start, at least one. (A thread on a busy core is the slowest of every parallel region,
    and the others wait for it.)"""
    return _fit(others_busy())


def per_process(nproc: int) -> int:
    """Threads for each of nproc processes on this machine (data-parallel training): the cores
    shared out, at least one each."""
    if not isinstance(nproc, int) or isinstance(nproc, bool) or nproc < 1:
        raise Refusal.of("errors.threads_nproc", got=repr(nproc))
    return max(1, cores() // nproc)


def _count(value, name: str) -> int:
    try:
        n = int(str(value).strip())
    except ValueError:
        raise Refusal.of("errors.threads_count", name=name, got=repr(value)) from None
    if n < 1:
        raise Refusal.of("errors.threads_count", name=name, got=repr(value))
    return n


def user_choice(n: int | None = None, environ=os.environ) -> tuple[int, str] | None:
    """(threads, who chose) when the user chose: n (--threads), else QKV_THREADS, else
    OMP_NUM_THREADS (its first entry); None when nobody did."""
    if n is not None:
        return _count(n, "--threads"), "--threads"
    if environ.get("QKV_THREADS", "").strip():
        return _count(environ["QKV_THREADS"], "QKV_THREADS"), "QKV_THREADS"
    if environ.get("OMP_NUM_THREADS", "").strip():  # OpenMP allows a list, one entry per nesting level
        return _count(environ["OMP_NUM_THREADS"].split(",")[0], "OMP_NUM_THREADS"), "OMP_NUM_THREADS"
    return None


def requested(n: int | None = None, environ=os.environ) -> tuple[int, str]:
    """(threads, where the number came from): the user's choice (user_choice), else the policy."""
    return user_choice(n, environ) or (policy_threads(), "policy")


def configure(n: int | None = None) -> int:
    """Set PyTorch's thread count (see `requested` for who decides) and return it. Call it once at
    start, before the first computation."""
    import torch

    global _by_policy
    threads, chosen_by = requested(n)
    _by_policy = chosen_by == "policy"
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


_by_policy = False  # whether configure() left the choice to the policy


@contextlib.contextmanager
def fixed(n: int = 1):
    """Within this block PyTorch computes on n intra-op threads with subnormal floats flushed to zero;
    the thread count before comes back after.

    A fixed count keeps every sum in the same order, so the numbers do not depend on the machine's
    cores or load (a lesson prints the same digits everywhere), and tiny models are fastest on one
    thread anyway. Flushing matters for a deep stack without residuals or LayerNorm: its activations
    shrink below 1e-38, where the CPU's arithmetic gets many times slower. (PyTorch cannot report
    the flush setting it had; it is put back to its default, off.)"""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)
        torch.set_num_threads(before)


def governor() -> Governor | None:
    """A Governor for a long job when configure() let the policy choose (the command line does);
    None when the user chose a count, or nobody called configure() (a program using qkv as a library
    keeps its own torch settings)."""
    return Governor() if _by_policy else None


class Governor:
    """Re-decides the thread count while a long job runs, for programs that start or stop meanwhile.
    Call tick() between steps, from the thread that runs the model (an OpenMP thread count belongs
    to the thread that sets it). Every `interval` seconds it measures what other programs used of
    this process's cores since the last decision, and sets the policy's count for that. It does
    nothing when the user chose the count (QKV_THREADS, OMP_NUM_THREADS, or user_chose=True for
    --threads) or off Linux."""

    def __init__(self, interval: float = 2.0, user_chose: bool = False, environ=os.environ):
        self.interval = interval
        self._last = None if user_chose or user_choice(None, environ) else _sample()

    def tick(self) -> int | None:
        """The thread count, when it was decided now (every `interval` seconds); else None."""
        if self._last is None or time.monotonic() - self._last[2] < self.interval:
            return None
        now = _sample()
        n = _fit(_others(self._last, now))
        self._last = now
        import torch

        if torch.get_num_threads() != n:
            torch.set_num_threads(n)
        return n
