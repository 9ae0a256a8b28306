"""How much the server's requests may compute at once: PASSES at a time, within one memory budget, and
nothing kept after a request ends.

    passes = Passes(PASSES, Budget(server_budget()))
    with passes:                 # in a route: a slot, and a scope on the budget (qkv.core.machine.memory)
        doc = explain(...)       # each traced pass reserves its estimate (core/see/footprint.py) before it runs

The budget is QKV_MEMORY_BUDGET when it is set ("6GB", "500MB", bytes), else BUDGET_SHARE of the memory
available when the server starts (after the model is loaded): a request whose estimate alone exceeds it
is refused (400, one line naming both), and one that finds the budget held by others waits up to
Budget.wait seconds, then is refused as busy (503, Retry-After).

A request that fails holds nothing either: the exception's traceback holds every frame it passed through
and their tensors, and the traceback is part of a reference cycle (the exception, its frames, the local
that caught it), which only the cycle collector frees, at a time of its own (a 500 once kept 6 GB for
50 s). On the way out of `with passes`, the frames of a failing request's traceback are cleared
(traceback.clear_frames: their locals are dropped; the lines stay, for the log).
"""

from __future__ import annotations

import os
import re
import threading
import traceback
from contextlib import ExitStack

from qkv.core.io.refusal import Refusal
from qkv.core.machine.memory import Budget, available_memory

BUDGET_SHARE = 0.75  # of the memory available at start: the rest for the model's other work and the system
UNLIMITED = 2**62


def parse_size(text: str) -> int:
    """ "6GB" -> 6 * 10**9, "512MiB" -> 512 * 2**20, "123" -> 123; a one-line refusal for anything else or
    for less than 1 MB (which no request fits in)."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(?:([KMGT])(I?))?B?\s*", text, re.IGNORECASE)
    if not found:
        raise Refusal.of("budget.bad_setting", value=repr(text))
    prefix, binary = found.group(2), found.group(3)
    factor = (1024 if binary else 1000) ** ("KMGT".index(prefix.upper()) + 1) if prefix else 1
    size = int(float(found.group(1)) * factor)
    if size < 10**6:
        raise Refusal.of("budget.bad_setting", value=repr(text))
    return size


def server_budget(environ=os.environ) -> int:
    """The bytes the server's requests may hold at once (module docstring)."""
    if environ.get("QKV_MEMORY_BUDGET"):
        return parse_size(environ["QKV_MEMORY_BUDGET"])
    have = available_memory()
    return UNLIMITED if have is None else int(have * BUDGET_SHARE)


def forget(error: BaseException | None) -> None:
    """Drop the locals of every finished frame of `error`'s traceback, and of the errors it was raised
    during or from: what they held (tensors) is freed now, not when the cycle collector next runs."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        traceback.clear_frames(error.__traceback__)
        error = error.__cause__ or error.__context__


class Passes:
    """A bound on the requests computing at once (n slots) and on the memory they hold (`budget`)."""

    def __init__(self, n: int, budget: Budget):
        self.slots, self.budget = threading.BoundedSemaphore(n), budget
        self._open = threading.local()  # each thread's ExitStacks (a thread may nest: with passes, once)

    def __enter__(self):
        stack = ExitStack()
        stack.enter_context(self.slots)
        stack.enter_context(self.budget.scope())
        self._open.__dict__.setdefault("stacks", []).append(stack)
        return self

    def __exit__(self, kind, error, tb) -> bool:
        self._open.stacks.pop().close()  # the scope's tickets go back, then the slot
        forget(error)
        return False
