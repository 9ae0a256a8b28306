"""Where q, k and v come from: one head's projections of the vectors attention reads, every number shown.

    x_j  = LN1(resid_pre_j)  (pre-norm; post-norm and norm="none": x_j = resid_pre_j, attention reads it as it is)
    q_i  = x_i W_Q[h] + b_Q[h]        the chosen token's query       (d_model) x (d_model, d_head) -> (d_head)
    k_j  = x_j W_K[h] + b_K[h]        every key j the query can see
    v_j  = x_j W_V[h] + b_V[h]        (values="k": v_j = k_j)
    q_i . k_j = sum_c q_i[c] k_j[c]   the products q_i[c] k_j[c] one coordinate at a time, then their sum

With RoPE, q and k are rotated after the projection (by the angle of their positions) and the dot
product is taken between the rotated vectors: `q_rot`, `k_rot` are given too and `product` uses them.

    doc = origin(model, tokenizer, "我 投资了 苹果 ，", layer=0, head=1, token=3)

The projections are computed here in float64 from the traced x and the model's weights (the
formula, not the model's own matrix product), so a test can hold them against the trace's
hook_q, hook_k, hook_v and hook_dots. Plain JSON-ready data out (kind "origin").
"""

from __future__ import annotations

import math

import torch

from qkv.analysis.inputs import check_ids, read_text
from qkv.core.io.document import header
from qkv.core.io.refusal import family_title
from qkv.core.io.shown import Document
from qkv.core.model import evaluating
from qkv.core.see.indices import TextError, check_layer_head, check_token


def attention_input_name(cfg, layer: int) -> str:
    """The trace name of the vectors attention reads in `layer`: LN1's output in a pre-norm block,
    the residual stream itself in a post-norm block (LN comes after), without LayerNorm, or in OLMo-2's
    blocks (norm_placement "output": the norms come after each sub-layer)."""
    reads_ln1 = cfg.pre_norm and cfg.norm_placement != "output"
    return f"blocks.{layer}.ln1.hook_out" if reads_ln1 else f"blocks.{layer}.hook_resid_pre"


def read_ids(model, tokenizer, text, ids) -> tuple[str, list[int]]:
    """(text, ids) from a text or from token ids (one of the two), checked as the view checks them."""
    if (text is None) == (ids is None):
        raise TextError.of("errors.text_or_ids")
    if ids is None:
        return read_text(tokenizer, text, model.cfg.n_ctx)
    ids = check_ids(ids, model.cfg)
    return tokenizer.decode(ids), ids


def _rows(t: torch.Tensor) -> list:
    return t.tolist()


@torch.no_grad()
def origin(
    model,
    tokenizer,
    text: str | None = None,
    layer: int = 0,
    head: int = 0,
    token: int = -1,
    ids: list[int] | None = None,
) -> dict:
    """The kind-"origin" document: x, W_Q/W_K/W_V's products and biases, q, every visible k and v,
    and the coordinate-wise products q_i[c] k_j[c] with their sums, for one layer, head and query token."""
    cfg = model.cfg
    if not model.family.one_stack:
        raise TextError.of("errors.origin_family", title=family_title(model.family))
    layer, head = check_layer_head(cfg, layer, head)
    text, ids = read_ids(model, tokenizer, text, ids)
    T = len(ids)
    i = check_token(token, T)
    x_name = attention_input_name(cfg, layer)
    x = _attention_input(model, ids, x_name)  # (T, d_model)
    attn = model.blocks[layer].attn
    bias = attn.W_QKV.bias
    xW, b, (q, k, v), (q_dot, k_dot) = _head_products(attn, x, head)
    v = _value_embedded(attn, v, ids, head)
    rope = attn.rope is not None
    visible = _visible(attn, cfg.causal, i, T)
    product = q_dot[i][None, :] * k_dot[visible]  # (n_visible, d_head): q_i[c] k_j[c]
    dots = product.sum(-1)  # (n_visible,)
    scale = cfg.attn_scale or math.sqrt(cfg.d_head)  # Gemma: sqrt(query_pre_attn_scalar)
    tokens = [tokenizer.display(t) for t in ids]
    k_rot = k_dot if rope else None
    keys = [_key(j, tokens[j], x, xW, k, v, product[n], float(dots[n]), scale, k_rot) for n, j in enumerate(visible)]
    query = {"pos": i, "token": tokens[i], "x": _rows(x[i]), "xW_Q": _rows(xW["Q"][i]), "q": _rows(q[i])}
    if rope:
        query["q_rot"] = _rows(q_dot[i])
    return Document(
        {
            **header("origin"),
            "text": text,
            "ids": [int(t) for t in ids],
            "tokens": tokens,
            "layer": layer,
            "head": head,
            "token": i,
            "x_name": x_name,
            "norm": cfg.norm,
            "pre_norm": cfg.pre_norm,
            "qk_norm": attn.q_norm is not None,
            "rope": rope,
            "values": cfg.values,
            "causal": cfg.causal,
            "d_model": cfg.d_model,
            "d_head": cfg.d_head,
            "scale": scale,
            "bias": bool(bias is not None),
            **{name: _rows(b[name]) for name in ("b_Q", "b_K", "b_V")},
            "query": query,
            "keys": keys,
        }
    )  # a dict that shows itself in a notebook (shown.Document)


