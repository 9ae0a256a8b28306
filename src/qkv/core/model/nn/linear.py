"""x W^T + b for a decoding step: the few rows of one step times a transposed copy of W.

nn.Linear keeps W as (d_out, d_in). For the handful of rows a decoding step multiplies, a contiguous
W^T (d_in, d_out) is read row by row, which is faster on a CPU (benchmarks/generate_speed.py measures
by how much). The copy is kept on the Linear itself
and made again when its weight has changed since: every in-place change (an optimizer step, a
load_state_dict) bumps the tensor's version, and a move to another device gives it new storage. So
a stepper always multiplies by the current weights. Only float32 matrices of at most MAX_TRANSPOSED
numbers are copied: a small model that has generated holds its weights twice, a large one does not.
"""

from __future__ import annotations

from functools import cache

import torch
import torch.nn.functional as F
from torch import nn

from qkv.core.machine.cpu import bf16_support


def transposed(linear: nn.Linear) -> torch.Tensor:
    """W^T (d_in, d_out), contiguous: the copy kept on `linear`, made again if its weight changed."""
    w = linear.weight
    key = (w.data_ptr(), w._version, w.device)
    kept = linear.__dict__.get("_transposed")  # a plain attribute: not a parameter, not in the state dict
    if kept is None or kept[0] != key:
        kept = linear.__dict__["_transposed"] = (key, w.detach().t().contiguous())
    return kept[1]


# the largest float32 weight kept transposed: above it (an LLM's matrices, its 151,936-row unembedding) the
# copy would double the memory of the weights for little or nothing (F.linear reads W in place as fast),
# and in bfloat16 the copy is slower than F.linear (benchmarks/llm_speed.py)
MAX_TRANSPOSED = 1 << 20


def linear_step(linear: nn.Linear):
    """The function x (B, d_in) -> x W^T + b (B, d_out) of `linear`, for the weights it holds now."""
    w = linear.weight
    if w.dtype == torch.bfloat16 and w.device.type == "cpu" and one_row_is_faster():
        return one_row_bf16(w.detach(), None if linear.bias is None else linear.bias.detach())
    if w.dtype != torch.float32 or w.numel() > MAX_TRANSPOSED:
        W, b = w.detach(), None if linear.bias is None else linear.bias.detach()
        return lambda x: F.linear(x, W, b)
    W_t, b = transposed(linear), linear.bias
    if b is None:
        return lambda x: torch.mm(x, W_t)
    b = b.detach()
    return lambda x: torch.addmm(b, x, W_t)


@cache
def one_row_is_faster() -> bool:
    """Whether a bfloat16 decoding step of one row goes around oneDNN (one_row_bf16): measured only on a
    CPU with AVX-512 BF16 and no AMX (benchmarks/smollm2_speed.py); with AMX, or with neither, oneDNN
    keeps every product, as nobody has measured that PyTorch's own kernel is faster there."""
    return bf16_support() == "avx512"


def one_row_bf16(W: torch.Tensor, b: torch.Tensor | None):
    """x W^T + b for bfloat16 weights on the CPU. One row (a single text's decoding step) is multiplied
    by PyTorch's own kernel, with oneDNN switched off around the call: for one row oneDNN's bfloat16
    product is half as fast (SmolLM2's 1536 x 576 matrices: 250 us against 130; its 49,152-row
    unembedding 6.9 ms against 3.7; both add up in float32, in their own orders, so a result may differ
    in its last bfloat16 bit). Several rows (a batch) keep oneDNN, faster from 8 rows on. The switch is
    the process's: a model runs one computation at a time (the server holds a lock around each)."""
    enabled, switch = torch._C._get_mkldnn_enabled, torch._C._set_mkldnn_enabled

    def step(x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] != 1 or not enabled():
            return F.linear(x, W, b)
        switch(False)
        try:
            return F.linear(x, W, b)
        finally:
            switch(True)

    return step
