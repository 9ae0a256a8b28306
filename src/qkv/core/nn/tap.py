"""Taps: named points where a trace reads the activations of a forward pass.

`tap(name, value)` costs one global check when nothing records, and returns value. Inside
`recording(keep)` it stores value (a tensor, or a function that computes one, for activations
that cost extra work such as each head's separate output) under `name`, if `keep(name)` says so.
Names follow TransformerLens: blocks.0.attn.hook_pattern, blocks.0.hook_resid_post, ...

Recorded tensors are kept on the CPU: a model on a GPU records its activations as CPU copies, so
the analysis code (which works on the CPU) reads them as it reads a CPU model's. On the CPU this
costs nothing: `.to("cpu")` of a CPU tensor is that tensor. A model in bfloat16 (`--dtype bfloat16`)
records float32 copies, exactly equal (`readable`).

`explicit()` tells attention and LayerNorm to take their written-out formulas instead of the
fused kernels: always while a trace records, and inside `written_out()` (GPT.forward(explicit=True)).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

import torch

_recorder: Recorder | None = None
_written_out = False


class Recorder:
    def __init__(self, keep: Callable[[str], bool]):
        self.keep = keep
        self.activations: dict[str, torch.Tensor] = {}

    def record(self, name: str, value) -> None:
        if self.keep(name):
            tensor = value() if callable(value) else value
            self.activations[name] = readable(tensor)


def readable(tensor: torch.Tensor) -> torch.Tensor:
    """An activation as the analysis reads it: on the CPU (the same tensor from a CPU model, a copy from a
    GPU), and in float32 if the model computes in bfloat16 or float16 (exactly: every such number is a
    float32 number), since NumPy and the explanations have no bfloat16."""
    tensor = tensor.detach().to("cpu")
    return tensor.float() if tensor.dtype in (torch.bfloat16, torch.float16) else tensor


def tap(name: str, value):
    """Record value under name while a trace records; return value either way."""
    if _recorder is not None:
        _recorder.record(name, value)
    return value


def active() -> bool:
    """True while a trace records."""
    return _recorder is not None


def explicit() -> bool:
    """True when the model must compute with the written-out formulas (a trace, or written_out())."""
    return _written_out or _recorder is not None


@contextmanager
def written_out(on: bool = True):
    """Within this block attention and LayerNorm use their written-out formulas (when `on`)."""
    global _written_out
    before = _written_out
    _written_out = before or on
    try:
        yield
    finally:
        _written_out = before


@contextmanager
def recording(keep: Callable[[str], bool] = lambda name: True):
    global _recorder
    if _recorder is not None:
        raise RuntimeError("a trace is already being recorded")
    _recorder = Recorder(keep)
    try:
        yield _recorder
    finally:
        _recorder = None
