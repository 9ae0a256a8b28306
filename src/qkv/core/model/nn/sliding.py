"""The attention parts of Gemma 2 / Gemma 3 and OLMo-2 that Llama lacks: a sliding window, soft-capping,
a RoPE of its own per layer, and the q/k norm over a whole projection.

    sliding window   query i (at absolute position a) reads keys a - window + 1 .. a: its own and the
                     window - 1 before it, no older one (Mistral, Gemma's local layers)
    soft-capping     s -> cap * tanh(s / cap): near s for |s| << cap, never beyond +-cap (Gemma 2's
                     attention scores, cap 50, and final logits, cap 30), so no score runs away
    two RoPE bases   Gemma 3's local layers rotate with base rope_base_local (10,000), its global ones
                     with rope_base (1,000,000), their frequencies divided by rope_linear_factor

MultiHeadAttention (attention.py) builds its mask, its RoPE and its q/k norms from these; the written-out
formula (attention.attention) is the truth and the fused kernel is tested equal to it. torch's fused
kernel has no soft-cap, so a soft-capped attention always computes the written-out formula.
"""

from __future__ import annotations

import torch

from qkv.core.model.nn.layernorm import RMSNorm
from qkv.core.model.nn.position import RoPE
from qkv.core.spec.config import ModelConfig


def window_mask(T_q: int, T_k: int, window: int | None = None, device=None) -> torch.Tensor:
    """(T_q, T_k) bool, True = may attend: query i, at absolute position a = T_k - T_q + i, reads keys
    j <= a (causal) and, with a window, j > a - window (the window's keys: its own and window - 1 before)."""
    mask = torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril(diagonal=T_k - T_q)  # j - i <= T_k - T_q
    if window is not None:
        mask = mask.triu(diagonal=T_k - T_q - window + 1)  # j - i >= T_k - T_q - window + 1
    return mask


def step_window(length: int, window: int, device=None) -> torch.Tensor:
    """(1, 1, 1, length) bool for one new query in cache slot length - 1: the slots within the window."""
    return (torch.arange(length, device=device) > length - 1 - window)[None, None, None, :]


def soft_cap(x: torch.Tensor, cap: float | None) -> torch.Tensor:
    """cap * tanh(x / cap) (None: x itself): x where |x| << cap, never beyond +-cap."""
    return x if cap is None else torch.tanh(x / cap) * cap


def layer_rope(cfg: ModelConfig, layer: int) -> RoPE:
    """Layer `layer`'s RoPE: a sliding-window layer's base is rope_base_local (when set: then unscaled), never
    linearly scaled; a global layer's is rope_base, its frequencies scaled (Llama 3's rope_scaling, then divided
    by rope_linear_factor, as Gemma 3 scales its global layers only)."""
    slides = cfg.slides(layer)
    local = slides and cfg.rope_base_local is not None
    base = cfg.rope_base_local if local and cfg.rope_base_local is not None else cfg.rope_base
    scaling = None if local else cfg.rope_scaling
    factors = None if local else cfg.rope_factors  # Phi-3's LongRoPE (a model with no sliding layers)
    rope = RoPE(cfg.n_ctx, cfg.rotary_dim, base, cfg.rope_layout, scaling, factors, cfg.rope_attention_factor)
    if not slides and cfg.rope_linear_factor != 1.0:  # linear scaling: position t rotates as t / factor would
        rope.theta = rope.theta / cfg.rope_linear_factor
    return rope


def qk_norms(cfg: ModelConfig) -> tuple[RMSNorm, RMSNorm] | tuple[None, None]:
    """q_norm and k_norm (cfg.qk_norm): over each head's d_head, or (qk_norm_width "all") over the whole
    projection, n_heads * d_head for q and n_kv_heads * d_head for k."""
    if not cfg.qk_norm:
        return None, None
    if cfg.qk_norm_width == "all":
        q_width, k_width = cfg.n_heads * cfg.d_head, cfg.n_kv_heads * cfg.d_head
    else:
        q_width = k_width = cfg.d_head
    return RMSNorm(q_width, cfg.ln_eps, None), RMSNorm(k_width, cfg.ln_eps, None)


def norm_heads(norm, t: torch.Tensor, whole: bool) -> torch.Tensor:
    """norm over each head of t (B, heads, T, d_head), or (whole) over all heads' dimensions of a token
    together, the heads' vectors side by side as the projection made them."""
    if not whole:
        return norm(t)
    B, h, T, d = t.shape
    flat = t.transpose(1, 2).reshape(B, T, h * d)  # (B, T, heads * d_head)
    return norm(flat).view(B, T, h, d).transpose(1, 2)  # (B, heads, T, d_head)
