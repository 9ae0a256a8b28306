"""Seq2Seq: the encoder-decoder Transformer of the 2017 paper, for translation.

    memory = Encoder(W_E[source] + positions)        bidirectional self-attention, padding masked
    h      = Decoder(W_E[target] + positions, memory) causal self-attention, then cross-attention
                                                      (q from the target, k and v from memory), then the MLP
    P(next target token) = softmax(h W_out + b)

Both stacks are qkv's own blocks (the encoder's are the GPT's with causal=False; the decoder's add
cross-attention, which is the same MultiHeadAttention given a memory) and each ends in a LayerNorm,
as torch.nn.Transformer's do, so that its weights load one to one (models.torch_transformer).
Trained with teacher forcing: the target input is <s> w1 .. wn and the output to predict w1 .. wn </s>.
Tap names start with encoder. or decoder.: decoder.blocks.L.cross_attn.hook_pattern is (B, n_heads,
T_target, T_source), which target token reads which source token.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from qkv.core.io.shown import Displayed
from qkv.core.model.gpt import GPT, gpt2_init
from qkv.core.model.nn.attention import KVCache
from qkv.core.model.nn.block import DecoderBlock, make_block
from qkv.core.model.nn.layernorm import make_norm
from qkv.core.model.nn.position import make_position
from qkv.core.see.hooks import Hookable
from qkv.core.see.names import declared
from qkv.core.see.tap import forward_pass, tap, tap_expanded
from qkv.core.see.trace import run_with_trace
from qkv.core.spec.config import ModelConfig
from qkv.core.spec.family import FAMILIES


def _encoder_layers(cfg: ModelConfig) -> int:
    """cfg.n_encoder_layers, which an arch="seq2seq" config always holds (n_layers when not given)."""
    assert cfg.n_encoder_layers is not None, "arch='seq2seq' sets n_encoder_layers"
    return cfg.n_encoder_layers


class EncoderStack(nn.Module):
    """n_encoder_layers bidirectional blocks, then LayerNorm: embedded source (B, S, d_model) -> memory."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.blocks = nn.ModuleList(
            make_block(cfg, layer, "encoder.", causal=False) for layer in range(_encoder_layers(cfg))
        )
        self.ln_final = make_norm(cfg, "encoder.ln_final")

    def tap_names(self) -> list[str]:
        return declared("", (self.blocks, self.ln_final))

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor | None = None) -> torch.Tensor:
        """key_mask: (B, S) bool, False at padding."""
        for block in self.blocks:
            x = block(x, key_mask=key_mask)
        return self.ln_final(x)


