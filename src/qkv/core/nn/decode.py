"""New tokens through the model with plain tensor functions: the decoding fast path.

With a KV cache holding the context, a new token costs a few matrix-vector products per layer,
and at small sizes the time goes into Python instead: calling ~40 modules, looking up their
weights, reshaping. `Decoder` gathers the weights once and `step` does GPT.forward's arithmetic
for one token of one sequence; `step_batch` does it for one new token in each of several rows.
It is an optimisation, like the fused attention kernel: tests prove it equal to GPT.forward for
every positional kind and both norms, and generation uses it only in evaluation mode (it applies
no dropout).

Two things make a step cheap:
- the weight matrices are kept transposed, (d_in, d_out) in memory order, so that x W is one
  `addmm` over a contiguous matrix; a matrix-vector product in that layout runs about twice as
  fast as F.linear's (d_out, d_in) one at `baby`'s sizes on an x86 CPU with MKL. These are copies:
  `Decoder.of(model)` keeps them with the model (the weights' size in memory) and makes them again
  when a weight has changed since (an optimizer step, a load, a move to another device);
- nothing goes through nn.Module calls, hooks or the tap machinery.

Batched steps (step_batch) take each row's own position and a mask of the cache slots it may
read, so rows whose prompts have different lengths share one cache (see sample.generate_batch).
"""

from __future__ import annotations

from types import SimpleNamespace

import torch
import torch.nn.functional as F

from .layernorm import LayerNorm


def _norm(ln):
    """(weight, bias, eps) of a LayerNorm, or None for the identity."""
    return (ln.weight, ln.bias, ln.eps) if isinstance(ln, LayerNorm) else None


def _ln(x: torch.Tensor, norm) -> torch.Tensor:
    if norm is None:  # norm="none"
        return x
    weight, bias, eps = norm
    return torch.layer_norm(x, weight.shape, weight, bias, eps)  # F.layer_norm without its Python checks


