"""The Transformer block: attention then an MLP, each wrapped in a residual connection and LayerNorm.

    pre-norm  (GPT-2):        x = x + Attn(LN1(x));   x = x + MLP(LN2(x))
    post-norm (2017 paper):   x = LN1(x + Attn(x));   x = LN2(x + MLP(x))

The residual connection lets each sub-layer learn only a change to x; LayerNorm rescales every
token's vector to mean 0 and variance 1 (then a learned scale and shift) so deep stacks stay stable.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .attention import KVCache, MultiHeadAttention
from .tap import tap

_ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),  # GPT-2's "gelu_new"
    "relu": F.relu,
}


def _layer_norm(cfg) -> nn.Module:
    return nn.Identity() if cfg.norm == "none" else nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps, bias=cfg.bias)


class MLP(nn.Module):
    """MLP(x) = act(x W_in + b_in) W_out + b_out, applied to each position on its own."""

    def __init__(self, cfg, layer: int = 0):
        super().__init__()
        self.tap_prefix = f"blocks.{layer}.mlp."
        self.fc_in = nn.Linear(cfg.d_model, cfg.d_mlp, bias=cfg.bias)
        self.fc_out = nn.Linear(cfg.d_mlp, cfg.d_model, bias=cfg.bias)
        self.act = _ACTIVATIONS[cfg.activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pre = self.fc_in(x)  # (B, T, d_mlp)
        tap(self.tap_prefix + "hook_pre", pre)
        post = self.act(pre)
        tap(self.tap_prefix + "hook_post", post)
        return self.fc_out(post)


class Block(nn.Module):
    def __init__(self, cfg, layer: int = 0):
        super().__init__()
        self.pre_norm = cfg.norm != "post"
        self.residual = cfg.residual
        self.ln1 = _layer_norm(cfg)
        self.attn = MultiHeadAttention(cfg, layer)
        self.ln2 = _layer_norm(cfg)
        self.mlp = MLP(cfg, layer)
        self.tap_prefix = f"blocks.{layer}."
        self.p_resid = cfg.dropout_resid

    def skip(self, x: torch.Tensor):
        """The residual connection: what the sub-layer's output is added to (0 without one)."""
        return x if self.residual else 0.0

    def dropout(self, x: torch.Tensor) -> torch.Tensor:
        return F.dropout(x, self.p_resid, self.training) if self.p_resid > 0 else x

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, explicit: bool = False) -> torch.Tensor:
        p = self.tap_prefix
        tap(p + "hook_resid_pre", x)
        if self.pre_norm:  # x = x + Attn(LN1(x)); x = x + MLP(LN2(x))
            h = self.ln1(x)
            tap(p + "ln1.hook_normalized", h)
            a = self.attn(h, cache, explicit)
            tap(p + "hook_attn_out", a)
            x = self.skip(x) + self.dropout(a)
            tap(p + "hook_resid_mid", x)
            h = self.ln2(x)
            tap(p + "ln2.hook_normalized", h)
            m = self.mlp(h)
            tap(p + "hook_mlp_out", m)
            x = self.skip(x) + self.dropout(m)
        else:  # x = LN1(x + Attn(x)); x = LN2(x + MLP(x))
            a = self.attn(x, cache, explicit)
            tap(p + "hook_attn_out", a)
            x = self.ln1(self.skip(x) + self.dropout(a))
            tap(p + "hook_resid_mid", x)
            m = self.mlp(x)
            tap(p + "hook_mlp_out", m)
            x = self.ln2(self.skip(x) + self.dropout(m))
        tap(p + "hook_resid_post", x)
        return x
