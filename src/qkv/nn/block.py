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

_ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),  # GPT-2's "gelu_new"
    "relu": F.relu,
}


class MLP(nn.Module):
    """MLP(x) = act(x W_in + b_in) W_out + b_out, applied to each position on its own."""

    def __init__(self, cfg):
        super().__init__()
        self.fc_in = nn.Linear(cfg.d_model, cfg.d_mlp, bias=cfg.bias)
        self.fc_out = nn.Linear(cfg.d_mlp, cfg.d_model, bias=cfg.bias)
        self.act = _ACTIVATIONS[cfg.activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc_out(self.act(self.fc_in(x)))


class Block(nn.Module):
    def __init__(self, cfg, layer: int = 0):
        super().__init__()
        self.pre_norm = cfg.norm == "pre"
        self.ln1 = nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps, bias=cfg.bias)
        self.attn = MultiHeadAttention(cfg, layer)
        self.ln2 = nn.LayerNorm(cfg.d_model, eps=cfg.ln_eps, bias=cfg.bias)
        self.mlp = MLP(cfg)
        self.p_resid = cfg.dropout_resid

    def dropout(self, x: torch.Tensor) -> torch.Tensor:
        return F.dropout(x, self.p_resid, self.training) if self.p_resid > 0 else x

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, explicit: bool = False) -> torch.Tensor:
        if self.pre_norm:
            x = x + self.dropout(self.attn(self.ln1(x), cache, explicit))
            x = x + self.dropout(self.mlp(self.ln2(x)))
        else:
            x = self.ln1(x + self.dropout(self.attn(x, cache, explicit)))
            x = self.ln2(x + self.dropout(self.mlp(x)))
        return x