def _add(L, x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """x + out through the residual connection, or out alone for a block without one."""
    return x + out if L.residual else out


def _t(weight: torch.Tensor) -> torch.Tensor:
    """W (d_out, d_in) as nn.Linear stores it -> W^T (d_in, d_out), contiguous."""
    return weight.detach().t().contiguous()


def _linear(x: torch.Tensor, W_t: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    """x W^T + b with W^T already transposed: (B, d_in) -> (B, d_out). The same sum as F.linear."""
    return torch.addmm(b, x, W_t) if b is not None else torch.mm(x, W_t)


def _rope_rows(rope, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """RoPE for one new token per row, row b at its own position positions[b].

    x: (B, n_heads, 1, d_head); the arithmetic of RoPE.forward with per-row angles."""
    B = x.shape[0]
    cos, sin = rope.cos[positions].view(B, 1, 1, -1), rope.sin[positions].view(B, 1, 1, -1)  # (B, 1, 1, d_head/2)
    pairs = x.unflatten(-1, (-1, 2))  # (B, n_heads, 1, d_head/2, 2)
    x0, x1 = pairs[..., 0], pairs[..., 1]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


class Decoder:
    def __init__(self, model):
        cfg = model.cfg
        self.n_ctx = cfg.n_ctx
        self.embed = model.embed.weight.detach()  # (d_vocab, d_model)
        self.embed_scale = model.embed_scale
        # (n_ctx, d_model): the vector of every position, or None for rope and none
        self.pos_table = model.pos_embed(0, cfg.n_ctx).detach() if model.pos_embed is not None else None
        bias = lambda linear: linear.bias.detach() if linear.bias is not None else None
        self.layers = [
            SimpleNamespace(
                pre_norm=cfg.norm != "post",
                residual=cfg.residual,
                ln1=_norm(b.ln1),
                ln2=_norm(b.ln2),
                index=b.attn.layer,
                H=b.attn.n_heads,
                D=b.attn.d_head,
                n_proj=b.attn.n_proj,
                rope=b.attn.rope,
                W_QKV=_t(b.attn.W_QKV.weight),
                b_QKV=bias(b.attn.W_QKV),
                W_O=_t(b.attn.W_O.weight),
                b_O=bias(b.attn.W_O),
                W_in=_t(b.mlp.fc_in.weight),
                b_in=bias(b.mlp.fc_in),
                W_out=_t(b.mlp.fc_out.weight),
                b_out=bias(b.mlp.fc_out),
                act=b.mlp.act,
            )
            for b in model.blocks
        ]
        self.ln_final = _norm(model.ln_final)
        self.W_U, self.b_U = _t(model.unembed.weight), bias(model.unembed)  # W_U: (d_model, d_vocab)

    @classmethod
    def of(cls, model) -> "Decoder":
        """The model's Decoder, made again only when a weight changed: every in-place change bumps a
        tensor's version, and a move or a new tensor changes its storage."""
        key = tuple((p.data_ptr(), p._version) for p in model.parameters())
        kept = model.__dict__.get("_decoder")  # a plain attribute, not a submodule: not in the state dict
        if kept is None or kept[0] != key:
            kept = model.__dict__["_decoder"] = (key, cls(model))
        return kept[1]

    @staticmethod
    def _attention(L, x: torch.Tensor, cache, t: int, positions, key_mask) -> torch.Tensor:
        """Attention of one new token per row, written to cache slot t. x: (B, d_model)."""
        B = x.shape[0]
        qkv = _linear(x, L.W_QKV, L.b_QKV).view(B, L.n_proj, L.H, 1, L.D)
        q, k = qkv[:, 0], qkv[:, 1]  # each (B, n_heads, 1, d_head)
        v = qkv[:, 2] if L.n_proj == 3 else k  # values="k": z = A k
        if L.rope is not None:
            if positions is None:  # one row at position t
                q, k = L.rope(q, t), L.rope(k, t)
            else:
                q, k = _rope_rows(L.rope, q, positions), _rope_rows(L.rope, k, positions)
        K, V = cache.k[L.index], cache.v[L.index]  # (B, n_heads, n_ctx, d_head)
        K[:, :, t], V[:, :, t] = k[:, :, 0], v[:, :, 0]
        # no causal mask: every cached key is in the past; 4-D inputs keep SDPA on its fast kernel
        z = F.scaled_dot_product_attention(
            q, K[:, :, : t + 1], V[:, :, : t + 1], attn_mask=key_mask
        )  # (B, n_heads, 1, d_head)
        return _linear(z.view(B, L.H * L.D), L.W_O, L.b_O)  # (B, d_model)

    @staticmethod
    def _mlp(L, x: torch.Tensor) -> torch.Tensor:
        return _linear(L.act(_linear(x, L.W_in, L.b_in)), L.W_out, L.b_out)

    def _blocks(self, x: torch.Tensor, cache, t: int, positions=None, key_mask=None) -> torch.Tensor:
        """x (B, d_model), the new tokens' embeddings -> logits (B, d_vocab); fills cache slot t."""
        for L in self.layers:
            if L.pre_norm:  # x = x + Attn(LN1(x)); x = x + MLP(LN2(x))
                x = _add(L, x, self._attention(L, _ln(x, L.ln1), cache, t, positions, key_mask))
                x = _add(L, x, self._mlp(L, _ln(x, L.ln2)))
            else:  # x = LN1(x + Attn(x)); x = LN2(x + MLP(x))
                x = _ln(_add(L, x, self._attention(L, x, cache, t, positions, key_mask)), L.ln1)
                x = _ln(_add(L, x, self._mlp(L, x)), L.ln2)
        cache.length = t + 1
        h = _ln(x, self.ln_final)
        return _linear(h, self.W_U, self.b_U)  # (B, d_vocab)

    def _check(self, cache) -> int:
        t = cache.length
        if t >= self.n_ctx:
            raise ValueError(f"the cache is full ({t} tokens, n_ctx {self.n_ctx})")
        return t

    def step(self, token: int, cache) -> torch.Tensor:
        """Logits (d_vocab,) for `token` at position cache.length; stores its keys and values."""
        if torch.is_grad_enabled():  # generation runs under inference_mode; anywhere else, build no graph
            with torch.no_grad():
                return self.step(token, cache)
        t = self._check(cache)
        x = self.embed[token]  # (d_model,): W_E[token]
        if self.embed_scale != 1.0:
            x = x * self.embed_scale  # times sqrt(d_model) if cfg.embed_scale
        if self.pos_table is not None:
            x = x + self.pos_table[t]
        return self._blocks(x.view(1, -1), cache, t)[0]  # (d_vocab,)

    def step_batch(
        self, tokens: torch.Tensor, cache, positions: torch.Tensor, key_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits (B, d_vocab) for one new token per row, all stored in cache slot cache.length.

        tokens, positions: (B,) ids and each row's own position (its tokens before, padding not
        counted); key_mask: (B, cache.length + 1) bool, False at the slots a row must not read
        (its padding), or None when every row reads every slot."""
        if torch.is_grad_enabled():
            with torch.no_grad():
                return self.step_batch(tokens, cache, positions, key_mask)
        t = self._check(cache)
        x = self.embed[tokens]  # (B, d_model)
        if self.embed_scale != 1.0:
            x = x * self.embed_scale
        if self.pos_table is not None:
            x = x + self.pos_table[positions]
        mask = key_mask[:, None, None, :] if key_mask is not None else None  # (B, 1, 1, t + 1)
        return self._blocks(x, cache, t, positions, mask)


def decode_step(model, token: int, cache) -> torch.Tensor:
    """One step without keeping a Decoder (gathers the weights each call)."""
    return Decoder(model).step(token, cache)
