"""LayerNorm: each token's vector rescaled to mean 0 and variance 1, then a learned scale and shift;
RMSNorm (Llama, Qwen): rescaled to a root mean square of 1, then a learned scale, nothing centred.

    scale      = sqrt(mean((x - mean(x))^2) + eps)     one number per token     hook_scale (B, T, 1)
    normalized = (x - mean(x)) / scale                 mean 0, variance ~1      hook_normalized
    LN(x)      = normalized * weight + bias            the learned scale, shift hook_out

    scale      = sqrt(mean(x^2) + eps)                  RMSNorm: no mean is taken   hook_scale (B, T, 1)
    normalized = x / scale                                                       hook_normalized
    RMS(x)     = normalized * weight                                             hook_out

The names and meanings are TransformerLens 4's. `layer_norm` below is the truth; torch's fused
layer_norm kernel is the faster path, taken unless a trace records or the model runs with
explicit=True; a test proves the two equal. `stepper()` is the fused path alone, for decoding.
"""

from __future__ import annotations

import torch
from torch import nn

from qkv.core.see.tap import explicit, tap, untapped
from qkv.core.spec.config import ModelConfig

# a norm's taps under its name (<name>.hook_scale, ...), in the order it records them; the fused kernel
# forms none of them, so a hook on any takes the written-out formula (see/names.py: WRITTEN_OUT)
NORM_TAPS = ("hook_scale", "hook_normalized", "hook_out")


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, eps: float, tap=untapped):
    """LN(x) over the last dimension, written out. Returns (out, normalized, scale).
    `tap(name, t)` sees (and may replace) hook_scale, hook_normalized and hook_out on the way."""
    centered = x - x.mean(-1, keepdim=True)
    scale = tap("hook_scale", (centered.pow(2).mean(-1, keepdim=True) + eps).sqrt())  # (..., 1): biased std
    normalized = tap("hook_normalized", centered / scale)
    out = normalized * weight
    return tap("hook_out", out if bias is None else out + bias), normalized, scale


class LayerNorm(nn.Module):
    """LN(x) = (x - mean) / sqrt(var + eps) * weight + bias, recorded as <name>.hook_scale,
    <name>.hook_normalized and <name>.hook_out. Its parameters are named as nn.LayerNorm's."""

    TAPS = WRITTEN_OUT = NORM_TAPS

    def __init__(self, d_model: int, eps: float = 1e-5, bias: bool = True, name: str = "ln"):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model)) if bias else None  # None: no shift (bias=False)
        self.eps = eps
        self.name = name

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not explicit():
            return self.fused(x)
        return layer_norm(x, self.weight, self.bias, self.eps, self.tap)[0]

    def tap(self, name: str, t: torch.Tensor) -> torch.Tensor:
        return tap(f"{self.name}.{name}", t)

    def tap_names(self) -> list[str]:
        return [f"{self.name}.{hook}" for hook in self.TAPS]

    def fused(self, x: torch.Tensor) -> torch.Tensor:
        """LN(x) by the fused kernel (F.layer_norm's, without its Python checks), recording nothing."""
        return torch.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)

    def stepper(self):
        """fused, as a function of x (decoding: see GPT.stepper)."""
        shape, weight, bias, eps = self.weight.shape, self.weight, self.bias, self.eps
        return lambda x: torch.layer_norm(x, shape, weight, bias, eps)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}, bias={self.bias is not None}, name={self.name!r}"


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float, tap=untapped):
    """RMSNorm(x) over the last dimension, written out. Returns (out, normalized, scale); `tap` as layer_norm's.

    As transformers' Llama and Qwen, the scale is computed (and tapped, as TransformerLens taps it) in
    float32 whatever x's dtype, and the normalized vector is cast back to it before the weight
    multiplies (this matters in bfloat16)."""
    x32 = x.float()
    scale = tap("hook_scale", (x32.pow(2).mean(-1, keepdim=True) + eps).sqrt())  # (..., 1), float32: the RMS
    normalized = tap("hook_normalized", (x32 / scale).to(x.dtype))
    return tap("hook_out", normalized * weight), normalized, scale


class RMSNorm(nn.Module):
    """RMS(x) = x / sqrt(mean(x^2) + eps) * weight, recorded as <name>.hook_scale, <name>.hook_normalized
    and <name>.hook_out (name None: nothing is recorded; attention records a normed q and k itself).
    Its parameter is named as transformers' LlamaRMSNorm's (weight; no bias)."""

    TAPS = WRITTEN_OUT = NORM_TAPS

    def __init__(self, d: int, eps: float = 1e-6, name: str | None = "ln"):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps
        self.name = name

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not explicit():
            return self.fused(x)
        return rms_norm(x, self.weight, self.eps, untapped if self.name is None else self.tap)[0]

    def tap(self, name: str, t: torch.Tensor) -> torch.Tensor:
        return tap(f"{self.name}.{name}", t)

    def tap_names(self) -> list[str]:
        return [] if self.name is None else [f"{self.name}.{hook}" for hook in self.TAPS]

    def fused(self, x: torch.Tensor) -> torch.Tensor:
        """RMS(x) by torch's fused kernel in float32, recording nothing (the same rounding as rms_norm)."""
        shape = self.weight.shape
        return torch.rms_norm(x.float(), shape, None, self.eps).to(x.dtype) * self.weight

    def stepper(self):
        """fused, as a function of x (decoding: see GPT.stepper)."""
        return self.fused

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}, name={self.name!r}"


class NoNorm(nn.Identity):
    """Where a block has no LayerNorm (norm="none", or a post-norm GPT's final one): x itself."""

    def stepper(self):
        return lambda x: x

    def tap_names(self) -> list[str]:
        return []


AnyNorm = LayerNorm | RMSNorm | NoNorm  # what make_norm builds (each has a stepper)


def make_norm(cfg: ModelConfig, name: str) -> AnyNorm:
    """A LayerNorm named `name` (its hooks' prefix), an RMSNorm for norm="rms", or the identity for norm="none"."""
    if cfg.norm == "rms":
        return RMSNorm(cfg.d_model, cfg.ln_eps, name)
    return NoNorm() if cfg.norm == "none" else LayerNorm(cfg.d_model, cfg.ln_eps, cfg.bias, name)
