"""Taps: named points where a forward pass can be read (a trace) and edited (hooks).

`x = tap(name, x)` returns x, or what a hook put in its place. Names follow TransformerLens:
blocks.0.attn.hook_pattern, blocks.0.hook_resid_post, ... (qkv.trace_names lists them).

What a forward pass records and which hooks it runs belong to that pass alone: a `Pass` per model,
kept in context variables, so two threads (the web server's requests) or two asyncio tasks never see
each other's, and a model run inside another's hook has its own (none, unless some are on for it).
Outside `recording()` and `hooking()` there is none, and a tap costs one variable read.

- `recording(keep, model)`: a Recorder keeps the value at every name `keep(name)` accepts, after the
  hooks (what is recorded is what was computed). A value a hook changes at a point that an earlier
  name shares (blocks.0.hook_resid_post is blocks.1.hook_resid_pre: the same tensor) is recorded again
  under both, so the trace never contradicts itself. Recorded tensors are on the CPU (a GPU model's
  are copies) and in float32 for a bfloat16 or float16 model, exactly (`readable`). model=None
  records whatever runs without a pass of its own (a module called directly, in tests).
- `hooking(model, hooks)`: name -> functions fn(activation, hook) that return a replacement (same
  shape) or None (keep it; an in-place edit stays). qkv.core.see.hooks builds them from
  TransformerLens's fwd_hooks. `forward_pass(model)`, around each model's forward, puts that model's
  pass in force for the taps.

`explicit()` tells attention and LayerNorm to take their written-out formulas instead of the fused
kernels: while a trace records, while a hook reads a name only those formulas compute (the scores,
the pattern, z, a LayerNorm's parts: the modules' WRITTEN_OUT, see/names.py), inside `written_out()`
(every model), and in a forward(explicit=True) (that model's).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar

import torch


class Recorder:
    def __init__(self, keep: Callable[[str], bool]):
        self.keep = keep
        self.activations: dict[str, torch.Tensor] = {}


class HookPoint:
    """What a hook function is told about where it runs: `hook.name` (the full name), `hook.layer()`."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def layer(self) -> int | None:
        """The block's layer in the name (blocks.3.attn.hook_z -> 3), or None (hook_embed, logits)."""
        found = re.search(r"blocks\.(\d+)\.", self.name)
        return int(found.group(1)) if found else None

    def __repr__(self) -> str:
        return f"HookPoint({self.name!r})"


class Pass:
    """What the forward passes of one model record and which hooks they run, inside the recording() and
    hooking() blocks that are on in this context."""

    def __init__(self, model, recorder: Recorder | None, hooks: dict[str, tuple], explicit: bool):
        self.model = model  # the model whose passes these are (None: any, e.g. a module run on its own)
        self.recorder = recorder
        self.hooks = hooks  # full name -> hook functions, in the order they were added
        self.explicit = explicit
        self._last: torch.Tensor | None = None  # the last tensor tapped, and the names it was recorded under
        self._names: list[str] = []

    def wants(self, name: str) -> bool:
        return name in self.hooks or (self.recorder is not None and self.recorder.keep(name))

    def tap(self, name: str, value: torch.Tensor) -> torch.Tensor:
        fns = self.hooks.get(name, ())
        rec = self.recorder is not None and self.recorder.keep(name)
        if not fns and not rec:
            return value
        given = value
        for fn in fns:
            out = fn(value, HookPoint(name))
            if out is not None:
                value = _replacement(name, value, out)
        if self.recorder is not None:
            acts = self.recorder.activations
            names = self._names if given is self._last else []  # earlier names of this very tensor
            if fns:  # replaced, or edited in place (a copy recorded earlier, from a GPU or bfloat16, is stale)
                for alias in names:
                    acts[alias] = readable(value)
            if rec:
                acts[name] = readable(value)
                names = [*names, name]
            self._last, self._names = value, names
        return value


def _replacement(name: str, value: torch.Tensor, out) -> torch.Tensor:
    if not isinstance(out, torch.Tensor) or out.shape != value.shape:
        got = f"shape {tuple(out.shape)}" if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(
            f"the hook on {name} returned {got}; it must return None or a tensor of shape {tuple(value.shape)}"
        )
    return out.to(dtype=value.dtype, device=value.device)


# the passes that are on in this context, by model (None: any model), and the one of the model running now
_on: ContextVar[dict | None] = ContextVar("qkv_passes", default=None)
_pass: ContextVar[Pass | None] = ContextVar("qkv_pass", default=None)
_written_out: ContextVar[bool] = ContextVar("qkv_written_out", default=False)  # written_out(): every model
_explicit: ContextVar[bool] = ContextVar("qkv_explicit", default=False)  # forward(explicit=True): that model only
_running: ContextVar = ContextVar("qkv_running", default=None)  # the model whose forward runs now


def _current() -> Pass | None:
    """The pass in force; none while torch.compile traces a model (`qkv train --compile`: a compiled model
    trains, it is never traced or hooked, and Dynamo cannot read a context variable)."""
    return None if torch.compiler.is_compiling() else _pass.get()