class DecoderStack(nn.Module):
    """n_layers decoder blocks (self-attention, cross-attention, MLP), then LayerNorm."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.blocks = nn.ModuleList(DecoderBlock(cfg, layer) for layer in range(cfg.n_layers))
        self.ln_final = make_norm(cfg, "decoder.ln_final")

    tap_names = EncoderStack.tap_names

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        memory_mask: torch.Tensor | None = None,
        cache: KVCache | None = None,
    ) -> torch.Tensor:
        """x: (B, T, d_model) embedded target; memory: (B, S, d_model); memory_mask: (B, S) bool, False at padding."""
        for block in self.blocks:
            x = block(x, memory, memory_mask, cache)
        return self.ln_final(x)


class Seq2Seq(Hookable, nn.Module, Displayed):  # Displayed: its notebook display (qkv.apps.displays)
    shown_as = "model"  # its notebook display: qkv.apps.displays
    family = FAMILIES["seq2seq"]  # the decoder predicts the next target token (models.family)
    loaded_from = None
    checkpoint: str | None = None  # a qkv checkpoint read by qkv.load: its folder's name (never the path), or "bundled"
    languages: tuple[str, str] | None = None  # (source, target), e.g. ("zh", "en"): what its checkpoint records

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if cfg.arch != self.family.arch:
            raise ValueError(f"a Seq2Seq needs arch='seq2seq'; got {cfg.arch!r}")
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.d_vocab, cfg.d_model)  # W_E of the target tokens
        self.src_embed = None if cfg.share_embeddings else nn.Embedding(cfg.d_vocab, cfg.d_model)  # None: self.embed
        self.embed_scale = math.sqrt(cfg.d_model) if cfg.embed_scale else 1.0
        self.pos_embed, self.src_pos_embed = make_position(cfg), make_position(cfg)
        self.p_embed = cfg.dropout_embed
        self.encoder = EncoderStack(cfg)
        self.decoder = DecoderStack(cfg)
        self.unembed = nn.Linear(cfg.d_model, cfg.d_vocab, bias=cfg.unembed_bias)  # W_out and b
        gpt2_init(self, cfg.init_std, _encoder_layers(cfg) + cfg.n_layers)
        if cfg.tie_embeddings:
            self.unembed.weight = self.embed.weight

    def forward(
        self,
        src_ids: torch.Tensor,
        tgt_ids: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        cache: KVCache | None = None,
        explicit: bool = False,
    ) -> torch.Tensor:
        """src_ids (B, S), tgt_ids (B, T), src_mask (B, S) 1 at real source tokens -> logits (B, T, d_vocab).

        Teacher forcing: every target position at once, each seeing the whole source and the target before it."""
        with forward_pass(self, explicit):
            memory = self.encode(src_ids, src_mask)
            return self.decode(tgt_ids, memory, src_mask, cache)

    def tap_names(self) -> list[str]:
        """The names forward records, in order (see/names.py): the encoder's, then the decoder's, then the logits."""
        src_pos = "encoder.hook_pos_embed" if self.src_pos_embed is not None else None
        pos = "decoder.hook_pos_embed" if self.pos_embed is not None else None
        return declared(
            "", ("encoder.hook_embed", src_pos, self.encoder, "decoder.hook_embed", pos, self.decoder, "logits")
        )

    def encode(self, src_ids: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        """The encoder's output, one vector per source token: (B, S) -> memory (B, S, d_model)."""
        if src_ids.shape[1] > self.cfg.n_ctx:
            raise ValueError(
                f"a source of {src_ids.shape[1]} tokens does not fit in the context of {self.cfg.n_ctx} (n_ctx)"
            )
        table = self.embed if self.src_embed is None else self.src_embed
        with forward_pass(self):
            x = self._embed("encoder.", table, self.src_pos_embed, src_ids, 0)
            return self.encoder(x, None if src_mask is None else src_mask.bool())

    def decode(
        self,
        tgt_ids: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        cache: KVCache | None = None,
    ) -> torch.Tensor:
        """Logits (B, T, d_vocab) of the target tokens given the memory; with a cache, tgt_ids continue it."""
        offset = cache.length if cache is not None else 0
        if offset + tgt_ids.shape[1] > self.cfg.n_ctx:
            raise ValueError(
                f"{offset + tgt_ids.shape[1]} target tokens do not fit in the context of {self.cfg.n_ctx} (n_ctx)"
            )
        with forward_pass(self):
            x = self._embed("decoder.", self.embed, self.pos_embed, tgt_ids, offset)
            h = self.decoder(x, memory, None if src_mask is None else src_mask.bool(), cache)
            if cache is not None:
                cache.length += tgt_ids.shape[1]
            return tap("logits", self.unembed(h))  # (B, T, d_vocab): h W_out + b

    def _embed(self, scope: str, table: nn.Embedding, pos_module, ids: torch.Tensor, offset: int) -> torch.Tensor:
        """x = W_E[ids] (times sqrt(d_model) if cfg.embed_scale) + positions offset.., recorded as
        {scope}hook_embed, hook_pos_embed."""
        B, T = ids.shape
        x = table(ids) * self.embed_scale if self.embed_scale != 1.0 else table(ids)  # (B, T, d_model)
        x = tap(scope + "hook_embed", x)
        if pos_module is not None:
            x = x + tap_expanded(scope + "hook_pos_embed", pos_module(offset, T), (B, T, -1))  # (T, d_model) per row
        return F.dropout(x, self.p_embed, self.training) if self.p_embed > 0 else x

    next_token_probs = staticmethod(GPT.next_token_probs)

    def run_with_trace(
        self, src_ids: torch.Tensor, tgt_ids: torch.Tensor, src_mask: torch.Tensor | None = None, names=None
    ):
        """(logits, trace): teacher-forced forward pass with every named intermediate recorded."""
        if tgt_ids.dim() == 1:
            tgt_ids = tgt_ids[None]  # (1, T)
        return run_with_trace(self, src_ids, names, tgt_ids=tgt_ids, src_mask=src_mask)

    def new_cache(self, batch_size: int = 1) -> KVCache:
        p = self.embed.weight
        return KVCache(self.cfg, batch_size, p.device, p.dtype)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def seq2seq_loss(logits: torch.Tensor, targets: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """Mean cross-entropy over the real target tokens (padding is not scored)."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=pad_id)  # (B*T, d_vocab) vs (B*T,)
