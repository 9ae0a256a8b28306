"""How many bytes a traced forward pass takes, from the config alone, before it runs.

    trace_bytes(cfg, T, names)    # what a trace of these names holds: sum of B * T * width(name) * size
    pass_bytes(cfg, T, names)     # that, plus what the pass itself holds while it runs (below)

A name's width is the numbers it holds per position (trace.py's shapes): d_model for the residual stream
and the sub-layers' outputs, n_heads * d_head for q and z (n_kv_heads * d_head for k and v), n_heads * T
for the attention's dots, scores and pattern (one row of keys per head), n_heads * d_model for
hook_result, d_mlp inside the MLP, 1 for a norm's scale, d_vocab for the logits and the probs. A number
takes the model's dtype's bytes, at least 4 (a bfloat16 model's trace is float32: tap.readable).

What the pass holds beyond its trace: the logits (always returned), one layer's every intermediate at
once (the layer being computed, recorded or not), and a float32 copy of the logits (the probs' softmax);
and the whole is taken MARGIN times, for what the formula does not list (the allocator's own, the
analysis's reading of the trace): /api/explain of 1,000 tokens on a Qwen2.5-0.5B-shaped model peaked at
1.14 times the sum (benchmarks/request_memory.py).
An encoder-decoder is counted at T = its longer side. The estimate is an upper bound of the trace, met
exactly when every name is kept (tests/test_request_memory.py compares it with the tensors' nbytes).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from qkv.core.see.names import names_of
from qkv.core.spec.config import ModelConfig
from qkv.core.spec.family import family_of

MARGIN = 1.25  # the estimate of a pass over the sum of what it lists (module docstring)
# the trace's own name, after the model's: P(next token), computed from the logits in float32 (a family that predicts)
TRACE_TAPS = ("probs",)


def item_bytes(dtype: torch.dtype) -> int:
    """The bytes of one recorded number: the dtype's, at least 4 (tap.readable makes half floats float32)."""
    return max(torch.empty((), dtype=dtype).element_size(), 4)


def width(cfg: ModelConfig, name: str, T: int) -> int:
    """The numbers `name` holds per position of one sequence of T tokens (module docstring)."""
    hook = name.rsplit(".", 1)[-1]
    if name in ("logits", *TRACE_TAPS):
        return cfg.d_vocab
    if hook in ("hook_dots", "hook_attn_scores", "hook_pattern"):
        return cfg.n_heads * T  # (B, n_heads, T, T): one row of keys per head
    if hook == "hook_result":
        return cfg.n_heads * cfg.d_model
    if hook in ("hook_q", "hook_rot_q", "hook_z", "hook_q_normed"):
        return cfg.n_heads * cfg.d_head
    if hook in ("hook_k", "hook_v", "hook_rot_k", "hook_k_normed"):
        return cfg.n_kv_heads * cfg.d_head
    if ".mlp." in name and hook in ("hook_pre", "hook_pre_linear", "hook_post"):
        return cfg.d_mlp
    if hook == "hook_scale":
        return 1
    return cfg.d_model


def trace_bytes(cfg: ModelConfig, T: int, names: Iterable[str], dtype=torch.float32, batch: int = 1) -> int:
    """The bytes of a trace holding `names` (full names) of `batch` sequences of T tokens, in `dtype`."""
    size = item_bytes(dtype)
    return sum(batch * T * width(cfg, n, T) * (4 if n in TRACE_TAPS else size) for n in names)


def pass_bytes(cfg: ModelConfig, T: int, names: Iterable[str], dtype=torch.float32, batch: int = 1) -> int:
    """trace_bytes, plus what the forward pass holds while it runs: the logits, one layer's every
    intermediate, and the logits once more in float32 (module docstring)."""
    size = item_bytes(dtype)
    layer = [n for n in names_of(cfg).order if n.startswith(("blocks.0.", "decoder.blocks.0."))]
    working = sum(batch * T * width(cfg, n, T) * size for n in layer)
    logits = batch * T * cfg.d_vocab * (size + 4) if family_of(cfg).next_token else 0
    return int(MARGIN * (trace_bytes(cfg, T, names, dtype, batch) + working + logits))
