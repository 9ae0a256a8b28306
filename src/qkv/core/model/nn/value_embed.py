"""Value embeddings (cfg.value_embeds, from the modded-nanogpt speedrun): the first N layers of a GPT each
have a table VE of one row per token (d_vocab rows of n_kv_heads * d_head numbers), and mix the row of each
position's own token into that layer's values before attention reads them:

    v = (1 - λ) (x W_V + b_V) + λ VE[token]        λ a learned number of the layer, 0.5 at first

So a head can move what a token *is* (its row) from one position to another directly, besides what the layers
below made of it. The values recorded as blocks.L.attn.hook_v are the mixed ones: what z = A v reads.

The token ids reach the attention of each layer through `reading(ids)`, which GPT.forward and GPT.stepper wrap
around their blocks (the blocks' own signatures stay those of every family).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import torch
from torch import nn

_IDS: ContextVar[torch.Tensor | None] = ContextVar("qkv_value_embed_ids", default=None)

MIX_INIT = 0.5  # λ at the start: half the layer's own value, half the token's row (modded-nanogpt's)


@contextmanager
def reading(ids: torch.Tensor) -> Iterator[None]:
    """The token ids (B, T) of the positions the blocks compute, for the value embeddings inside them."""
    token = _IDS.set(ids)
    try:
        yield
    finally:
        _IDS.reset(token)


class ValueEmbed(nn.Module):
    """One layer's table VE (d_vocab, n_kv_heads * d_head) and its mix λ: v -> (1 - λ) v + λ VE[token]."""

    def __init__(self, d_vocab: int, n_kv_heads: int, d_head: int):
        super().__init__()
        self.n_kv_heads, self.d_head = n_kv_heads, d_head
        self.table = nn.Embedding(d_vocab, n_kv_heads * d_head)
        self.mix = nn.Parameter(torch.tensor(MIX_INIT))  # λ

    def rows(self, ids: torch.Tensor) -> torch.Tensor:
        """VE[ids] per key/value head: ids (B, T) -> (B, n_kv_heads, T, d_head)."""
        B, T = ids.shape
        return self.table(ids).view(B, T, self.n_kv_heads, self.d_head).transpose(1, 2)  # (B, n_kv_heads, T, d_head)

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        """v (B, n_kv_heads, T, d_head) -> (1 - λ) v + λ VE[token], the ids those `reading` gave."""
        ids = _IDS.get()
        if ids is None or ids.shape != (v.shape[0], v.shape[2]):
            raise ValueError("value embeddings read each position's token id: run the model on its token ids")
        return (1 - self.mix) * v + self.mix * self.rows(ids).to(v.dtype)

    def reset_mix(self) -> None:
        with torch.no_grad():
            self.mix.fill_(MIX_INIT)
