"""Positional information: learned or sinusoidal vectors added to the embeddings, or RoPE.

Without any of them attention sees a bag of tokens: 我打你 and 你打我 hold the same tokens, and
only positions tell them apart.
"""

from __future__ import annotations

import torch
from torch import nn


class LearnedPosition(nn.Module):
    """One trained vector per position: x_t = W_E[token_t] + W_pos[t]."""

    def __init__(self, n_ctx: int, d_model: int):
        super().__init__()
        self.W_pos = nn.Parameter(torch.zeros(n_ctx, d_model))

    def forward(self, offset: int, T: int) -> torch.Tensor:
        """The vectors of positions offset .. offset+T-1."""
        return self.W_pos[offset : offset + T]  # (T, d_model)


def sinusoidal_table(n_ctx: int, d_model: int) -> torch.Tensor:
    """PE[t, 2i] = sin(t / 10000^(2i/d_model)), PE[t, 2i+1] = cos(t / 10000^(2i/d_model))."""
    t = torch.arange(n_ctx, dtype=torch.float64)[:, None]  # (n_ctx, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d_model/2),)
    angle = t / torch.pow(10000.0, two_i / d_model)  # (n_ctx, ceil(d_model/2))
    table = torch.zeros(n_ctx, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table.float()


class SinusoidalPosition(nn.Module):
    """A fixed table of sines and cosines of geometrically spaced frequencies (nothing is trained)."""

    def __init__(self, n_ctx: int, d_model: int):
        super().__init__()
        self.register_buffer("table", sinusoidal_table(n_ctx, d_model), persistent=False)

    def forward(self, offset: int, T: int) -> torch.Tensor:
        return self.table[offset : offset + T]  # (T, d_model)


class RoPE(nn.Module):
    """Rotary position embedding: rotate each pair (x_2i, x_2i+1) of q and k by angle t * theta_i.

    theta_i = base^(-2i/d_head). Since rotations compose, (R_s q) . (R_t k) = q . (R_{t-s} k):
    the score depends on the offset t - s, not on where the pair of tokens sits.
    """

    def __init__(self, n_ctx: int, d_head: int, base: float = 10000.0):
        super().__init__()
        theta = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)  # (d_head/2,)
        angle = torch.arange(n_ctx, dtype=torch.float64)[:, None] * theta  # (n_ctx, d_head/2)
        self.register_buffer("cos", angle.cos().float(), persistent=False)
        self.register_buffer("sin", angle.sin().float(), persistent=False)

    def forward(self, x: torch.Tensor, offset: int | torch.Tensor = 0) -> torch.Tensor:
        """x: (B, n_heads, T, d_head) at positions offset .. offset+T-1; or, with offset a tensor (B,)
        of each row's own position, one token per row (T = 1: a batched decoding step)."""
        if isinstance(offset, torch.Tensor):
            if x.shape[-2] != 1:
                raise ValueError(f"a position per row rotates one token per row; got {x.shape[-2]}")
            cos, sin = self.cos[offset][:, None, None], self.sin[offset][:, None, None]  # (B, 1, 1, d_head/2)
        else:
            T = x.shape[-2]
            cos, sin = self.cos[offset : offset + T], self.sin[offset : offset + T]  # (T, d_head/2)
        pairs = x.unflatten(-1, (-1, 2))  # (B, n_heads, T, d_head/2, 2)
        x0, x1 = pairs[..., 0], pairs[..., 1]
        rotated = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
        return rotated.flatten(-2)  # (B, n_heads, T, d_head)


def make_position(cfg) -> nn.Module | None:
    """The additive positional module for cfg.pos, or None (RoPE lives in attention; 'none' adds nothing)."""
    if cfg.pos == "learned":
        return LearnedPosition(cfg.n_ctx, cfg.d_model)
    if cfg.pos == "sinusoidal":
        return SinusoidalPosition(cfg.n_ctx, cfg.d_model)
    return None
