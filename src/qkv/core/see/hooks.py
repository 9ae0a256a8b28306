"""Hooks: change the computation at a named activation, in TransformerLens's convention.

    def no_head_3(z, hook):                       # z: (B, T, n_heads, d_head); hook.name: the full name
        z[:, :, 3] = 0                             # edit in place, or return a new tensor of z's shape
    logits = model.run_with_hooks(ids, fwd_hooks=[("blocks.1.attn.hook_z", no_head_3)])

    with model.hooks(fwd_hooks=[(lambda name: name.endswith("hook_resid_pre"), fn)]):
        logits, trace = model.run_with_trace(ids)  # the trace holds the edited values
        qkv.generate(model, tokenizer, "...")      # and so does generation, with the KV cache

A hook is a pair (name, fn): name is any name of qkv.trace_names(cfg) (the trace's names, "logits"
included) or a function of a name that says yes or no; fn(activation, hook) returns the activation's
replacement, or None to keep it. The activation is the model's own tensor, in the trace's layout
(docs/trace-format.md), in the model's dtype and on its device. Several hooks on one name run in the
order given. A hook on a value only the written-out formulas form (scores, pattern, z, a norm's parts)
makes the model take those formulas (the modules' WRITTEN_OUT, see/names.py); any other runs on the
fused path too.

The hooks are on for the passes of this model in this thread (or asyncio task) only, and off again
when the block ends, by an exception too. While they are on, generation runs the model's forward for
each new token (with its KV cache) instead of the plain stepper, which has no taps; a hook then sees
the new position alone (T = 1), as in TransformerLens.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from contextlib import contextmanager

from qkv.core.see.names import names_of
from qkv.core.see.tap import hooking
from qkv.core.see.trace import TRACE_TAPS
from qkv.core.spec.config import ModelConfig

Hook = tuple[str | Callable[[str], bool], Callable]


def resolve(cfg: ModelConfig, fwd_hooks: Iterable[Hook]) -> dict[str, tuple[Callable, ...]]:
    """The hooks by full name (each name a predicate accepts gets its function), checked: ValueError
    in one line for an unknown name, a name that is no activation of the pass, or a pair that is none."""
    names = list(names_of(cfg).order)  # what a forward records: the trace's names but the probs, computed after it
    known = set(names)
    by_name: dict[str, tuple[Callable, ...]] = {}
    for pair in fwd_hooks:
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and callable(pair[1])):
            raise ValueError(f"a hook is a pair (name, function of (activation, hook)); got {pair!r}")
        name, fn = pair
        if isinstance(name, str):
            if name not in known:
                raise ValueError(_unknown(name, names))
            matched = [name]
        elif callable(name):
            matched = [n for n in names if name(n)]
        else:
            raise ValueError(f"a hook's name is a string or a function of a name; got {name!r}")
        for n in matched:
            by_name[n] = by_name.get(n, ()) + (fn,)
    return by_name


def _unknown(name: str, names: list[str]) -> str:
    if name in TRACE_TAPS:
        return "probs is computed from the logits after the forward pass: hook 'logits' instead"
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else "; qkv.trace_names(model.cfg) lists them"
    return f"this model has no activation named {name!r}{hint}"


@contextmanager
def hooks(model, fwd_hooks: Iterable[Hook] = ()):
    """Within this block every forward pass of `model` runs fwd_hooks (after any hooks already on)."""
    by_name = resolve(model.cfg, fwd_hooks)
    written_out = not names_of(model.cfg).written_out.isdisjoint(by_name)
    with hooking(model, by_name, written_out):
        yield model


def run_with_hooks(model, *inputs, fwd_hooks: Iterable[Hook] = (), **kwargs):
    """model(*inputs, **kwargs) with fwd_hooks on for that one pass: the logits (an encoder: hidden states)."""
    with hooks(model, fwd_hooks):
        return model(*inputs, **kwargs)


class Hookable:
    """The two as methods of every model class: model.hooks(fwd_hooks=...), model.run_with_hooks(...)."""

    def hooks(self, fwd_hooks: Iterable[Hook] = ()):
        return hooks(self, fwd_hooks)

    def run_with_hooks(self, *inputs, fwd_hooks: Iterable[Hook] = (), **kwargs):
        return run_with_hooks(self, *inputs, fwd_hooks=fwd_hooks, **kwargs)
