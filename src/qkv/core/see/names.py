"""The names a model records, read from its modules: each module declares its own taps, once.

A module that taps says what it records with `tap_names()`: the full names, in the order its forward
records them, given how it was built (an attention without RoPE records no hook_rot_q). A module made
of others (a block, a stack, a model) lists its steps in the order of its forward, each a name of
its own or a sub-module, and `declared` reads them. Two class attributes say more about a module's
taps, by their last part: KV_TAPS, those with n_kv_heads heads (grouped-query attention's k and v),
and WRITTEN_OUT, those only the written-out formulas form (a hook there makes the model take them).
A block's SHORTHAND names the sub-modules a short name reaches besides the names right under the
block: trace["pattern", L] is blocks.L.attn.hook_pattern, as TransformerLens's get_act_name reads it.

`names_of(cfg)` builds the model of cfg on the meta device (shapes only: no numbers, no memory) and
reads it. qkv.trace_names, the hooks' check of a name, the shorthand and the trace's repeat of the
key/value heads all read what it returns; nothing else lists names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from qkv.core.spec.config import ModelConfig
from qkv.core.spec.family import family_of


@dataclass(frozen=True)
class Names:
    """What the modules of one model declare."""

    order: tuple[str, ...]  # every name its forward records, in the order of the computation
    kv: frozenset[str]  # the names recorded with n_kv_heads heads: (B, T, n_kv_heads, d_head)
    written_out: frozenset[str]  # the names only the written-out formulas form (see/tap.py: explicit())
    short: dict[str, str] = field(hash=False)  # block prefix + hook ("blocks.0.hook_pattern") -> its full name


def hook_of(name: str) -> str:
    """A name's last part, the hook: blocks.0.attn.hook_k -> hook_k."""
    return name.rpartition(".")[2]


def declared(prefix: str, steps: Iterable) -> list[str]:
    """The names of a module made of others, from its steps in the order of its forward: a string is a
    name of its own (recorded as prefix + step), a module gives its own tap_names(), a list of modules
    (an nn.ModuleList) each one's in turn, None nothing (a part this configuration does not have)."""
    names: list[str] = []
    for step in steps:
        if isinstance(step, str):
            names.append(prefix + step)
        elif hasattr(step, "tap_names"):
            names += step.tap_names()
        elif step is not None:
            names += [name for module in step for name in module.tap_names()]
    return names


def read(model: Any) -> Names:
    """What `model`'s modules declare (any nn.Module whose modules have tap_names())."""
    order = tuple(model.tap_names())
    kv: set[str] = set()
    written_out: set[str] = set()
    short: dict[str, str] = {}
    module: Any  # any nn.Module: what it declares is read by name
    for module in model.modules():
        own = module.tap_names() if hasattr(module, "tap_names") else []
        kv.update(n for n in own if hook_of(n) in getattr(module, "KV_TAPS", ()))
        written_out.update(n for n in own if hook_of(n) in getattr(module, "WRITTEN_OUT", ()))
        if hasattr(module, "SHORTHAND"):  # a block
            for name in _reached(module, own):
                short.setdefault(module.tap_prefix + hook_of(name), name)
    return Names(order, frozenset(kv), frozenset(written_out), short)


def _reached(block: Any, own: list[str]) -> list[str]:
    """The names a short name reaches in a block: those right under it (blocks.L.hook_resid_pre,
    hook_attn_out, ...), then those of the sub-modules its SHORTHAND names (attn, mlp)."""
    under = [name for name in own if "." not in name.removeprefix(block.tap_prefix)]
    subs = [getattr(block, sub) for sub in block.SHORTHAND]
    return under + [name for sub in subs if sub is not None for name in sub.tap_names()]


_KNOWN: dict[str, Names] = {}  # repr(cfg) -> its names: a config's model is built once


def names_of(cfg: ModelConfig) -> Names:
    """What the model of cfg declares, read from that model built on the meta device."""
    key = repr(cfg)
    names = _KNOWN.get(key)
    if names is None:
        with torch.device("meta"):  # the modules as cfg builds them, without their weights
            model = family_of(cfg).model_class()(cfg)
        if len(_KNOWN) >= 64:
            _KNOWN.clear()
        names = _KNOWN[key] = read(model)
    return names
