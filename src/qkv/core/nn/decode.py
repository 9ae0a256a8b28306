"""One new token through the model with plain tensor functions: the decoding fast path.

With a KV cache holding the context, a new token costs a few matrix-vector products per layer,
and at small sizes the time goes into Python instead: calling ~40 modules, looking up their
weights, reshaping. `Decoder` gathers the weights once (references, not copies) and `step` does
GPT.forward's arithmetic for one token of one sequence. It is an optimisation, like the fused
attention kernel: tests prove it equal to GPT.forward for every positional kind and both norms,
and generation uses it only in evaluation mode (it applies no dropout).
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
    return F.layer_norm(x, weight.shape, weight, bias, eps)


def _add(L, x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """x + out through the residual connection, or out alone for a block without one."""
    return x + out if L.residual else out


class Decoder:
    def __init__(self, model):
        cfg = model.cfg
        self.n_ctx = cfg.n_ctx
        self.embed = model.embed.weight  # (d_vocab, d_model)
        self.embed_scale = model.embed_scale
        self.pos_embed = model.pos_embed
        self.layers = [SimpleNamespace(
            pre_norm=cfg.norm != "post", residual=cfg.residual, ln1=_norm(b.ln1), ln2=_norm(b.ln2), index=b.attn.layer,
            H=b.attn.n_heads, D=b.attn.d_head, n_proj=b.attn.n_proj, rope=b.attn.rope,
            W_QKV=b.attn.W_QKV.weight, b_QKV=b.attn.W_QKV.bias, W_O=b.attn.W_O.weight, b_O=b.attn.W_O.bias,
            W_in=b.mlp.fc_in.weight, b_in=b.mlp.fc_in.bias, W_out=b.mlp.fc_out.weight, b_out=b.mlp.fc_out.bias,
            act=b.mlp.act) for b in model.blocks]
        self.ln_final = _norm(model.ln_final)
        self.W_U, self.b_U = model.unembed.weight, model.unembed.bias

    @staticmethod
    def _attention(L, x: torch.Tensor, cache, t: int) -> torch.Tensor:
        q, k, *v = F.linear(x, L.W_QKV, L.b_QKV).view(L.n_proj, 1, L.H, 1, L.D)  # each (1, n_heads, 1, d_head)
        v = v[0] if v else k  # values="k": z = A k
        if L.rope is not None:
            q, k = L.rope(q, t), L.rope(k, t)
        K, V = cache.k[L.index], cache.v[L.index]  # (1, n_heads, n_ctx, d_head)
        K[:, :, t], V[:, :, t] = k[:, :, 0], v[:, :, 0]
        # no mask: every cached key is in the past; 4-D inputs keep SDPA on its fast kernel
        z = F.scaled_dot_product_attention(q, K[:, :, : t + 1], V[:, :, : t + 1])  # (1, n_heads, 1, d_head)
        return F.linear(z.view(1, L.H * L.D), L.W_O, L.b_O)  # (1, d_model)

    @staticmethod
    def _mlp(L, x: torch.Tensor) -> torch.Tensor:
        return F.linear(L.act(F.linear(x, L.W_in, L.b_in)), L.W_out, L.b_out)

    @torch.no_grad()
    def step(self, token: int, cache) -> torch.Tensor:
        """Logits (d_vocab,) for `token` at position cache.length; stores its keys and values."""
        t = cache.length
        if t >= self.n_ctx:
            raise ValueError(f"the cache is full ({t} tokens, n_ctx {self.n_ctx})")
        x = self.embed[token] * self.embed_scale  # (d_model,): W_E[token], times sqrt(d_model) if cfg.embed_scale
        if self.pos_embed is not None:
            x = x + self.pos_embed(t, 1)[0]
        x = x.view(1, -1)  # (1, d_model)
        for L in self.layers:
            if L.pre_norm:  # x = x + Attn(LN1(x)); x = x + MLP(LN2(x))
                x = _add(L, x, self._attention(L, _ln(x, L.ln1), cache, t))
                x = _add(L, x, self._mlp(L, _ln(x, L.ln2)))
            else:  # x = LN1(x + Attn(x)); x = LN2(x + MLP(x))
                x = _ln(_add(L, x, self._attention(L, x, cache, t)), L.ln1)
                x = _ln(_add(L, x, self._mlp(L, x)), L.ln2)
        cache.length = t + 1
        h = _ln(x, self.ln_final) if self.ln_final else x
        return F.linear(h, self.W_U, self.b_U)[0]  # (d_vocab,)


def decode_step(model, token: int, cache) -> torch.Tensor:
    """One step without keeping a Decoder (gathers the weights each call)."""
    return Decoder(model).step(token, cache)
