"""`qkv train --compile`: the model a step runs through, compiled by torch.compile, and a one-line
refusal where this machine cannot compile it.

    trained = compiled(world.wrap(model))     # DDP's wrapper (or the model itself), compiled
    step = said_in_one_line(partial(data.step, trained, optimizer))
    loss = step(s)                            # a backend that cannot compile: a one-line Refusal

torch.compile traces the forward pass into a graph and has a backend (inductor: C++ on the CPU,
Triton on a GPU) fuse its operations into kernels: fewer passes over memory, at the price of a
compilation at the first step (and again at its first backward). It compiles lazily, so a machine
that cannot compile (no C++ compiler, an unsupported Python) fails inside the first step, which
compile_errors (said_in_one_line: around every step) turns into one line. The compiled module holds
the model itself (its `_orig_mod`), so the weights are shared: checkpoints and evaluations use the
model, whose state_dict has no `_orig_mod.` prefix (benchmarks/compile_speed.py measures whether
compiling pays).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch

from qkv.core.io.refusal import Refusal


def compiled(model: torch.nn.Module) -> torch.nn.Module:
    """torch.compile(model): the same weights, run through fused kernels once compiled."""
    try:
        return torch.compile(model)  # type: ignore[return-value]  # an OptimizedModule, a Module
    except RuntimeError as e:  # e.g. "Dynamo is not supported on Python 3.x"
        raise Refusal.of("accum.compile_failed", reason=_reason(e)) from None


@contextmanager
def compile_errors() -> Iterator[None]:
    """Around a step of a compiled model: a backend that fails to compile (inductor, its C++ compiler)
    becomes a one-line refusal; any other error passes through as it is."""
    try:
        yield
    except RuntimeError as e:
        dynamo = sys.modules.get("torch._dynamo.exc")  # not imported: nothing was compiled (an eager run)
        if dynamo is not None and isinstance(e, dynamo.BackendCompilerFailed):  # InductorError is one
            raise Refusal.of("accum.compile_failed", reason=_reason(e)) from None
        raise


def said_in_one_line(step: Callable[[int], float]) -> Callable[[int], float]:
    """`step` (a training step of a compiled model, or of any: the others never fail to compile) with
    compile_errors around each call."""

    def guarded(s: int) -> float:
        with compile_errors():
            return step(s)

    return guarded


def _reason(e: BaseException) -> str:
    """The first line of what went wrong, the compiler's own error where torch wrapped it."""
    inner = getattr(e, "inner_exception", None) or e
    lines = [line.strip() for line in str(inner).splitlines() if line.strip()]
    return f"{type(inner).__name__}: {lines[0] if lines else ''}"[:300]
