"""Scaled dot-product attention, multi-head attention, and the KV cache.

    scores = q k^T / sqrt(d_head)         how well each query matches each key
    A      = softmax(scores)  (row-wise)   each row is >= 0 and sums to 1
    z      = A v                           each z_i is a convex combination of the values v_j

Multi-head attention runs this once per head on its own projections q = x W_Q, k = x W_K,
v = x W_V, concatenates the heads' z and maps them back with W_O; the block adds the result to
the residual stream. `attention` below is the truth; the fused kernel
(torch's scaled_dot_product_attention) is a faster path that a test proves equal to it.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .position import RoPE
from .tap import active, explicit, tap


def attention(q, k, v, mask=None, dropout_p: float = 0.0):
    """z = softmax(q k^T / sqrt(d_head)) v, written out. Returns (z, pattern, scores).

    q: (B, n_heads, T_q, d_head); k, v: (B, n_heads, T_k, d_head); mask: bool, True = may attend,
    (T_q, T_k) or anything that broadcasts to the scores, e.g. (B, 1, T_q, T_k) with padding.
    Attention dropout zeroes weights and scales the rest by 1/(1-p) without renormalising, so in
    training a row of the pattern no longer sums to exactly 1.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, n_heads, T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    pattern = scores.softmax(dim=-1)  # A
    if dropout_p > 0.0:
        pattern = F.dropout(pattern, dropout_p)
    z = pattern @ v  # (B, n_heads, T_q, d_head)
    return z, pattern, scores


def causal_mask(T_q: int, T_k: int, device=None) -> torch.Tensor:
    """Query i (at absolute position T_k - T_q + i) may attend to keys 0 .. its own position."""
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril(diagonal=T_k - T_q)  # (T_q, T_k)


class KVCache:
    """Keys and values of the tokens seen so far, for incremental decoding.

    One preallocated buffer pair per layer, (B, n_heads, n_ctx, d_head), filled left to right;
    `length` tokens are stored. The model advances `length` after each forward.
    """

    def __init__(self, cfg, batch_size: int = 1, device=None, dtype=torch.float32):
        shape = (batch_size, cfg.n_heads, cfg.n_ctx, cfg.d_head)
        self.k = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layers)]
        self.v = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layers)]
        self.n_ctx = cfg.n_ctx
        self.length = 0

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        """Store this step's k, v (B, n_heads, T, d_head) and return all keys and values so far."""
        start, T = self.length, k.shape[-2]
        self.k[layer].narrow(2, start, T).copy_(k)  # k_buf[:, :, start:start+T] = k
        self.v[layer].narrow(2, start, T).copy_(v)
        return self.k[layer].narrow(2, 0, start + T), self.v[layer].narrow(2, 0, start + T)  # (B, n_heads, start+T, d_head)


