"""x W^T + b for a decoding step: the few rows of one step times a transposed copy of W.

nn.Linear keeps W as (d_out, d_in). For the handful of rows a decoding step multiplies, a contiguous
W^T (d_in, d_out) is read row by row: about 1.3x faster on an x86 CPU with MKL at 8 rows, and 10-20%
at one row at `small`'s sizes (benchmarks/generate_speed.py). The copy is kept on the Linear itself
and made again when its weight has changed since: every in-place change (an optimizer step, a
load_state_dict) bumps the tensor's version, and a move to another device gives it new storage. So
a stepper always multiplies by the current weights, and a model that has generated holds its
weights twice.
"""

from __future__ import annotations

import torch
from torch import nn


def transposed(linear: nn.Linear) -> torch.Tensor:
    """W^T (d_in, d_out), contiguous: the copy kept on `linear`, made again if its weight changed."""
    w = linear.weight
    key = (w.data_ptr(), w._version, w.device)
    kept = linear.__dict__.get("_transposed")  # a plain attribute: not a parameter, not in the state dict
    if kept is None or kept[0] != key:
        kept = linear.__dict__["_transposed"] = (key, w.detach().t().contiguous())
    return kept[1]


def linear_step(linear: nn.Linear):
    """The function x (B, d_in) -> x W^T + b (B, d_out) of `linear`, for the weights it holds now."""
    W_t, b = transposed(linear), linear.bias
    if b is None:
        return lambda x: torch.mm(x, W_t)
    b = b.detach()
    return lambda x: torch.addmm(b, x, W_t)
