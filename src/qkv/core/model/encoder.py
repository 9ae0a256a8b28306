"""Encoder: a BERT-style bidirectional Transformer, from the same modules as the GPT.

    x = LN_embed(W_E[ids] + W_pos[positions] + W_type[token types])     (ln_embed)
    x = LN1(x + Attn(x));  x = LN2(x + MLP(x))                            post-norm blocks, no causal mask
    output: the hidden states x of the last block, one vector per token (no unembedding)

What differs from the GPT is only what BERT adds: token-type (segment) embeddings, a LayerNorm over
the embeddings, and padding: a batch of sentences of different lengths is padded to one length and
`attention_mask` (B, T) marks the real tokens, so no query attends to a padding key. A sentence
embedding (sentence-transformers' recipe for all-MiniLM-L6-v2) is the mean of the real tokens'
hidden states, scaled to length 1 (`sentence_embedding`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from qkv.core.io.shown import Displayed
from qkv.core.model.nn.block import make_block
from qkv.core.model.nn.layernorm import LayerNorm
from qkv.core.model.nn.position import make_position
from qkv.core.see.hooks import Hookable
from qkv.core.see.names import declared
from qkv.core.see.tap import forward_pass, tap, tap_expanded
from qkv.core.see.trace import run_with_trace
from qkv.core.spec.config import ModelConfig
from qkv.core.spec.family import FAMILIES


class Encoder(Hookable, nn.Module, Displayed):  # Displayed: its notebook display (qkv.apps.displays)
    shown_as = "model"  # its notebook display: qkv.apps.displays
    family = FAMILIES["bert"]  # hidden states out: no next-token distribution (models.family)
    loaded_from = None  # where it was loaded from (core.hub.pretrained)
    checkpoint: str | None = None  # a qkv checkpoint read by qkv.load: its folder's name (never the path), or "bundled"

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if cfg.arch != self.family.arch:
            raise ValueError(f"an Encoder needs arch='bert'; got {cfg.arch!r}")
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.d_vocab, cfg.d_model)  # W_E
        self.pos_embed = make_position(cfg)
        self.token_type_embed = nn.Embedding(cfg.n_token_types, cfg.d_model) if cfg.n_token_types else None  # W_type
        self.ln_embed = LayerNorm(cfg.d_model, cfg.ln_eps, cfg.bias, "ln_embed")
        self.p_embed = cfg.dropout_embed
        self.blocks = nn.ModuleList(make_block(cfg, layer) for layer in range(cfg.n_layers))

    def forward(
        self,
        ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        explicit: bool = False,
    ) -> torch.Tensor:
        """ids, token_type_ids, attention_mask: (B, T) -> hidden states (B, T, d_model).

        attention_mask is 1 (or True) at real tokens and 0 at padding; None means no padding."""
        B, T = ids.shape
        if T > self.cfg.n_ctx:
            raise ValueError(f"{T} tokens do not fit in the context of {self.cfg.n_ctx} (n_ctx)")
        key_mask = None if attention_mask is None else attention_mask.bool()  # (B, T)
        with forward_pass(self, explicit):
            x = tap("hook_embed", self.embed(ids))  # (B, T, d_model)
            if self.pos_embed is not None:
                x = x + tap_expanded("hook_pos_embed", self.pos_embed(0, T), (B, T, -1))  # (T, d_model) per row
            if self.token_type_embed is not None:
                types = torch.zeros_like(ids) if token_type_ids is None else token_type_ids
                x = x + tap("hook_token_type_embed", self.token_type_embed(types))
            x = self.ln_embed(x)
            if self.p_embed > 0:
                x = F.dropout(x, self.p_embed, self.training)
            for block in self.blocks:
                x = block(x, key_mask=key_mask)
            return x

    def tap_names(self) -> list[str]:
        """The names forward records, in order (see/names.py): no logits, an encoder has no unembedding."""
        pos = "hook_pos_embed" if self.pos_embed is not None else None
        types = "hook_token_type_embed" if self.token_type_embed is not None else None
        return declared("", ("hook_embed", pos, types, self.ln_embed, self.blocks))

    def run_with_trace(self, ids: torch.Tensor, names=None, attention_mask: torch.Tensor | None = None):
        """(hidden states, trace): the forward pass with every named intermediate recorded (qkv.trace)."""
        return run_with_trace(self, ids, names, attention_mask=attention_mask)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def pad_batch(sequences: list[list[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Token lists of different lengths -> ids (B, T_max) padded with pad_id, attention_mask (B, T_max)."""
    if not sequences or not all(sequences):
        raise ValueError("pad_batch needs at least one sequence, each of at least one token")
    T = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), T), dtype=torch.long)
    for b, s in enumerate(sequences):
        ids[b, : len(s)] = torch.tensor(s)
        mask[b, : len(s)] = 1
    return ids, mask


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The mean of each sequence's real tokens: (B, T, d_model), (B, T) -> (B, d_model)."""
    m = attention_mask.to(hidden.dtype).unsqueeze(-1)  # (B, T, 1)
    return (hidden * m).sum(1) / m.sum(1).clamp_min(1e-9)


@torch.no_grad()
def sentence_embedding(model: Encoder, tokenizer, texts: list[str]) -> torch.Tensor:
    """Unit-length sentence vectors (B, d_model): mean-pooled hidden states, normalised (all-MiniLM-L6-v2).

    A text longer than the tokenizer's max_length (sentence-transformers' max_seq_length, 256 for
    MiniLM) is cut there as sentence-transformers cuts it: its first pieces, then [SEP]."""
    limit = getattr(tokenizer, "max_length", None) or model.cfg.n_ctx
    seqs = [tokenizer.encode(t) for t in texts]
    ids, mask = pad_batch([s if len(s) <= limit else s[: limit - 1] + s[-1:] for s in seqs], tokenizer.pad_id)
    device = next(model.parameters()).device
    hidden = model(ids.to(device), attention_mask=mask.to(device))
    return F.normalize(mean_pool(hidden, mask.to(device)), dim=-1)
