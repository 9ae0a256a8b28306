"""torch.nn.Transformer's weights in a qkv Seq2Seq, one tensor to one tensor.

torch's encoder-decoder holds no embeddings or unembedding, only the two stacks, and names them
differently; the numbers are the same. nn.MultiheadAttention's in_proj_weight stacks W_Q, W_K, W_V
row-wise in the layout of qkv's W_QKV (cross-attention computes q from its first third and k, v
from the rest, as qkv's does), and norm1/norm2/norm3 are qkv's ln1/ln2/ln3.
"""

from __future__ import annotations

import torch
from torch import nn

from qkv.core.io.refusal import Refusal

_ATTN = {
    "in_proj_weight": "W_QKV.weight",
    "in_proj_bias": "W_QKV.bias",
    "out_proj.weight": "W_O.weight",
    "out_proj.bias": "W_O.bias",
}
_LAYER = {
    "linear1": "mlp.fc_in",
    "linear2": "mlp.fc_out",
    "norm1": "ln1",
    "norm2": "ln2",
    "norm3": "ln3",
    "self_attn": "attn",
    "multihead_attn": "cross_attn",
}


def torch_name(name: str) -> str:
    """qkv's name for one of torch.nn.Transformer's parameters:
    decoder.layers.0.multihead_attn.in_proj_weight -> decoder.blocks.0.cross_attn.W_QKV.weight."""
    parts = name.split(".")
    if parts[1:2] == ["norm"]:  # encoder.norm.weight -> encoder.ln_final.weight
        return f"{parts[0]}.ln_final.{parts[2]}"
    stack, _, layer, module, *rest = parts  # encoder, layers, 0, self_attn, in_proj_weight
    leaf = ".".join(rest)
    return f"{stack}.blocks.{layer}.{_LAYER[module]}." + (_ATTN[leaf] if module.endswith("attn") else leaf)


@torch.no_grad()
def load_torch_transformer(model, transformer: nn.Transformer) -> None:
    """Copy a (batch_first) nn.Transformer's weights into model's encoder and decoder stacks.

    Its shape must match model.cfg (d_model, n_heads, layers, d_mlp, norm pre for norm_first=True,
    post otherwise); a mismatch raises ValueError naming the tensor."""
    ours = model.state_dict()
    for name, t in transformer.state_dict().items():
        target = torch_name(name)
        if target not in ours:
            raise Refusal.of("hub.torch_no_counterpart", name=name, target=target)
        if ours[target].shape != t.shape:
            raise Refusal.of(
                "hub.torch_shape", name=name, shape=tuple(t.shape), target=target, want=tuple(ours[target].shape)
            )
        ours[target].copy_(t)
