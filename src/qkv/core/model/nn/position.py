"""Positional information: learned or sinusoidal vectors added to the embeddings, or RoPE.

Without any of them attention sees a bag of tokens: 我打你 and 你打我 hold the same tokens, and
only positions tell them apart.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from qkv.core.spec.config import ModelConfig


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

    table: torch.Tensor  # (n_ctx, d_model), a buffer

    def __init__(self, n_ctx: int, d_model: int):
        super().__init__()
        self.register_buffer("table", sinusoidal_table(n_ctx, d_model), persistent=False)

    def reset_buffers(self) -> None:
        """Compute the table again (a model built on the meta device, then given memory, has none)."""
        self.table = sinusoidal_table(*self.table.shape).to(self.table.device)

    def forward(self, offset: int, T: int) -> torch.Tensor:
        return self.table[offset : offset + T]  # (T, d_model)


def rope_frequencies(d_head: int, base: float = 10000.0, scaling: dict | None = None) -> torch.Tensor:
    """theta_i = base^(-2i/d_head) for i < d_head/2 (float64), and Llama 3's scaling when given.

    Llama 3 stretches the slow rotations to read a longer context than it was trained on: a
    frequency whose wavelength 2 pi / theta is longer than original_max_position_embeddings /
    low_freq_factor is divided by `factor`; one shorter than .../high_freq_factor is kept; those
    between move smoothly from one to the other."""
    # on the CPU whatever device a model is being built on (the meta device of hub/read.py's _built)
    theta = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64, device="cpu") / d_head)  # (d_head/2,)
    if scaling is None:
        return theta
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    trained = scaling["original_max_position_embeddings"]
    wavelength = 2 * math.pi / theta
    smooth = ((trained / wavelength - low) / (high - low)).clamp(0, 1)  # 0: slow (divided), 1: fast (kept)
    return (1 - smooth) * theta / factor + smooth * theta


class RoPE(nn.Module):
    """Rotary position embedding: rotate pairs of q's and k's dimensions by angle t * theta_i.

    theta_i = base^(-2i/d_head). Since rotations compose, (R_s q) . (R_t k) = q . (R_{t-s} k):
    the score depends on the offset t - s, not on where the pair of tokens sits. Two layouts of the
    pairs: "adjacent" rotates (x_2i, x_2i+1), as the RoFormer paper writes it; "halves" rotates
    (x_i, x_i+d_head/2), as Llama, Mistral and Qwen do (transformers' rotate_half). The cos and sin of
    t * theta are computed in float64 for the positions a text reaches, and kept (growing, at most n_ctx).
    Partial rotation (GPT-NeoX, Phi-3: cfg.rotary_dim): a RoPE of d_head = rotary_dim given wider heads
    rotates their first rotary_dim dimensions, in its layout, and passes the rest through unchanged.
    """

    def __init__(
        self, n_ctx: int, d_head: int, base: float = 10000.0, layout: str = "adjacent", scaling: dict | None = None
    ):
        super().__init__()
        # theta and the table are plain tensors, not buffers: model.to(torch.bfloat16) must not round the
        # angles (their float64 is what keeps positions apart), and a model built on the meta device has them
        self.theta = rope_frequencies(d_head, base, scaling)  # (d_head/2,), float64, on the CPU
        self.n_ctx, self.halves = n_ctx, layout == "halves"
        self._table: tuple[torch.Tensor, torch.Tensor] | None = None  # (cos, sin), each (length, d_head/2)

    def table(self, length: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin of t * theta for t < length (at least), float32, on `device`."""
        kept = self._table
        if kept is None or kept[0].shape[0] < length or kept[0].device != torch.device(device or "cpu"):
            n = min(self.n_ctx, max(length, 64, 2 * kept[0].shape[0] if kept is not None else 0))
            # ordinary tensors even when first asked for under inference_mode (generation): training reads them later
            with torch.inference_mode(False), torch.no_grad():
                angle = torch.arange(n, dtype=torch.float64, device="cpu")[:, None] * self.theta  # (n, d_head/2)
                kept = self._table = (angle.cos().float().to(device), angle.sin().float().to(device))
        return kept

    def forward(self, x: torch.Tensor, offset: int | torch.Tensor = 0, upto: int | None = None) -> torch.Tensor:
        """x: (B, n_heads, T, d_head) at positions offset .. offset+T-1; or, with offset a tensor (B,)
        of each row's own position (each below `upto`, default n_ctx), one token per row (T = 1: a
        batched decoding step)."""
        if isinstance(offset, torch.Tensor):
            if x.shape[-2] != 1:
                raise ValueError(f"a position per row rotates one token per row; got {x.shape[-2]}")
            cos, sin = self.table(upto or self.n_ctx, x.device)
            cos, sin = cos[offset][:, None, None], sin[offset][:, None, None]  # (B, 1, 1, d_head/2)
        else:
            T = x.shape[-2]
            cos, sin = (t[offset : offset + T] for t in self.table(offset + T, x.device))  # (T, d_head/2)
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
        d_rot = 2 * cos.shape[-1]
        if x.shape[-1] > d_rot:  # partial: (B, n_heads, T, rotary_dim) rotated, the other dimensions as they are
            return torch.cat((self.rotate(x[..., :d_rot], cos, sin), x[..., d_rot:]), dim=-1)
        return self.rotate(x, cos, sin)

    def rotate(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """Each pair (a, b) of x's dimensions -> (a cos - b sin, a sin + b cos), in this RoPE's layout."""
        if self.halves:
            a, b = x.chunk(2, dim=-1)  # (B, n_heads, T, d_head/2) each: the pairs (x_i, x_i+d_head/2)
            return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
        pairs = x.unflatten(-1, (-1, 2))  # (B, n_heads, T, d_head/2, 2)
        a, b = pairs[..., 0], pairs[..., 1]
        rotated = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1)
        return rotated.flatten(-2)  # (B, n_heads, T, d_head)


def make_position(cfg: ModelConfig) -> nn.Module | None:
    """The additive positional module for cfg.pos, or None (RoPE lives in attention; 'none' adds nothing)."""
    if cfg.pos == "learned":
        return LearnedPosition(cfg.n_ctx, cfg.d_model)
    if cfg.pos == "sinusoidal":
        return SinusoidalPosition(cfg.n_ctx, cfg.d_model)
    return None
