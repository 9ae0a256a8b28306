"""GPT: a decoder-only Transformer language model.

    ids ─► x = W_E[ids] (+ positions) ─► blocks ─► h = LN_final(x) ─► logits = h W_out + b
    P(next token | tokens so far) = softmax(logits / temperature)      (next_token_probs)

With pos="sinusoidal" the token embeddings are multiplied by sqrt(d_model) before the table is
added, as in the 2017 paper (cfg.embed_scale), so that words are not drowned by their positions.
Gemma scales them too (with RoPE), and soft-caps the logits: cap * tanh(logits / cap) (Gemma 2's
final_logit_softcapping, cfg.output_logits_soft_cap).

Generation adds one token at a time: `stepper()` gives forward for one new token per row as a
plain function, from each module's own stepper (block, attention, MLP, LayerNorm; RoPE takes a
position per row), with the fused kernels and no taps; tests prove it equal to forward for every
variant.
"""

from __future__ import annotations

import math
from contextlib import nullcontext

import torch
import torch.nn.functional as F
from torch import nn

from qkv.core.io.shown import Displayed
from qkv.core.model.nn.attention import KVCache
from qkv.core.model.nn.block import Block, make_block
from qkv.core.model.nn.layernorm import NoNorm, make_norm
from qkv.core.model.nn.linear import linear_step
from qkv.core.model.nn.parallel import ParallelBlock
from qkv.core.model.nn.position import make_position
from qkv.core.model.nn.sandwich import SandwichBlock
from qkv.core.model.nn.sliding import soft_cap
from qkv.core.model.nn.value_embed import ValueEmbed, reading
from qkv.core.see.hooks import Hookable
from qkv.core.see.names import declared
from qkv.core.see.tap import forward_pass, tap, tap_expanded
from qkv.core.see.trace import run_with_trace
from qkv.core.spec.config import ModelConfig
from qkv.core.spec.family import FAMILIES


def make_gpt_block(cfg: ModelConfig, layer: int = 0) -> Block:
    """A GPT's block: with norms after each sub-layer (cfg.norm_placement "sandwich" / "output", Gemma and
    OLMo-2) nn/sandwich.py's, with attention and MLP side by side (cfg.parallel_attn_mlp, GPT-NeoX)
    nn/parallel.py's, else the block every family shares (make_block). ModelConfig refuses the two together."""
    if cfg.norm_placement != "pre":
        return SandwichBlock(cfg, layer)
    return ParallelBlock(cfg, layer) if cfg.parallel_attn_mlp else make_block(cfg, layer)


