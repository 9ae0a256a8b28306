"""What an adapter is, and the registry that finds one by config.json's model_type.

An adapter says how one family of Hugging Face models becomes a qkv model: its config map (config.json
to ModelConfig), its weight map (the stored tensors that make each qkv parameter) and how its tokenizer
is read. Each lives in a module of its own under hub/adapters/, as the module's ADAPTER; the registry
reads every module there, so a new family is its adapter file (with its model parts, if new, and its
tests) and nothing else. The shared reading (the weight files, the sizes, the dtype) is hub/read.py's.

A weight map is a dict: qkv parameter name -> (how, stored names), how being "" (the one tensor as it
is), "T" (one tensor transposed: GPT-2's Conv1D (in, out) to nn.Linear's (out, in)), "cat" (several
stacked row-wise: W_QKV from q, k and v), "rows" (some rows of one tensor, with a third element, a
read.Rows: Phi-3's fused gate_up_proj split, GPT-NeoX's per-head query_key_value regrouped) or "+1"
(one tensor plus 1: Gemma's RMSNorm scales by 1 + weight).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from qkv.core.io.refusal import Refusal, phrase
from qkv.core.spec.config import ModelConfig


@dataclass(frozen=True)
class Adapter:
    """How one family of Hugging Face models is read (see the module docstring)."""

    titles: tuple[str, ...]  # how a message names the family's models: ("Llama", "Mistral", ...)
    model_types: tuple[str, ...]  # the values of config.json's model_type it reads
    config: Callable[[dict], ModelConfig]  # config.json as a dict -> ModelConfig, every field checked
    weights: Callable  # (cfg, names: read.StoredNames) -> the weight map
    tokenizer: Callable  # (directory, cfg) -> the tokenizer
    tokenizer_files: tuple[str, ...]  # the files (glob patterns) its tokenizer may be read from, to fetch
    ignored: str = ""  # a regular expression: stored tensors the family saves that qkv does not use
    order: int = 0  # where the list of what qkv reads names this family (lowest first)
    refused: tuple[str, ...] = ()  # model_types it knows only to refuse, in its own words (its config map says why)
    head: str = (
        "lm_head.weight"  # the stored unembedding, read where config.json unties it (read.unembedding); "": none
    )


@cache
def adapters() -> tuple[Adapter, ...]:
    """Every adapter under hub/adapters/, in their `order`."""
    from qkv.core.hub import adapters as package

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if isinstance(getattr(module, "ADAPTER", None), Adapter):
            found.append(module.ADAPTER)
    return tuple(sorted(found, key=lambda a: (a.order, a.model_types)))


def adapter_for(hc: dict, source: Path) -> Adapter:
    """The adapter for config.json `hc` (read from the directory `source`), or a refusal naming its
    model_type and architectures and what qkv reads."""
    kind = hc.get("model_type")
    for adapter in adapters():
        if kind in adapter.model_types or kind in adapter.refused:
            return adapter
    named = ", ".join(hc.get("architectures") or [])
    raise Refusal.of(
        "hub.unknown_model_type",
        path=source,
        kind=repr(kind),
        architectures=named or phrase("hub.unknown_architecture"),
        supported=supported(),
    )


def supported():
    """What qkv reads, as a phrase: "GPT-2 (model_type gpt2), Llama, ... (llama, ...) and BERT (bert)"."""
    said = [
        phrase("hub.family_first" if i == 0 else "hub.family", titles=list(a.titles), types=list(a.model_types))
        for i, a in enumerate(adapters())
    ]
    return phrase("hub.and", some=said[:-1], last=said[-1]) if len(said) > 1 else said[0]