def readable(tensor: torch.Tensor) -> torch.Tensor:
    """An activation as the analysis reads it: on the CPU (the same tensor from a CPU model, a copy from a
    GPU), and in float32 if the model computes in bfloat16 or float16 (exactly: every such number is a
    float32 number), since NumPy and the explanations have no bfloat16."""
    tensor = tensor.detach().to("cpu")
    return tensor.float() if tensor.dtype in (torch.bfloat16, torch.float16) else tensor


def tap(name: str, value: torch.Tensor) -> torch.Tensor:
    """Record value under name and let the hooks on name replace it; return it, or its replacement."""
    p = _current()
    return value if p is None else p.tap(name, value)


def untapped(name: str, value: torch.Tensor) -> torch.Tensor:
    """A tap that neither records nor edits (the formulas' default when no module names them)."""
    return value


def tap_view(name: str, value: torch.Tensor, view: Callable, unview: Callable) -> torch.Tensor:
    """Tap view(value), the layout under which the name is known (attention's (B, T, n_heads, d_head) of a
    (B, n_heads, T, d_head) tensor), and return value, or unview(the replacement)."""
    p = _current()
    if p is None or not p.wants(name):
        return value
    seen = view(value)
    out = p.tap(name, seen)
    return value if out is seen else unview(out)


def tap_expanded(name: str, value: torch.Tensor, shape) -> torch.Tensor:
    """Tap value broadcast to shape (the positions' (T, d_model) table, as each sequence's (B, T, d_model)):
    the same numbers, as a copy a hook may edit row by row; value itself when no one reads the name."""
    p = _current()
    if p is None or not p.wants(name):
        return value
    return p.tap(name, value.expand(shape).clone())


def wants(name: str) -> bool:
    """True when this pass records name or hooks it (so an activation that costs work is worth forming)."""
    p = _current()
    return p is not None and p.wants(name)


def edits(name: str) -> bool:
    """True when a hook runs on name in this pass (it may have changed the value in place)."""
    p = _current()
    return p is not None and name in p.hooks


def _of(model) -> Pass | None:
    on = _on.get() or {}
    return on.get(model, on.get(None))


def active() -> bool:
    """True while a trace records (in this context)."""
    return any(p.recorder is not None for p in (_on.get() or {}).values())


def hooked(model) -> bool:
    """True while hooks on `model` are on (generation then runs the taps' forward, not the plain stepper)."""
    p = _of(model)
    return p is not None and bool(p.hooks)


def explicit() -> bool:
    """True when the model must compute with the written-out formulas (a trace, a hook on what only they
    compute, or written_out())."""
    if torch.compiler.is_compiling():
        return False
    if _written_out.get() or _explicit.get():
        return True
    p = _current()
    return p is not None and p.explicit


@contextmanager
def written_out(on: bool = True):
    """Within this block attention and LayerNorm use their written-out formulas (when `on`)."""
    token = _written_out.set(True) if on else None
    try:
        yield
    finally:
        if token is not None:
            _written_out.reset(token)


@contextmanager
def forward_pass(model, explicit: bool = False):
    """Each model's forward runs inside this: its own pass (what is on for it: its recorder, its hooks;
    nothing for a model that has none, even inside another model's hook), and the written-out formulas
    if `explicit` (for this model's pass: another model run inside it decides for itself). Nothing while
    torch.compile traces the forward (see _current)."""
    if torch.compiler.is_compiling():
        yield
        return
    inner = _running.get() is model  # Seq2Seq.forward -> encode: the same pass goes on
    token, flag, running = (
        _pass.set(_of(model)),
        _explicit.set(explicit or (inner and _explicit.get())),
        _running.set(model),
    )
    try:
        yield
    finally:
        _running.reset(running)
        _explicit.reset(flag)
        _pass.reset(token)


@contextmanager
def _put(model, p: Pass):
    """Within this block `p` is the pass of `model` (None: of any model, and of modules run on their own)."""
    on = _on.set({**(_on.get() or {}), model: p})
    current = _pass.set(p) if model is None else None
    try:
        yield
    finally:
        if current is not None:
            _pass.reset(current)
        _on.reset(on)


@contextmanager
def recording(keep: Callable[[str], bool] = lambda name: True, model=None):
    """Within this block the passes of `model` (None: whatever runs) record what keep(name) accepts,
    after the hooks already on for it (a trace under model.hooks(...) holds the edited values)."""
    p = _of(model)
    if p is not None and p.recorder is not None:
        raise RuntimeError("a trace is already being recorded")
    recorder = Recorder(keep)
    with _put(model, Pass(model, recorder, p.hooks if p is not None else {}, True)):
        yield recorder


@contextmanager
def hooking(model, hooks: dict[str, tuple], written_out: bool = False):
    """Within this block the passes of `model` run `hooks` (full name -> functions), after any already on;
    `written_out`: some of them read a value only the written-out formulas form (see/names.py), so the
    passes take those formulas."""
    p = _of(model)
    merged = dict(p.hooks) if p is not None else {}
    for name, fns in hooks.items():
        merged[name] = merged.get(name, ()) + tuple(fns)
    recorder = p.recorder if p is not None else None
    explicit = written_out or (p is not None and p.explicit)  # a trace that records, or hooks on before
    with _put(model, Pass(model, recorder, merged, explicit)):
        yield
