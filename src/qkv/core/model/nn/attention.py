"""Scaled dot-product attention, multi-head attention, and the KV cache.

    scores = q k^T / sqrt(d_head)         how well each query matches each key
    A      = softmax(scores)  (row-wise)   each row is >= 0 and sums to 1
    z      = A v                           each z_i is a convex combination of the values v_j

Multi-head attention runs this once per head on its own projections q = x W_Q, k = x W_K,
v = x W_V, concatenates the heads' z and maps them back with W_O; the block adds the result to
the residual stream. `attention` below is the truth; the fused kernel
(torch's scaled_dot_product_attention) is a faster path that a test proves equal to it.

Grouped-query attention (Llama, Mistral, Qwen) keeps fewer key/value heads than query heads: each
of n_kv_heads k, v heads serves a group of n_heads / n_kv_heads query heads (query head h reads
key/value head h // group). hook_k and hook_v keep the n_kv_heads shape, as TransformerLens 4
records them; the pattern and z have one per query head.

Cross-attention (an encoder-decoder's decoder) is the same module and the same formula with a
`memory`: q = x W_Q from the decoder's tokens, k = m W_K and v = m W_V from the encoder's output m.
The queries ask, the source sentence's keys answer, and z mixes its values.

Decoding adds one token at a time: `stepper()` gives forward's arithmetic for that case as a plain
function (one query per row, the fused kernel, its keys and values written to the cache), tested
equal to forward.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from qkv.core.model.nn.layernorm import RMSNorm
from qkv.core.model.nn.linear import linear_step
from qkv.core.model.nn.position import RoPE
from qkv.core.model.nn.sliding import layer_rope, norm_heads, qk_norms, soft_cap, step_window, window_mask
from qkv.core.model.nn.value_embed import ValueEmbed
from qkv.core.see.tap import edits, explicit, tap, tap_view, untapped, wants
from qkv.core.spec.config import ModelConfig


def attention(q, k, v, mask=None, dropout_p: float = 0.0, tap=untapped, scale=None, cap=None):
    """z = softmax(q k^T / sqrt(d_head)) v, written out. Returns (z, pattern, scores).

    scale: the divisor of q . k instead of sqrt(d_head) (Gemma: sqrt(query_pre_attn_scalar)); cap:
    scores = cap * tanh(scores / cap) before the mask (Gemma 2's soft-capping; None: none).

    q: (B, n_heads, T_q, d_head); k, v: (B, n_heads, T_k, d_head); mask: bool, True = may attend,
    (T_q, T_k) or anything that broadcasts to the scores, e.g. (B, 1, T_q, T_k) with padding.
    Attention dropout zeroes weights and scales the rest by 1/(1-p) without renormalising, so in
    training a row of the pattern no longer sums to exactly 1. `tap(name, t)` sees (and may replace)
    the raw dots q . k (hook_dots), the scores (hook_attn_scores) and the pattern (hook_pattern).
    """
    dots = tap("hook_dots", q @ k.transpose(-2, -1))  # (B, n_heads, T_q, T_k): raw q . k
    scores = soft_cap(dots / (math.sqrt(q.shape[-1]) if scale is None else scale), cap)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    scores = tap("hook_attn_scores", scores)
    pattern = scores.softmax(dim=-1)  # A
    if dropout_p > 0.0:
        pattern = F.dropout(pattern, dropout_p)
    pattern = tap("hook_pattern", pattern)  # in training: after dropout, as z reads it
    z = pattern @ v  # (B, n_heads, T_q, d_head)
    return z, pattern, scores


def causal_mask(T_q: int, T_k: int, device=None) -> torch.Tensor:
    """Query i (at absolute position T_k - T_q + i) may attend to keys 0 .. its own position."""
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril(diagonal=T_k - T_q)  # (T_q, T_k)


class KVCache:
    """Keys and values of the tokens seen so far, for incremental decoding.

    One preallocated buffer pair per layer, (B, n_kv_heads, capacity, d_head), filled left to right;
    `length` tokens are stored. The model advances `length` after each forward. `capacity` (default
    n_ctx) is the most tokens it holds: a model of a long context (Llama 3: 131,072) needs room for
    the text being generated, not for its whole context.
    """

    def __init__(
        self, cfg: ModelConfig, batch_size: int = 1, device=None, dtype=torch.float32, capacity: int | None = None
    ):
        if capacity is not None and capacity < 1:
            raise ValueError(f"a KV cache holds at least one token; got capacity {capacity}")
        self.capacity = cfg.n_ctx if capacity is None else min(cfg.n_ctx, capacity)
        shape = (batch_size, cfg.n_kv_heads, self.capacity, cfg.d_head)
        self.k = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layers)]
        self.v = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layers)]
        # cross-attention: layer -> the keys and values of the encoder's output (the memory)
        self.memory_kv: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self.n_ctx = cfg.n_ctx
        self.length = 0

    def cross_kv(self, layer: int, compute):
        """The memory's keys and values for a cross-attention layer: computed at the first step, then reused."""
        if layer not in self.memory_kv:
            self.memory_kv[layer] = compute()
        return self.memory_kv[layer]

    def reorder(self, index: torch.Tensor) -> None:
        """Keep the sequences `index` picks, in that order (beam search: each beam continues some parent)."""
        self.k = [k.index_select(0, index) for k in self.k]
        self.v = [v.index_select(0, index) for v in self.v]
        self.memory_kv = {
            layer: (k.index_select(0, index), v.index_select(0, index)) for layer, (k, v) in self.memory_kv.items()
        }

    def check_room(self, T: int) -> None:
        """Refuse T more tokens where they would not fit (ValueError, one line)."""
        if self.length + T > self.capacity:
            raise ValueError(f"the cache is full ({self.length} tokens stored, room for {self.capacity})")

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        """Store this step's k, v (B, n_kv_heads, T, d_head) and return all keys and values so far."""
        start, T = self.length, k.shape[-2]
        self.check_room(T)
        self.k[layer].narrow(2, start, T).copy_(k)  # k_buf[:, :, start:start+T] = k
        self.v[layer].narrow(2, start, T).copy_(v)
        k_all, v_all = self.k[layer].narrow(2, 0, start + T), self.v[layer].narrow(2, 0, start + T)
        return k_all, v_all  # (B, n_kv_heads, start+T, d_head)


class MultiHeadAttention(nn.Module):
    """n_heads attention heads side by side, then W_O: Attn(x) = concat_h(z_h) W_O + b_O.

    W_QKV holds W_Q, W_K and W_V side by side so one matrix product computes q, k and v for all
    heads (the layout of GPT-2's c_attn; with grouped-query attention W_K and W_V have n_kv_heads
    heads); `head_weights()` shows them per query head. Its bias is cfg.qkv_bias (Qwen2 has one on
    q, k, v and none on W_O). With cfg.qk_norm each head's q and k pass an RMSNorm over d_head
    first (Qwen3: attn.q_norm, attn.k_norm). The output is
    recorded as blocks.L.hook_attn_out; residual dropout (training only) applies after that.

    Every tap may be edited by a hook (see/tap.py): q, k, v, z in TransformerLens's (B, T, heads, d_head)
    layout, and hook_result, each head's z_h W_O[h]: an edited one is summed (with b_O) into the output.
    """

    # its taps under {scope}blocks.L.{name}., in the order forward records them (tap_names: those it has)
    TAPS = (
        "hook_q",
        "hook_k",
        "hook_v",
        "hook_q_normed",  # qk_norm only
        "hook_k_normed",
        "hook_rot_q",  # RoPE only
        "hook_rot_k",
        "hook_dots",  # the raw q . k: qkv's own
        "hook_attn_scores",
        "hook_pattern",
        "hook_z",
        "hook_result",
    )
    KV_TAPS = ("hook_k", "hook_v", "hook_k_normed", "hook_rot_k")  # (B, T, n_kv_heads, d_head)
    # what the fused kernel never forms (see/names.py); hook_z it forms too, but a hook on z takes the written-out
    # formula as a trace of that edit does, so that the edited run and its trace compute the very same numbers
    WRITTEN_OUT = ("hook_dots", "hook_attn_scores", "hook_pattern", "hook_z")

    def __init__(
        self,
        cfg: ModelConfig,
        layer: int = 0,
        scope: str = "",
        name: str = "attn",
        causal: bool | None = None,
        cross: bool = False,
    ):
        """scope ("", "encoder.", "decoder.") and name ("attn", "cross_attn") name the taps:
        {scope}blocks.L.{name}.hook_pattern, {scope}blocks.L.hook_{name}_out. cross: k and v come from a memory."""
        super().__init__()
        self.layer = layer
        self.tap_prefix = f"{scope}blocks.{layer}.{name}."
        self.out_name = f"{scope}blocks.{layer}.hook_{name}_out"
        self.n_heads, self.d_head, self.group = cfg.n_heads, cfg.d_head, cfg.group
        self.causal = cfg.causal if causal is None else causal
        self.cross = cross
        self.dropout_attn, self.dropout_resid = cfg.dropout_attn, cfg.dropout_resid
        d_attn, d_kv = cfg.n_heads * cfg.d_head, cfg.n_kv_heads * cfg.d_head
        self.n_proj = 3 if cfg.values == "v" else 2  # values="k": no W_V, the keys are mixed
        self.split = (d_attn, d_kv, d_kv)[: self.n_proj]  # W_QKV's rows: W_Q's, W_K's (and W_V's)
        self.W_QKV = nn.Linear(cfg.d_model, sum(self.split), bias=cfg.qkv_bias)
        self.W_O = nn.Linear(d_attn, cfg.d_model, bias=cfg.bias)
        # positions rotate q and k of one sequence; across two sequences there is no common position
        rotates = cfg.pos == "rope" and not cross
        self.rope: RoPE | None = layer_rope(cfg, layer) if rotates else None
        self.q_norm: RMSNorm | None
        self.k_norm: RMSNorm | None
        self.q_norm, self.k_norm = qk_norms(cfg)  # Qwen3, Gemma 3: per head; OLMo-2: the whole projection
        self.qk_whole = cfg.qk_norm_width == "all"
        # Gemma / OLMo-2 (nn/sliding.py): the divisor of q . k (and the fused kernel's factor), the scores'
        # soft-cap, this layer's window
        self.scale, self.factor = cfg.attn_scale, None if cfg.attn_scale is None else 1.0 / cfg.attn_scale
        self.cap = cfg.attn_scores_soft_cap
        self.window = cfg.sliding_window if cfg.slides(layer) and not cross else None
        # the speedrun's value embeddings (nn/value_embed.py): v = (1 - λ) v + λ VE[token] in the first layers
        ve = layer < cfg.value_embeds and not cross
        self.value_embed = ValueEmbed(cfg.d_vocab, cfg.n_kv_heads, cfg.d_head) if ve else None

    def tap_names(self) -> list[str]:
        """The names forward records, in order: TAPS as this attention has them, then hook_{name}_out."""
        normed = self.q_norm is not None and not self.cross
        has = {"hook_q_normed": normed, "hook_k_normed": normed, "hook_rot_q": self.rope is not None}
        has["hook_rot_k"] = has["hook_rot_q"]
        return [self.tap_prefix + hook for hook in self.TAPS if has.get(hook, True)] + [self.out_name]

    def forward(
        self,
        x: torch.Tensor,
        cache: KVCache | None = None,
        key_mask: torch.Tensor | None = None,
        memory: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """key_mask: (B, T_k) bool, False at padding: no query attends to those keys (an encoder's batch).
        memory: (B, T_src, d_model), for cross-attention: the encoder's output, where k and v come from."""
        B, T, _ = x.shape
        if self.cross:
            offset = 0  # no causal mask: every query may read the whole source sentence
            q = self.project_q(x)  # q = x W_Q: (B, n_heads, T, d_head)
            assert memory is not None, "cross-attention reads the encoder's output"  # (its callers always pass it)
            project = lambda: self.project_kv(memory)
            k, v = cache.cross_kv(self.layer, project) if cache is not None else project()
        else:
            offset = cache.length if cache is not None else 0
            q, k, v = self.project(x)  # q = x W_Q: (B, n_heads, T, d_head); k, v: (B, n_kv_heads, T, d_head)
            # Qwen3 (q_norm and k_norm: both or neither): each head's q and k over d_head, before positions
            if self.q_norm is not None and self.k_norm is not None:
                q, k = (norm_heads(n, t, self.qk_whole) for n, t in ((self.q_norm, q), (self.k_norm, k)))
                q, k = self.tap_heads("hook_q_normed", q), self.tap_heads("hook_k_normed", k)
            if self.rope is not None:
                q, k = (
                    self.tap_heads("hook_rot_q", self.rope(q, offset)),
                    self.tap_heads("hook_rot_k", self.rope(k, offset)),
                )
            if cache is not None:
                k, v = cache.append(self.layer, k, v)  # (B, n_kv_heads, offset + T, d_head)
        z = self.attend(q, k, v, offset, key_mask)  # z = softmax(q k^T / sqrt(d_head)) v: (B, n_heads, T, d_head)
        z = self.tap_heads("hook_z", z).transpose(1, 2)  # (B, T, n_heads, d_head)
        out = self.W_O(z.reshape(B, T, self.n_heads * self.d_head))  # heads concatenated, then W_O: (B, T, d_model)
        result = self.tap_prefix + "hook_result"
        if wants(result):  # each head's own output z_h W_O[h]; they add up (with b_O) to W_O's output
            each = torch.einsum("bthd,hdm->bthm", z, self.head_W_O())  # (B, T, n_heads, d_model)
            edited = tap(result, each)
            if edits(result):  # a hook changed some head's output (or may have, in place): sum what it left
                out = edited.sum(2) if self.W_O.bias is None else edited.sum(2) + self.W_O.bias
        out = tap(self.out_name, out)
        return F.dropout(out, self.dropout_resid, self.training) if self.dropout_resid > 0 else out

    def stepper(self):
        """forward for one new token per row, as a function step(x, cache, positions=None, key_mask=None):
        x (B, d_model) -> (B, d_model), in evaluation mode. Its k and v go to cache slot cache.length
        and the fused kernel mixes every cached value; the model advances cache.length after its last block.

        positions: (B,) each row's own position (rows of different lengths share the cache), None:
        every row at cache.length; key_mask: (B, 1, 1, cache.length + 1), False at the slots a row must
        not read (its padding), or None. The matrices are read when the stepper is made (GPT.stepper).

        Only a causal self-attention has one: a new token changes no earlier query's keys there, and
        a cross-attention's keys are the memory's, not the cache's."""
        if self.cross or not self.causal:
            raise ValueError("only a causal self-attention decodes one token at a time from its cache")
        W_QKV, W_O = linear_step(self.W_QKV), linear_step(self.W_O)  # x W^T + b by kept W^T (nn/linear.py)
        rope, layer, split, n_heads, d_head = self.rope, self.layer, self.split, self.n_heads, self.d_head
        q_norm = self.q_norm.stepper() if self.q_norm is not None else None
        k_norm = self.k_norm.stepper() if self.k_norm is not None else None
        gqa, whole, window, cap, group = self.group > 1, self.qk_whole, self.window, self.cap, self.group
        scale, factor, ve = self.scale, self.factor, self.value_embed

        def step(x, cache, positions=None, key_mask=None):
            B = x.shape[0]
            q, k, *v = W_QKV(x).split(split, -1)  # (B, n_heads * d_head), (B, n_kv_heads * d_head) ...
            q, k = q.view(B, -1, 1, d_head), k.view(B, -1, 1, d_head)  # (B, heads, 1, d_head)
            v = v[0].view(B, -1, 1, d_head) if v else k  # values="k": z = A k
            if ve is not None:  # the token ids from GPT.stepper's `reading`
                v = ve(v)
            if q_norm is not None and k_norm is not None:
                q, k = norm_heads(q_norm, q, whole), norm_heads(k_norm, k, whole)
            if rope is not None:
                at = cache.length if positions is None else positions
                q, k = rope(q, at, cache.capacity), rope(k, at, cache.capacity)
            k, v = cache.append(layer, k, v)  # (B, n_kv_heads, cache.length + 1, d_head)
            # no causal mask: every cached key is in the past; a sliding window hides those before it
            mask = key_mask
            if window is not None:
                near = step_window(k.shape[-2], window, k.device)  # (1, 1, 1, cache.length + 1)
                mask = near if key_mask is None else key_mask & near
            if cap is not None:  # no fused kernel soft-caps: the written-out formula
                if gqa:
                    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
                z = attention(q, k, v, mask, scale=scale, cap=cap)[0]  # (B, n_heads, 1, d_head)
            else:
                z = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa, scale=factor)
            return W_O(z.view(B, n_heads * d_head))  # heads concatenated: (B, n_heads * d_head) -> (B, d_model)

        return step

    def project(self, x: torch.Tensor):
        """q = x W_Q + b_Q, k = x W_K + b_K, v = x W_V + b_V (values="k": v = k), per head: q has
        n_heads heads, k and v n_kv_heads."""
        B, T, _ = x.shape
        heads = lambda t: t.view(B, T, -1, self.d_head).transpose(1, 2)  # (B, T, h * d_head) -> (B, h, T, d_head)
        q, k, *rest = (heads(t) for t in self.W_QKV(x).split(self.split, -1))  # one product, its rows split
        v = rest[0] if rest else k  # values="k": z = A k
        if self.value_embed is not None:  # v = (1 - λ) v + λ VE[token]: recorded mixed, as z reads it
            v = self.value_embed(v)
        return self.tap_heads("hook_q", q), self.tap_heads("hook_k", k), self.tap_heads("hook_v", v)

    def project_q(self, x: torch.Tensor) -> torch.Tensor:
        """Cross-attention's q = x W_Q + b_Q, per head: W_QKV's first rows (as nn.MultiheadAttention's in_proj)."""
        B, T, _ = x.shape
        d_attn = self.split[0]
        bias = self.W_QKV.bias[:d_attn] if self.W_QKV.bias is not None else None
        q = (
            F.linear(x, self.W_QKV.weight[:d_attn], bias).view(B, T, self.n_heads, self.d_head).transpose(1, 2)
        )  # (B, n_heads, T, d_head)
        return self.tap_heads("hook_q", q)

    def project_kv(self, memory: torch.Tensor):
        """Cross-attention's k = m W_K + b_K, v = m W_V + b_V from the memory m (the encoder's output), per head."""
        B, S, _ = memory.shape
        d_attn = self.split[0]
        bias = self.W_QKV.bias[d_attn:] if self.W_QKV.bias is not None else None
        kv = F.linear(memory, self.W_QKV.weight[d_attn:], bias).view(B, S, self.n_proj - 1, self.n_heads, self.d_head)
        k, *rest = kv.permute(2, 0, 3, 1, 4).unbind(0)  # each (B, n_heads, S, d_head)
        v = rest[0] if rest else k  # values="k": z = A k
        return self.tap_heads("hook_k", k), self.tap_heads("hook_v", v)

    def attend(self, q, k, v, offset: int, key_mask: torch.Tensor | None = None) -> torch.Tensor:
        """z = softmax(q k^T / sqrt(d_head)) v: written out while a trace records (or explicit()),
        else torch's fused kernel. q: (B, n_heads, T, d_head); k, v: (B, n_heads, offset + T, d_head);
        key_mask: (B, offset + T) bool, False where a key is padding. With grouped-query attention k
        and v have n_kv_heads heads: the written-out path repeats each for its group (query head h
        reads head h // group), the fused kernel reads them in place (enable_gqa)."""
        T, T_k = q.shape[-2], k.shape[-2]
        gqa = self.group > 1
        p = self.dropout_attn if self.training else 0.0
        # one new query after cached keys sees them all, unless a sliding window hides the older ones
        needs_mask = self.causal and (T > 1 or (self.window is not None and T_k > self.window))
        mask: torch.Tensor | None
        if key_mask is not None:  # padding: (T, T_k) causal & (B, 1, 1, T_k) real keys -> (B, 1, T, T_k)
            pad = key_mask[:, None, None, :].bool()  # (B, 1, 1, T_k)
            mask = pad & window_mask(T, T_k, self.window, q.device) if needs_mask else pad
        else:
            mask = window_mask(T, T_k, self.window, q.device) if needs_mask else None
        if explicit() or self.cap is not None:  # torch's fused kernel has no soft-cap
            if gqa:  # (B, n_kv_heads, T_k, d_head) -> (B, n_heads, T_k, d_head): each kv head for its group
                k, v = k.repeat_interleave(self.group, dim=1), v.repeat_interleave(self.group, dim=1)
            tapped = (lambda name, t: tap(self.tap_prefix + name, t)) if explicit() else untapped
            z, _, _ = attention(q, k, v, mask, p, tapped, self.scale, self.cap)
            return z  # tapped as hook_z by forward
        if offset == 0 and key_mask is None and self.window is None:
            return F.scaled_dot_product_attention(
                q, k, v, dropout_p=p, is_causal=needs_mask, enable_gqa=gqa, scale=self.factor
            )
        # padding, a chunk after cached tokens (its causal mask is offset) or a window: is_causal expresses none
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p, enable_gqa=gqa, scale=self.factor)

    def tap_heads(self, name: str, t: torch.Tensor) -> torch.Tensor:
        """Tap t (B, heads, T, d_head) under TransformerLens's layout (B, T, heads, d_head); t or the edit."""
        flip = lambda u: u.transpose(1, 2)  # (B, heads, T, d_head) <-> (B, T, heads, d_head)
        return tap_view(self.tap_prefix + name, t, flip, flip)

    def head_weights(self) -> dict[str, torch.Tensor]:
        """W_Q, W_K, W_V (n_heads, d_model, d_head) and W_O (n_heads, d_head, d_model), per query head,
        in the row-vector convention of the formulas: q = x W_Q[h], out = sum_h z_h W_O[h]. With
        grouped-query attention W_K[h] and W_V[h] are those of the key/value head that h reads."""
        W_q, W_k, *W_v = self.W_QKV.weight.split(self.split)  # (n_heads * d_head, d_model), (n_kv_heads * d_head, ...)
        W_v = W_v[0] if W_v else W_k

        def per_head(W):  # (h * d_head, d_model) -> (n_heads, d_model, d_head)
            heads = W.T.reshape(W.shape[1], -1, self.d_head).transpose(0, 1)  # (h, d_model, d_head)
            return heads.repeat_interleave(self.n_heads // heads.shape[0], dim=0)

        return {"W_Q": per_head(W_q), "W_K": per_head(W_k), "W_V": per_head(W_v), "W_O": self.head_W_O()}

    def head_W_O(self) -> torch.Tensor:
        """W_O per head, (n_heads, d_head, d_model): head h's output is z_h W_O[h]."""
        return self.W_O.weight.T.reshape(self.n_heads, self.d_head, -1)

    def head_biases(self) -> dict[str, torch.Tensor]:
        """b_Q, b_K, b_V (n_heads, d_head), per query head as head_weights: q = x W_Q[h] + b_Q[h]; zeros
        without biases; with grouped-query attention b_K[h], b_V[h] are those of the head h reads."""
        b = self.W_QKV.bias
        if b is None:
            zero = self.W_QKV.weight.new_zeros(self.n_heads, self.d_head)
            return {"b_Q": zero, "b_K": zero, "b_V": zero}
        b_q, b_k, *b_v = b.split(self.split)  # (n_heads * d_head,), (n_kv_heads * d_head,) ...
        per_head = lambda t: t.view(-1, self.d_head).repeat_interleave(self.n_heads * self.d_head // t.numel(), dim=0)
        return {"b_Q": per_head(b_q), "b_K": per_head(b_k), "b_V": per_head(b_v[0] if b_v else b_k)}