class GPT(Hookable, nn.Module, Displayed):  # Displayed: its notebook display (qkv.apps.displays)
    shown_as = "model"  # its notebook display: qkv.apps.displays
    family = FAMILIES["gpt"]  # what it is and can do (models.family)
    loaded_from = None  # a pretrained model: where it was loaded from (core.hub.pretrained)
    checkpoint: str | None = None  # a qkv checkpoint read by qkv.load: its folder's name (never the path), or "bundled"
    stop_ids: tuple[int, ...] = ()  # a pretrained model's end-of-text ids (generation_config.json): qkv generate stops

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if cfg.arch != self.family.arch:
            raise ValueError(
                f"a GPT needs arch='gpt'; got {cfg.arch!r} (qkv trains GPTs; a BERT encoder is loaded "
                "from a pretrained directory: --ckpt minilm)"
            )
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.d_vocab, cfg.d_model)  # W_E: one row per token
        self.embed_scale = math.sqrt(cfg.d_model) if cfg.embed_scale else 1.0
        self.pos_embed = make_position(cfg)  # None for rope (inside attention) and none
        self.p_embed = cfg.dropout_embed
        self.blocks = nn.ModuleList(make_gpt_block(cfg, layer) for layer in range(cfg.n_layers))
        # a post-norm block already ends in a LayerNorm, so only pre-norm (LayerNorm or RMSNorm) needs a final one
        self.ln_final = make_norm(cfg, "ln_final") if cfg.pre_norm else NoNorm()
        self.unembed = nn.Linear(cfg.d_model, cfg.d_vocab, bias=cfg.unembed_bias)  # W_out and b
        self.reset_parameters()
        if cfg.tie_embeddings:
            self.unembed.weight = self.embed.weight

    def reset_parameters(self) -> None:
        gpt2_init(self, self.cfg.init_std, self.cfg.n_layers)
        if self.cfg.zero_init:
            zero_outputs(self)
        for m in self.modules():  # a value embedding's λ (a single number, which gpt2_init drew at random)
            if isinstance(m, ValueEmbed):
                m.reset_mix()

    def forward(self, ids: torch.Tensor, cache: KVCache | None = None, explicit: bool = False) -> torch.Tensor:
        """ids: (B, T) token ids -> logits (B, T, d_vocab).

        With a cache, ids continue the tokens already stored in it. `explicit` computes attention
        and LayerNorm with the written-out formulas instead of the fused kernels (the path a trace
        takes: the same numbers to rounding, slower).
        """
        B, T = ids.shape
        offset = cache.length if cache is not None else 0
        if offset + T > self.cfg.n_ctx:
            raise ValueError(f"{offset + T} tokens do not fit in the context of {self.cfg.n_ctx} (n_ctx)")
        with forward_pass(self, explicit):
            x = self.embed_ids(ids, offset)  # (B, T, d_model)
            with reading(ids):  # the value embeddings' token ids (nn/value_embed.py)
                for block in self.blocks:
                    x = block(x, cache)
            if cache is not None:
                cache.length += T
            h = self.ln_final(x)
            return tap("logits", soft_cap(self.unembed(h), self.cfg.output_logits_soft_cap))  # (B, T, d_vocab)

    def tap_names(self) -> list[str]:
        """The names forward records, in order (see/names.py): qkv.trace_names reads them."""
        pos = "hook_pos_embed" if self.pos_embed is not None else None
        return declared("", ("hook_embed", pos, self.blocks, self.ln_final, "logits"))

    def embed_ids(self, ids: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """x = W_E[ids] (times sqrt(d_model) if cfg.embed_scale) + the vectors of positions offset..offset+T-1.

        Recorded as hook_embed (the embedding as added, scaled) and hook_pos_embed; dropout after the sum."""
        B, T = ids.shape
        x = self.embed(ids)  # (B, T, d_model)
        if self.embed_scale != 1.0:  # sqrt(d_model) rounded to the weights' dtype first, as Gemma rounds it
            x = x * _rounded(self.embed_scale, x.dtype)
        x = tap("hook_embed", x)
        if self.pos_embed is not None:
            pos = self.pos_embed(offset, T)  # (T, d_model), the same for every sequence in the batch
            x = x + tap_expanded("hook_pos_embed", pos, (B, T, -1))
        return F.dropout(x, self.p_embed, self.training) if self.p_embed > 0 else x

    def stepper(self):
        """forward for one new token per row, as a function step(tokens, cache, positions=None,
        key_mask=None) -> logits (B, d_vocab): forward(tokens[:, None], cache)[:, -1] in evaluation mode,
        from every module's own stepper. The matrices are read when the stepper is made (transposed
        copies, nn/linear.py), so make one for each generation, after any change of the weights
        (sample.generate_ids and generate_batch do); a causal model only (cfg.causal).

        tokens: (B,) the new ids (or one int: B = 1), all stored in cache slot cache.length; positions:
        (B,) each row's own position (its tokens before, padding not counted), None: every row at
        cache.length; key_mask: (B, cache.length + 1) bool, False at the slots a row must not read (its
        padding), or None when every row reads every slot (see sample.generate_batch)."""
        if not self.cfg.causal:
            raise ValueError("a model without the causal mask changes every earlier key with each new token: no step")
        W_E, scale, n_ctx = self.embed.weight, self.embed_scale, self.cfg.n_ctx
        # (n_ctx, d_model): every position's vector, a view of the table (None for rope and none)
        pos = self.pos_embed(0, n_ctx) if self.pos_embed is not None else None
        # nn.ModuleList gives the type checker Modules; each of these is a Block (make_gpt_block), which has a stepper
        blocks = [block.stepper() for block in self.blocks]  # type: ignore[operator]
        ln_final, unembed, cap = self.ln_final.stepper(), linear_step(self.unembed), self.cfg.output_logits_soft_cap
        scale, ve = _rounded(scale, W_E.dtype), self.cfg.value_embeds > 0

        def step(tokens, cache, positions=None, key_mask=None):
            if torch.is_grad_enabled():  # generation runs under inference_mode; anywhere else, build no graph
                with torch.no_grad():
                    return step(tokens, cache, positions, key_mask)
            t = cache.length
            cache.check_room(1)  # before the positions' table is read at t
            x = W_E[tokens] if isinstance(tokens, torch.Tensor) else W_E[tokens][None]  # (B, d_model): W_E[token]
            if scale != 1.0:
                x = x * scale
            if pos is not None:
                x = x + pos[t if positions is None else positions]
            mask = key_mask[:, None, None, :] if key_mask is not None else None  # (B, 1, 1, t + 1)
            with step_ids(tokens, W_E.device) if ve else nullcontext():  # value embeddings read the token ids
                for block in blocks:
                    x = block(x, cache, positions, mask)
            cache.length = t + 1
            return soft_cap(unembed(ln_final(x)), cap)  # (B, d_vocab): h W_out + b (soft-capped, Gemma 2)

        return step

    @staticmethod
    def next_token_probs(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
        """P(next token) = softmax(logits / temperature) over the last dimension, logits = h W_out + b.

        The logits are shifted by their maximum first, so a tiny temperature gives 0s and a 1,
        never nan; temperature 0 gives its limit (the arg max, ties sharing). Keeps the dtype."""
        if not temperature >= 0:
            raise ValueError(f"temperature must be >= 0; got {temperature}")
        shifted = logits - logits.amax(-1, keepdim=True)  # (..., d_vocab), the largest is 0
        if temperature == 0:
            top = (shifted == 0).to(logits.dtype)
            return top / top.sum(-1, keepdim=True)
        return torch.softmax(shifted / temperature, dim=-1)

    def run_with_trace(self, ids: torch.Tensor, names=None):
        """(logits, trace): the forward pass with every named intermediate recorded (see qkv.trace)."""
        return run_with_trace(self, ids, names)

    def new_cache(self, batch_size: int = 1, capacity: int | None = None) -> KVCache:
        """An empty KV cache for batch_size rows of at most `capacity` tokens (None: n_ctx)."""
        p = self.embed.weight
        return KVCache(self.cfg, batch_size, p.device, p.dtype, capacity)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def step_ids(tokens, device):
    """reading() the ids of one decoding step: tokens (B,) or one int -> (B, 1) (nn/value_embed.py)."""
    ids = tokens[:, None] if isinstance(tokens, torch.Tensor) else torch.tensor([[tokens]], device=device)
    return reading(ids)  # (B, 1)


def _rounded(scale: float, dtype: torch.dtype) -> float:
    """scale as a number of `dtype` holds it (bfloat16 keeps 8 significant bits): Gemma multiplies by
    sqrt(d_model) cast to the weights' dtype."""
    return float(torch.tensor(scale, dtype=dtype)) if scale != 1.0 else scale


def gpt2_init(model: nn.Module, std: float, n_layers: int) -> None:
    """GPT-2's initialisation: N(0, std) weights, zero biases, and the projections that write into
    the residual stream (W_O, fc_out) scaled down by sqrt(2 * n_layers)."""
    for name, p in model.named_parameters():
        if name.endswith("bias"):
            nn.init.zeros_(p)
        elif p.dim() == 1:  # LayerNorm scale
            nn.init.ones_(p)
        elif name.endswith(("W_O.weight", "fc_out.weight")):
            nn.init.normal_(p, 0.0, std / math.sqrt(2 * n_layers))
        else:
            nn.init.normal_(p, 0.0, std)


@torch.no_grad()
def zero_outputs(model: nn.Module) -> None:
    """cfg.zero_init (the speedrun's): W_O and the MLP's W_out (and their biases) start at zero, so each block
    adds 0 to the residual stream at first: logits = LN_final(W_E[ids] + positions) W_out + b. The gradient
    still reaches them (dL/dW_O = z^T dL/dout, not 0), so they grow from 0 in the first step. modded-nanogpt
    zeroes its untied head too; qkv keeps its head random, which a tied head (the embedding) needs."""
    for name, p in model.named_parameters():
        if name.endswith(("W_O.weight", "W_O.bias", "fc_out.weight", "fc_out.bias")):
            p.zero_()


def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the next token: -log softmax(logits)[target], over all positions."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())  # (B*T, d_vocab) vs (B*T,)