def _value_embedded(attn, v: torch.Tensor, ids: list[int], head: int) -> torch.Tensor:
    """v as attention reads it: with the speedrun's value embedding (nn/value_embed.py) v = (1 - λ) v + λ VE[token]
    of the key/value head that `head` reads; else v itself. v: (T, d_head), float64."""
    ve = attn.value_embed
    if ve is None:
        return v
    rows = ve.rows(torch.tensor([ids], device=ve.table.weight.device))  # (1, n_kv_heads, T, d_head)
    mix = ve.mix.double().to(v.device)
    return (1 - mix) * v + mix * rows[0, head // attn.group].double().to(v.device)


def _attention_input(model, ids: list[int], x_name: str) -> torch.Tensor:
    """What the layer's attention reads (x_name), traced once in eval mode: (T, d_model), float64."""
    device = next(model.parameters()).device
    with evaluating(model):
        _, tr = model.run_with_trace(torch.tensor([ids], device=device), names=[x_name])
    return tr[x_name][0].double()  # (T, d_model)


def _visible(attn, causal: bool, i: int, T: int) -> list[int]:
    """The keys query i reads: all T, or under the causal mask 0..i, or in a sliding-window layer (Gemma)
    only the last `window` of those."""
    if not causal:
        return list(range(T))
    return list(range(max(0, i + 1 - (attn.window or T)), i + 1))


def _head_products(attn, x: torch.Tensor, head: int):
    """One head's xW (x W_Q, x W_K, x W_V before the biases), its biases, (q, k, v) and the q, k the dot
    products read (after Qwen3's q/k norm and the rotation, where the model has them); float64."""
    W = {name: w[head].double() for name, w in attn.head_weights().items() if name != "W_O"}  # (d_model, d_head)
    b = {name: t[head].double().to(x.device) for name, t in attn.head_biases().items()}  # (d_head,) each
    xW = {"Q": x @ W["W_Q"], "K": x @ W["W_K"], "V": x @ W["W_V"]}  # each (T, d_head): x W, before the bias
    q, k, v = xW["Q"] + b["b_Q"], xW["K"] + b["b_K"], xW["V"] + b["b_V"]  # (T, d_head)
    q_dot, k_dot = q, k
    if attn.q_norm is not None and attn.qk_whole:  # OLMo-2: over every head's q (k) of a token at once
        q_all, k_all, *_ = attn.W_QKV(x.float()).split(attn.split, -1)  # (T, n_heads * d_head), (T, n_kv * d_head)
        d = attn.d_head
        q_dot = attn.q_norm(q_all).double()[:, head * d : (head + 1) * d]  # (T, d_head): this head's part
        kv = head // attn.group  # the key/value head it reads
        k_dot = attn.k_norm(k_all).double()[:, kv * d : (kv + 1) * d]
    elif attn.q_norm is not None:  # Qwen3, Gemma 3: an RMSNorm over each head's q and k, before the rotation
        q_dot, k_dot = (norm(t.float()).double() for norm, t in ((attn.q_norm, q), (attn.k_norm, k)))
    if attn.rope is not None:  # the rotation takes (B, n_heads, T, d_head) and positions 0..T-1
        q_dot = attn.rope(q_dot[None, None], 0)[0, 0]  # float64 (the float32 cos, sin tables promote)
        k_dot = attn.rope(k_dot[None, None], 0)[0, 0]
    return xW, b, (q, k, v), (q_dot, k_dot)


def _key(j: int, token: str, x, xW: dict, k, v, product: torch.Tensor, dot: float, scale: float, k_rot) -> dict:
    """Key j of the document: its x, x W_K, k, x W_V, v, the products q_i[c] k_j[c] and their sum
    (and k rotated, k_rot[j], under RoPE)."""
    key = {
        "pos": j,
        "token": token,
        "x": _rows(x[j]),
        "xW_K": _rows(xW["K"][j]),
        "k": _rows(k[j]),
        "xW_V": _rows(xW["V"][j]),
        "v": _rows(v[j]),
        "product": _rows(product),
        "dot": dot,
        "scaled": dot / scale,
    }
    if k_rot is not None:
        key["k_rot"] = _rows(k_rot[j])
    return key
