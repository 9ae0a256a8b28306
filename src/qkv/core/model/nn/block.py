"""The Transformer block: attention then an MLP, each wrapped in a residual connection and LayerNorm.

    pre-norm  (GPT-2, Llama): x = x + Attn(LN1(x));   x = x + MLP(LN2(x))   (Llama: LN is RMSNorm)
    post-norm (2017 paper):   x = LN1(x + Attn(x));   x = LN2(x + MLP(x))

The residual connection lets each sub-layer learn only a change to x; LayerNorm rescales every
token's vector to mean 0 and variance 1 (then a learned scale and shift) so deep stacks stay stable.
norm="none" is the pre-norm block with LN the identity. residual=False (an experiment: what the
connection is for) has its own block classes, so the standard ones read like their formula.
`make_block` picks the class for a config. Each block's `stepper()` is its forward for one new
token per row while decoding, from its modules' own steppers (MultiHeadAttention.stepper), tested
equal to it.

An encoder-decoder's decoder block has a third sub-layer between the two, cross-attention, whose
keys and values come from the encoder's output (`memory`):

    pre-norm:   x = x + Attn(LN1(x));   x = x + CrossAttn(LN2(x), memory);   x = x + MLP(LN3(x))
    post-norm:  x = LN1(x + Attn(x));   x = LN2(x + CrossAttn(x, memory));   x = LN3(x + MLP(x))

(torch.nn.TransformerDecoderLayer's norm1, norm2, norm3; TransformerLens's names for T5's blocks.)
`scope` ("encoder." or "decoder.") starts every tap name of a block in an encoder-decoder.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from qkv.core.model.nn.attention import KVCache, MultiHeadAttention
from qkv.core.model.nn.layernorm import AnyNorm, make_norm
from qkv.core.model.nn.linear import linear_step
from qkv.core.see.names import declared
from qkv.core.see.tap import tap
from qkv.core.spec.config import ModelConfig

_ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),  # GPT-2's "gelu_new"
    "relu": F.relu,
    "silu": F.silu,  # x * sigmoid(x): the "Swish" of SwiGLU
    "relu2": lambda x: F.relu(x).square(),  # relu(x)^2: ReLU squared (Primer; the modded-nanogpt speedrun)
}


class MLP(nn.Module):
    """MLP(x) = act(x W_in + b_in) W_out + b_out, applied to each position on its own.

    The output is recorded as blocks.L.hook_mlp_out; residual dropout (training only) applies after that.
    """

    TAPS = ("mlp.hook_pre", "mlp.hook_post", "hook_mlp_out")  # under {scope}blocks.L., in the order of forward
    out_hook = "hook_mlp_out"  # its output's name (a block with a norm after the MLP: mlp.hook_out, nn/sandwich.py)

    def __init__(self, cfg: ModelConfig, layer: int = 0, scope: str = ""):
        super().__init__()
        self.tap_prefix = f"{scope}blocks.{layer}."
        self.fc_in = nn.Linear(cfg.d_model, cfg.d_mlp, bias=cfg.bias)
        self.fc_out = nn.Linear(cfg.d_mlp, cfg.d_model, bias=cfg.bias)
        self.act = _ACTIVATIONS[cfg.activation]
        self.dropout_resid = cfg.dropout_resid

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pre = tap(self.tap_prefix + "mlp.hook_pre", self.fc_in(x))  # (B, T, d_mlp)
        post = tap(self.tap_prefix + "mlp.hook_post", self.act(pre))
        out = tap(self.tap_prefix + self.out_hook, self.fc_out(post))  # (B, T, d_model)
        return F.dropout(out, self.dropout_resid, self.training) if self.dropout_resid > 0 else out

    def tap_names(self) -> list[str]:
        return [self.tap_prefix + hook for hook in self.TAPS[:-1]] + [self.tap_prefix + self.out_hook]

    def stepper(self):
        """forward in evaluation mode, recording nothing, as a function of x (B, d_model) -> (B, d_model)."""
        fc_in, fc_out, act = linear_step(self.fc_in), linear_step(self.fc_out), self.act
        return lambda x: fc_out(act(fc_in(x)))


class GatedMLP(nn.Module):
    """GatedMLP(x) = (act(x W_gate) * (x W_in)) W_out: SwiGLU with act = silu (Llama, Mistral, Qwen).

    One product decides how much of each hidden unit passes (the gate), the other what passes.
    Recorded under TransformerLens's names: mlp.hook_pre = x W_gate (before act), mlp.hook_pre_linear
    = x W_in, mlp.hook_post = act(pre) * pre_linear, then hook_mlp_out."""

    TAPS = ("mlp.hook_pre", "mlp.hook_pre_linear", "mlp.hook_post", "hook_mlp_out")
    out_hook = MLP.out_hook
    tap_names = MLP.tap_names

    def __init__(self, cfg: ModelConfig, layer: int = 0, scope: str = ""):
        super().__init__()
        self.tap_prefix = f"{scope}blocks.{layer}."
        self.fc_gate = nn.Linear(cfg.d_model, cfg.d_mlp, bias=cfg.bias)
        self.fc_in = nn.Linear(cfg.d_model, cfg.d_mlp, bias=cfg.bias)
        self.fc_out = nn.Linear(cfg.d_mlp, cfg.d_model, bias=cfg.bias)
        self.act = _ACTIVATIONS[cfg.activation]
        self.dropout_resid = cfg.dropout_resid

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.tap_prefix
        pre = tap(p + "mlp.hook_pre", self.fc_gate(x))  # (B, T, d_mlp)
        pre_linear = tap(p + "mlp.hook_pre_linear", self.fc_in(x))  # (B, T, d_mlp)
        post = tap(p + "mlp.hook_post", self.act(pre) * pre_linear)
        out = tap(p + self.out_hook, self.fc_out(post))  # (B, T, d_model)
        return F.dropout(out, self.dropout_resid, self.training) if self.dropout_resid > 0 else out

    def stepper(self):
        """forward in evaluation mode, recording nothing, as a function of x (B, d_model) -> (B, d_model)."""
        gate, fc_in, fc_out = (linear_step(m) for m in (self.fc_gate, self.fc_in, self.fc_out))
        act = self.act
        return lambda x: fc_out(act(gate(x)) * fc_in(x))


def make_mlp(cfg: ModelConfig, layer: int = 0, scope: str = "") -> MLP | GatedMLP:
    """The MLP of cfg.mlp: the 2017 paper's and GPT-2's ("plain"), or SwiGLU's ("gated"); "none" has none."""
    return (GatedMLP if cfg.mlp == "gated" else MLP)(cfg, layer, scope)


