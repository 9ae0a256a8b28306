"""Blocks with a norm after each sub-layer, before its output joins the residual stream.

    sandwich (Gemma 2, Gemma 3):  x = x + LN1_post(Attn(LN1(x)));  x = x + LN2_post(MLP(LN2(x)))
    output   (OLMo-2):            x = x + LN1_post(Attn(x));       x = x + LN2_post(MLP(x))

The residual stream itself is never normalised (unlike the 2017 paper's post-norm, LN(x + f(x))): each
sub-layer's contribution is, so no single layer can write a vector much larger than the others'. With
norm_placement="output" there is no norm before a sub-layer (ln1 and ln2 are the identity, as norm="none"
makes them) and attention reads the residual stream x itself.

The names are TransformerLens 4's for these families: the post-norms are blocks.L.ln1_post and
blocks.L.ln2_post, the sub-layers' raw outputs blocks.L.attn.hook_out and blocks.L.mlp.hook_out, and
hook_attn_out / hook_mlp_out are what is added to the stream, LN1_post's and LN2_post's outputs: so
resid_mid = resid_pre + attn_out and resid_post = resid_mid + mlp_out, as in every other block.
"""

from __future__ import annotations

import torch

from qkv.core.model.nn.attention import KVCache
from qkv.core.model.nn.block import BlockWithMLP
from qkv.core.model.nn.layernorm import AnyNorm, NoNorm, make_norm
from qkv.core.spec.config import ModelConfig


class SandwichBlock(BlockWithMLP):
    """norm_placement "sandwich" or "output" (see the module docstring)."""

    ln1_post: AnyNorm
    ln2_post: AnyNorm

    def __init__(self, cfg: ModelConfig, layer: int = 0, scope: str = "", causal: bool | None = None):
        super().__init__(cfg, layer, scope, causal)
        p = self.tap_prefix
        if cfg.norm_placement == "output":  # OLMo-2: nothing before a sub-layer
            self.ln1, self.ln2 = NoNorm(), NoNorm()
        self.ln1_post = make_norm(cfg, p + "ln1_post")
        self.ln2_post = make_norm(cfg, p + "ln2_post")
        self.attn.out_name = p + "attn.hook_out"  # the raw outputs; hook_attn_out, hook_mlp_out: after the norm
        self.mlp.out_hook = "mlp.hook_out"

    def tap_steps(self) -> tuple:
        """x + LN1_post(Attn(LN1(x))), then x + LN2_post(MLP(LN2(x))); each normed output, then each sum."""
        attn = (self.ln1, self.attn, self.ln1_post, "hook_attn_out", "hook_resid_mid")
        return ("hook_resid_pre", *attn, self.ln2, self.mlp, self.ln2_post, "hook_mlp_out", "hook_resid_post")

    def forward(
        self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        x = self.tap("hook_resid_pre", x)
        x = x + self.tap("hook_attn_out", self.ln1_post(self.attn(self.ln1(x), cache, key_mask)))
        x = self.tap("hook_resid_mid", x)
        x = x + self.tap("hook_mlp_out", self.ln2_post(self.mlp(self.ln2(x))))
        x = self.tap("hook_resid_post", x)
        return x

    def stepper(self):
        ln1, attn, ln2, mlp = self.steppers()
        ln1_post, ln2_post = self.ln1_post.stepper(), self.ln2_post.stepper()

        def step(x, cache, positions=None, key_mask=None):
            x = x + ln1_post(attn(ln1(x), cache, positions, key_mask))
            return x + ln2_post(mlp(ln2(x)))

        return step
