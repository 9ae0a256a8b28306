"""The memory a computation may take: what this machine has, and a shared budget that requests draw on.

    available_memory()                   # MemAvailable, capped by the cgroup's limit: bytes, or None
    ticket = reserve(nbytes, "trace")    # before an allocation that grows with the input; ticket.release()
    with budget.scope():                 # a server's request: what it reserves comes out of `budget`
        ...                              #   and goes back at the end, in a finally, whatever happened

Outside a scope (the Python API, the CLI), `reserve` refuses, in one line naming the estimate and the
limit, what surely cannot fit in the memory available now, and holds nothing. Inside a scope it takes
the estimate out of the scope's Budget: a Budget of `total` bytes shared by every request; a request
whose estimate alone, or with what it still holds itself, exceeds `total` is refused (TooLarge, one
line), and one that would fit but finds
the budget full waits up to the scope's `wait` seconds for others to give theirs back, then is
refused as Busy (a server's 503: try again). A ticket goes back when the caller releases it (the trace
that held the memory is gone: see/trace.py) or when the scope ends, whichever comes first, once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from qkv.core.io.files import format_bytes
from qkv.core.io.refusal import Refusal

MEMINFO = Path("/proc/meminfo")
V1 = Path("/sys/fs/cgroup/memory")
CGROUPS = (  # cgroup v2, v1: (limit, usage, statistics, the one of them that is page cache it can drop)
    (
        Path("/sys/fs/cgroup/memory.max"),
        Path("/sys/fs/cgroup/memory.current"),
        Path("/sys/fs/cgroup/memory.stat"),
        "inactive_file",
    ),
    (V1 / "memory.limit_in_bytes", V1 / "memory.usage_in_bytes", V1 / "memory.stat", "total_inactive_file"),
)


class TooLarge(Refusal):
    """One computation needs more memory than it may ever have here (a request: its budget's total)."""


class Busy(Refusal):
    """It would fit, but the budget is held by computations in flight now: try again shortly."""


def available_memory() -> int | None:
    """The bytes this process may still allocate: MemAvailable from /proc/meminfo, capped by the
    cgroup's limit (less what the group uses) when one is set; where neither can be read (macOS), the
    physical memory; None when nothing can be read (no limit is applied then)."""
    found = []
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)  # kB
    except (OSError, ValueError, IndexError):
        pass
    for limit_path, usage_path, stat_path, cache in CGROUPS:
        limit = _read_int(limit_path)  # None for "max": no limit
        if limit is not None:  # what the group uses, less the file cache it drops first (docker's "working set")
            used = (_read_int(usage_path) or 0) - _stat(stat_path, cache)
            found.append(max(0, limit - max(0, used)))
    if not found:
        try:
            found.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, OSError, ValueError):
            pass
    return min(found) if found else None


def _stat(path: Path, key: str) -> int:
    """A number in a cgroup's memory.stat ("key value" lines), 0 if it cannot be read."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


class Ticket:
    """Bytes taken from a budget (or none, outside a scope); release() gives them back, once."""

    def __init__(self, budget: Budget | None = None, nbytes: int = 0):
        self.budget, self.nbytes = budget, nbytes

    def release(self) -> None:
        budget, self.budget = self.budget, None
        if budget is not None:
            budget.give(self.nbytes)


class Budget:
    """`total` bytes shared by the computations in flight: each takes its estimate before it runs."""

    def __init__(self, total: int, wait: float = 5.0):
        self.total, self.wait, self.held = int(total), wait, 0
        self._free = threading.Condition()

    def take(self, nbytes: int, what: object, wait: float, own: int = 0) -> Ticket:
        """Take nbytes, waiting up to `wait` seconds for room; TooLarge if they exceed the total (or do
        together with the `own` bytes the same request still holds: no wait would ever make room for
        them), Busy if no room came."""
        if nbytes > self.total:
            raise TooLarge.of("budget.too_large", what=what, need=format_bytes(nbytes), limit=format_bytes(self.total))
        if own + nbytes > self.total:
            raise TooLarge.of(
                "budget.too_large_together",
                what=what,
                need=format_bytes(nbytes),
                own=format_bytes(own),
                limit=format_bytes(self.total),
            )
        with self._free:
            if not self._free.wait_for(lambda: self.held + nbytes <= self.total, timeout=wait):
                raise Busy.of(
                    "budget.busy",
                    what=what,
                    need=format_bytes(nbytes),
                    held=format_bytes(self.held),
                    limit=format_bytes(self.total),
                )
            self.held += nbytes
        return Ticket(self, nbytes)

    def give(self, nbytes: int) -> None:
        with self._free:
            self.held -= nbytes
            self._free.notify_all()

    @contextmanager
    def scope(self, wait: float | None = None) -> Iterator[list[Ticket]]:
        """While it lasts (one request, in this thread and context), `reserve` takes from this budget;
        every ticket still out goes back at the end, whatever happened."""
        tickets: list[Ticket] = []
        token = _scope.set((self, self.wait if wait is None else wait, tickets))
        try:
            yield tickets
        finally:
            _scope.reset(token)
            for ticket in tickets:
                ticket.release()


_scope: ContextVar[tuple[Budget, float, list[Ticket]] | None] = ContextVar("qkv_memory_scope", default=None)


def reserve(nbytes: int, what: object) -> Ticket:
    """Before allocating about `nbytes` for `what` (a phrase for the refusal: "a trace of 812 tokens"):
    inside a scope, take them from its budget; outside, refuse what exceeds the memory available now."""
    scope = _scope.get()
    if scope is None:
        have = available_memory()
        if have is not None and nbytes > have:
            raise TooLarge.of("budget.too_large_here", what=what, need=format_bytes(nbytes), limit=format_bytes(have))
        return Ticket()
    budget, wait, tickets = scope
    own = sum(t.nbytes for t in tickets if t.budget is not None)  # what this request still holds
    ticket = budget.take(nbytes, what, wait, own)
    tickets.append(ticket)
    return ticket
