"""The Transformer block: attention then an MLP, each wrapped in a residual connection and LayerNorm.

    pre-norm  (GPT-2):        x = x + Attn(LN1(x));   x = x + MLP(LN2(x))
    post-norm (2017 paper):   x = LN1(x + Attn(x));   x = LN2(x + MLP(x))

The residual connection lets each sub-layer learn only a change to x; LayerNorm rescales every
token's vector to mean 0 and variance 1 (then a learned scale and shift) so deep stacks stay stable.
norm="none" is the pre-norm block with LN the identity. residual=False (an experiment: what the
connection is for) has its own block classes, so the standard ones read like their formula.
`make_block` picks the class for a config.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .attention import KVCache, MultiHeadAttention
from .layernorm import make_norm
from .tap import tap

_ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),  # GPT-2's "gelu_new"
    "relu": F.relu,
}


class MLP(nn.Module):
    """MLP(x) = act(x W_in + b_in) W_out + b_out, applied to each position on its own.

    The output is recorded as blocks.L.hook_mlp_out; residual dropout (training only) applies after that.
    """

    def __init__(self, cfg, layer: int = 0):
        super().__init__()
        self.tap_prefix = f"blocks.{layer}."
        self.fc_in = nn.Linear(cfg.d_model, cfg.d_mlp, bias=cfg.bias)
        self.fc_out = nn.Linear(cfg.d_mlp, cfg.d_model, bias=cfg.bias)
        self.act = _ACTIVATIONS[cfg.activation]
        self.dropout_resid = cfg.dropout_resid

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pre = tap(self.tap_prefix + "mlp.hook_pre", self.fc_in(x))  # (B, T, d_mlp)
        post = tap(self.tap_prefix + "mlp.hook_post", self.act(pre))
        out = tap(self.tap_prefix + "hook_mlp_out", self.fc_out(post))  # (B, T, d_model)
        return F.dropout(out, self.dropout_resid, self.training) if self.dropout_resid > 0 else out


class Block(nn.Module):
    """What every block holds: ln1, attn, ln2, mlp. Subclasses say how they connect."""

    def __init__(self, cfg, layer: int = 0):
        super().__init__()
        self.ln1 = make_norm(cfg, f"blocks.{layer}.ln1")
        self.attn = MultiHeadAttention(cfg, layer)
        self.ln2 = make_norm(cfg, f"blocks.{layer}.ln2")
        self.mlp = MLP(cfg, layer)
        self.tap_prefix = f"blocks.{layer}."

    # forward(x, cache=None, key_mask=None): key_mask (B, T) is False at padding (see MultiHeadAttention)

    def tap(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """Record x as blocks.L.<name> while a trace records."""
        return tap(self.tap_prefix + name, x)


class PreNormBlock(Block):
    """GPT-2's block (and norm="none", where LN is the identity)."""

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None) -> torch.Tensor:
        self.tap("hook_resid_pre", x)
        x = x + self.attn(self.ln1(x), cache, key_mask)
        self.tap("hook_resid_mid", x)
        x = x + self.mlp(self.ln2(x))
        self.tap("hook_resid_post", x)
        return x


class PostNormBlock(Block):
    """The 2017 paper's block: LayerNorm after each residual sum."""

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None) -> torch.Tensor:
        self.tap("hook_resid_pre", x)
        x = self.ln1(x + self.attn(x, cache, key_mask))
        self.tap("hook_resid_mid", x)
        x = self.ln2(x + self.mlp(x))
        self.tap("hook_resid_post", x)
        return x


class PreNormBlockNoResidual(Block):
    """residual=False: x = Attn(LN1(x)); x = MLP(LN2(x)). Nothing is added back."""

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None) -> torch.Tensor:
        self.tap("hook_resid_pre", x)
        x = self.attn(self.ln1(x), cache, key_mask)
        self.tap("hook_resid_mid", x)
        x = self.mlp(self.ln2(x))
        self.tap("hook_resid_post", x)
        return x


class PostNormBlockNoResidual(Block):
    """residual=False with post-norm: x = LN1(Attn(x)); x = LN2(MLP(x))."""

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None) -> torch.Tensor:
        self.tap("hook_resid_pre", x)
        x = self.ln1(self.attn(x, cache, key_mask))
        self.tap("hook_resid_mid", x)
        x = self.ln2(self.mlp(x))
        self.tap("hook_resid_post", x)
        return x


def make_block(cfg, layer: int = 0) -> Block:
    """The block class for cfg.norm and cfg.residual."""
    post = cfg.norm == "post"
    if cfg.residual:
        return (PostNormBlock if post else PreNormBlock)(cfg, layer)
    return (PostNormBlockNoResidual if post else PreNormBlockNoResidual)(cfg, layer)