class Block(nn.Module):
    """What every block holds: ln1, attn, ln2, mlp (None with mlp="none"). Subclasses say how they connect,
    and `tap_steps()` what each records, in the order of its forward: its own residual stream's names
    and its sub-modules (see/names.py)."""

    SHORTHAND = ("attn", "mlp")  # what trace["pattern", L] reaches besides the names right under the block

    def __init__(self, cfg: ModelConfig, layer: int = 0, scope: str = "", causal: bool | None = None):
        super().__init__()
        self.tap_prefix = p = f"{scope}blocks.{layer}."
        self.ln1 = make_norm(cfg, p + "ln1")
        self.attn = MultiHeadAttention(cfg, layer, scope, causal=causal)
        mlp = cfg.mlp != "none"  # an attention-only block has neither
        self.ln2 = make_norm(cfg, p + "ln2") if mlp else None
        self.mlp = make_mlp(cfg, layer, scope) if mlp else None

    # forward(x, cache=None, key_mask=None): key_mask (B, T) is False at padding (see MultiHeadAttention)
    # stepper() -> step(x, cache, positions=None, key_mask=None): forward for one new token per row,
    # x (B, d_model), from its modules' own steppers (decoding; see GPT.stepper)

    def tap_steps(self) -> tuple:
        """Pre-norm: x + Attn(LN1(x)), then x + MLP(LN2(x)); each sum recorded after it."""
        return ("hook_resid_pre", self.ln1, self.attn, "hook_resid_mid", self.ln2, self.mlp, "hook_resid_post")

    def tap_names(self) -> list[str]:
        return declared(self.tap_prefix, self.tap_steps())

    def tap(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """Tap x as blocks.L.<name>: recorded while a trace records; x or a hook's replacement."""
        return tap(self.tap_prefix + name, x)


class BlockWithMLP(Block):
    """A block with an MLP sub-layer: every block class but AttentionOnlyBlock (make_block picks them for a
    cfg.mlp other than "none"), so its ln2 and mlp are modules, never None."""

    ln2: AnyNorm
    mlp: MLP | GatedMLP

    def steppers(self):
        return self.ln1.stepper(), self.attn.stepper(), self.ln2.stepper(), self.mlp.stepper()


class PreNormBlock(BlockWithMLP):
    """GPT-2's block (and norm="none", where LN is the identity)."""

    def forward(
        self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        x = self.tap("hook_resid_pre", x)
        x = x + self.attn(self.ln1(x), cache, key_mask)
        x = self.tap("hook_resid_mid", x)
        x = x + self.mlp(self.ln2(x))
        x = self.tap("hook_resid_post", x)
        return x

    def stepper(self):
        ln1, attn, ln2, mlp = self.steppers()

        def step(x, cache, positions=None, key_mask=None):
            x = x + attn(ln1(x), cache, positions, key_mask)
            return x + mlp(ln2(x))

        return step


class PostNormBlock(BlockWithMLP):
    """The 2017 paper's block: LayerNorm after each residual sum."""

    def tap_steps(self) -> tuple:
        """LN1(x + Attn(x)), then LN2(x + MLP(x)): each LayerNorm after its sub-layer."""
        return ("hook_resid_pre", self.attn, self.ln1, "hook_resid_mid", self.mlp, self.ln2, "hook_resid_post")

    def forward(
        self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        x = self.tap("hook_resid_pre", x)
        x = self.ln1(x + self.attn(x, cache, key_mask))
        x = self.tap("hook_resid_mid", x)
        x = self.ln2(x + self.mlp(x))
        x = self.tap("hook_resid_post", x)
        return x

    def stepper(self):
        ln1, attn, ln2, mlp = self.steppers()

        def step(x, cache, positions=None, key_mask=None):
            x = ln1(x + attn(x, cache, positions, key_mask))
            return ln2(x + mlp(x))

        return step


class PreNormBlockNoResidual(BlockWithMLP):
    """residual=False: x = Attn(LN1(x)); x = MLP(LN2(x)). Nothing is added back."""

    def forward(
        self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        x = self.tap("hook_resid_pre", x)
        x = self.attn(self.ln1(x), cache, key_mask)
        x = self.tap("hook_resid_mid", x)
        x = self.mlp(self.ln2(x))
        x = self.tap("hook_resid_post", x)
        return x

    def stepper(self):
        ln1, attn, ln2, mlp = self.steppers()

        def step(x, cache, positions=None, key_mask=None):
            x = attn(ln1(x), cache, positions, key_mask)
            return mlp(ln2(x))

        return step


class PostNormBlockNoResidual(BlockWithMLP):
    """residual=False with post-norm: x = LN1(Attn(x)); x = LN2(MLP(x))."""

    tap_steps = PostNormBlock.tap_steps

    def forward(
        self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        x = self.tap("hook_resid_pre", x)
        x = self.ln1(self.attn(x, cache, key_mask))
        x = self.tap("hook_resid_mid", x)
        x = self.ln2(self.mlp(x))
        x = self.tap("hook_resid_post", x)
        return x

    def stepper(self):
        ln1, attn, ln2, mlp = self.steppers()

        def step(x, cache, positions=None, key_mask=None):
            x = ln1(attn(x, cache, positions, key_mask))
            return ln2(mlp(x))

        return step


class AttentionOnlyBlock(Block):
    """mlp="none": x = x + Attn(LN1(x)), nothing else (the toy model of the induction-heads papers).
    hook_resid_mid and hook_resid_post are the same stream: there is no MLP between them (ln2 and mlp are None)."""

    def tap_steps(self) -> tuple:
        return ("hook_resid_pre", self.ln1, self.attn, "hook_resid_mid", "hook_resid_post")

    def forward(
        self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        x = self.tap("hook_resid_pre", x)
        x = x + self.attn(self.ln1(x), cache, key_mask)
        x = self.tap("hook_resid_mid", x)
        return self.tap("hook_resid_post", x)

    def stepper(self):
        ln1, attn = self.ln1.stepper(), self.attn.stepper()
        return lambda x, cache, positions=None, key_mask=None: x + attn(ln1(x), cache, positions, key_mask)


class DecoderBlock(BlockWithMLP):
    """An encoder-decoder's decoder block: causal self-attention, cross-attention, MLP (see the module docstring).
    ln2 normalises before cross-attention here and ln3 before the MLP."""

    def __init__(self, cfg: ModelConfig, layer: int = 0, scope: str = "decoder."):
        super().__init__(cfg, layer, scope, causal=True)
        self.cross_attn = MultiHeadAttention(cfg, layer, scope, name="cross_attn", causal=False, cross=True)
        self.ln3 = make_norm(cfg, self.tap_prefix + "ln3")
        self.post_norm = cfg.norm == "post"

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        memory_mask: torch.Tensor | None = None,
        cache: KVCache | None = None,
    ) -> torch.Tensor:
        """x: (B, T, d_model) target tokens; memory: (B, T_src, d_model); memory_mask: (B, T_src), False at padding."""
        x = self.tap("hook_resid_pre", x)
        if self.post_norm:
            x = self.ln1(x + self.attn(x, cache))
            x = self.tap("hook_resid_mid", x)
            x = self.ln2(x + self.cross_attn(x, cache, memory_mask, memory))
            x = self.tap("hook_resid_mid_cross", x)
            x = self.ln3(x + self.mlp(x))
        else:
            x = x + self.attn(self.ln1(x), cache)
            x = self.tap("hook_resid_mid", x)
            x = x + self.cross_attn(self.ln2(x), cache, memory_mask, memory)
            x = self.tap("hook_resid_mid_cross", x)
            x = x + self.mlp(self.ln3(x))
        x = self.tap("hook_resid_post", x)
        return x

    def tap_steps(self) -> tuple:
        """The three sub-layers of forward, each with its LayerNorm before it (pre-norm) or after it (post-norm)."""
        subs: tuple[tuple, ...] = (
            (self.attn, self.ln1, "hook_resid_mid"),
            (self.cross_attn, self.ln2, "hook_resid_mid_cross"),
            (self.mlp, self.ln3, "hook_resid_post"),
        )
        steps: tuple = ("hook_resid_pre",)
        for sub, ln, resid in subs:
            steps += (sub, ln, resid) if self.post_norm else (ln, sub, resid)
        return steps


def make_block(cfg: ModelConfig, layer: int = 0, scope: str = "", causal: bool | None = None) -> Block:
    """The block class for cfg.norm, cfg.residual and cfg.mlp (causal: None follows cfg.causal); a GPT's
    blocks with norms after each sub-layer or side by side are gpt.make_gpt_block's."""
    if cfg.mlp == "none":
        return AttentionOnlyBlock(cfg, layer, scope, causal)
    post = cfg.norm == "post"
    if cfg.residual:
        return (PostNormBlock if post else PreNormBlock)(cfg, layer, scope, causal)
    return (PostNormBlockNoResidual if post else PreNormBlockNoResidual)(cfg, layer, scope, causal)
