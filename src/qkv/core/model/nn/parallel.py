"""The parallel block (GPT-NeoX, Pythia, GPT-J): attention and the MLP both read the block's input.

    x = x + Attn(LN1(x)) + MLP(LN2(x))          (cfg.parallel_attn_mlp)

against the sequential pre-norm block's x = x + Attn(LN1(x)), then x = x + MLP(LN2(x)). The MLP no
longer sees what attention wrote in the same layer, so the two can be computed side by side; there is
one residual sum per block, and no stream between the sub-layers. Its taps are TransformerLens 4's for
this architecture: hook_resid_pre, ln1, attn, hook_attn_out, ln2, mlp, hook_mlp_out, hook_resid_post,
and no hook_resid_mid (the checks sum resid_post = resid_pre + attn_out + mlp_out).
"""

from __future__ import annotations

import torch

from qkv.core.model.nn.attention import KVCache
from qkv.core.model.nn.block import BlockWithMLP


class ParallelBlock(BlockWithMLP):
    """x + Attn(LN1(x)) + MLP(LN2(x)): one sum of the input and both sub-layers' outputs."""

    def tap_steps(self) -> tuple:
        """LN1 and attention, then LN2 and the MLP, all reading resid_pre; resid_post after the one sum."""
        return ("hook_resid_pre", self.ln1, self.attn, self.ln2, self.mlp, "hook_resid_post")

    def forward(
        self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        x = self.tap("hook_resid_pre", x)
        attn_out = self.attn(self.ln1(x), cache, key_mask)  # (B, T, d_model)
        mlp_out = self.mlp(self.ln2(x))  # (B, T, d_model): from x, not from x + attn_out
        return self.tap("hook_resid_post", x + attn_out + mlp_out)

    def stepper(self):
        ln1, attn, ln2, mlp = self.steppers()

        def step(x, cache, positions=None, key_mask=None):
            return x + attn(ln1(x), cache, positions, key_mask) + mlp(ln2(x))

        return step