class MultiHeadAttention(nn.Module):
    """n_heads attention heads side by side, then W_O: Attn(x) = concat_h(z_h) W_O + b_O.

    W_QKV holds W_Q, W_K and W_V side by side so one matrix product computes q, k and v for all
    heads (the layout of GPT-2's c_attn); `head_weights()` shows them per head. The output is
    recorded as blocks.L.hook_attn_out; residual dropout (training only) applies after that.
    """

    def __init__(self, cfg, layer: int = 0):
        super().__init__()
        self.layer = layer
        self.tap_prefix = f"blocks.{layer}.attn."
        self.n_heads, self.d_head = cfg.n_heads, cfg.d_head
        self.causal = cfg.causal
        self.dropout_attn, self.dropout_resid = cfg.dropout_attn, cfg.dropout_resid
        d_attn = cfg.n_heads * cfg.d_head
        self.n_proj = 3 if cfg.values == "v" else 2  # values="k": no W_V, the keys are mixed
        self.W_QKV = nn.Linear(cfg.d_model, self.n_proj * d_attn, bias=cfg.bias)
        self.W_O = nn.Linear(d_attn, cfg.d_model, bias=cfg.bias)
        self.rope = RoPE(cfg.n_ctx, cfg.d_head, cfg.rope_base) if cfg.pos == "rope" else None

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, key_mask: torch.Tensor | None = None) -> torch.Tensor:
        """key_mask: (B, T_k) bool, False at padding: no query attends to those keys (an encoder's batch)."""
        B, T, _ = x.shape
        offset = cache.length if cache is not None else 0
        q, k, v = self.project(x)  # q = x W_Q, k = x W_K, v = x W_V: each (B, n_heads, T, d_head)
        if self.rope is not None:
            q, k = self.rope(q, offset), self.rope(k, offset)
            self._tap_heads(("hook_rot_q", q), ("hook_rot_k", k))
        if cache is not None:
            k, v = cache.append(self.layer, k, v)  # (B, n_heads, offset + T, d_head)
        z = self.attend(q, k, v, offset, key_mask)  # z = softmax(q k^T / sqrt(d_head)) v: (B, n_heads, T, d_head)
        z = z.transpose(1, 2)  # (B, T, n_heads, d_head)
        # each head's own output z_h W_O[h]; they add up (with the bias) to W_O's output
        tap(self.tap_prefix + "hook_result", lambda: torch.einsum("bthd,hdm->bthm", z, self.head_weights()["W_O"]))
        out = self.W_O(z.reshape(B, T, self.n_heads * self.d_head))  # heads concatenated, then W_O: (B, T, d_model)
        tap(f"blocks.{self.layer}.hook_attn_out", out)
        return F.dropout(out, self.dropout_resid, self.training) if self.dropout_resid > 0 else out

    def project(self, x: torch.Tensor):
        """q = x W_Q + b_Q, k = x W_K + b_K, v = x W_V + b_V (values="k": v = k), per head."""
        B, T, _ = x.shape
        qkv = self.W_QKV(x).view(B, T, self.n_proj, self.n_heads, self.d_head)  # (B, T, 3 or 2, n_heads, d_head)
        q, k, *v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each (B, n_heads, T, d_head)
        v = v[0] if v else k  # values="k": z = A k
        self._tap_heads(("hook_q", q), ("hook_k", k), ("hook_v", v))
        return q, k, v

    def attend(self, q, k, v, offset: int, key_mask: torch.Tensor | None = None) -> torch.Tensor:
        """z = softmax(q k^T / sqrt(d_head)) v: written out while a trace records (or explicit()),
        else torch's fused kernel. q: (B, n_heads, T, d_head); k, v: (B, n_heads, offset + T, d_head);
        key_mask: (B, offset + T) bool, False where a key is padding."""
        T, T_k = q.shape[-2], k.shape[-2]
        p = self.dropout_attn if self.training else 0.0
        needs_mask = self.causal and T > 1  # one new query after cached keys sees them all
        if key_mask is not None:  # padding: (T, T_k) causal & (B, 1, 1, T_k) real keys -> (B, 1, T, T_k)
            pad = key_mask[:, None, None, :].bool()  # (B, 1, 1, T_k)
            mask = pad & causal_mask(T, T_k, q.device) if needs_mask else pad
        else:
            mask = causal_mask(T, T_k, q.device) if needs_mask else None
        if explicit():
            z, pattern, scores = attention(q, k, v, mask, p)
            tap(self.tap_prefix + "hook_dots", lambda: q @ k.transpose(-2, -1))  # raw q . k, unscaled, unmasked
            tap(self.tap_prefix + "hook_attn_scores", scores)
            tap(self.tap_prefix + "hook_pattern", pattern)
            self._tap_heads(("hook_z", z))
            return z
        if offset == 0 and key_mask is None:
            return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=needs_mask)
        # padding, or a chunk after cached tokens (its causal mask is offset): is_causal cannot express either
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)

    def _tap_heads(self, *named) -> None:
        if active():
            for name, t in named:  # (B, n_heads, T, d_head) -> TransformerLens's (B, T, n_heads, d_head)
                tap(self.tap_prefix + name, lambda t=t: t.transpose(1, 2))

    def head_weights(self) -> dict[str, torch.Tensor]:
        """W_Q, W_K, W_V (n_heads, d_model, d_head) and W_O (n_heads, d_head, d_model), per head,
        in the row-vector convention of the formulas: q = x W_Q[h], out = sum_h z_h W_O[h]."""
        d_attn = self.n_heads * self.d_head
        W_q, W_k, *W_v = self.W_QKV.weight.split(d_attn)  # each (n_heads * d_head, d_model)
        W_v = W_v[0] if W_v else W_k
        per_head = lambda W: W.T.reshape(-1, self.n_heads, self.d_head).transpose(0, 1)  # (n_heads, d_model, d_head)
        W_o = self.W_O.weight.T.reshape(self.n_heads, self.d_head, -1)  # (n_heads, d_head, d_model)
        return {"W_Q": per_head(W_q), "W_K": per_head(W_k), "W_V": per_head(W_v), "W_O": W_o}
