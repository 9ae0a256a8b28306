"""Taps: named points where a trace reads the activations of a forward pass.

`tap(name, value)` costs one global check when nothing records. Inside `recording(keep)` it
stores value (a tensor, or a function that computes one, for activations that cost extra work
such as each head's separate output) under `name`, if `keep(name)` says so. Names follow
TransformerLens: blocks.0.attn.hook_pattern, blocks.0.hook_resid_post, ...
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

import torch

_recorder: "Recorder | None" = None


class Recorder:
    def __init__(self, keep: Callable[[str], bool]):
        self.keep = keep
        self.activations: dict[str, torch.Tensor] = {}

    def record(self, name: str, value) -> None:
        if self.keep(name):
            tensor = value() if callable(value) else value
            self.activations[name] = tensor.detach()


def tap(name: str, value) -> None:
    if _recorder is not None:
        _recorder.record(name, value)


def active() -> bool:
    """True while a trace records (the model then takes the explicit attention path)."""
    return _recorder is not None


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
