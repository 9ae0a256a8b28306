"""The process's global random generator, shared by every thread: one lock for the code that draws from it
while other threads may too (the explorer's requests run side by side).

A seeded draw that forks the global state (`torch.random.fork_rng`, then `manual_seed`) gives the same
numbers every time only if no other thread draws from the global generator meanwhile: a generation
without a seed, which samples from it, would take numbers from the middle of that sequence. Both hold
GLOBAL while they draw. Draws from a torch.Generator of their own need no lock.
"""

from __future__ import annotations

import threading

GLOBAL = threading.Lock()
