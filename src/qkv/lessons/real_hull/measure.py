"""Lesson: z in its values' hull on every head of a real encoder, and where the guarantee ends.

For every head h of every layer (all-MiniLM-L6-v2: 72 heads) on TEXT, with a_j the head's weights:

    z           = Σ_j a_j v_j                  in conv{v_j}              (every position; an LP each)
    z W_O[h]    = Σ_j a_j (v_j W_O[h])         in conv{v_j W_O[h]}       a linear map keeps the weights
    x + z W_O[h]                               against conv{v_j W_O[h]}  the seed's residual update
    s = x + attn_out = c + z W_O[h]            in conv{c + v_j W_O[h]}   c = x + b_O + the other heads:
                                                                         moving every point by c moves the hull
    resid_mid = LN1(s)                         against conv{LN1(c + v_j W_O[h])}   post-norm: LN1 is not affine

The last four at the position of QUERY (the second apple). Each is a linear program of
qkv.core.see.hull (L1 distance to the hull, 0 inside, at qkv.check's relative tolerance).
"""

from __future__ import annotations

import numpy as np
import torch

from qkv.lessons.common.real import model_name
from qkv.lessons.convex.measure import pick_head
from qkv.lessons.real_hull.result import Example, Extreme, Result

NEEDS_MODEL = "minilm"  # run() loads MiniLM, or the BERT-family encoder --ckpt names
READS = ("encoder",)  # the model families (Family.design) it reads
TEXT = "I bought Apple shares, then ate an apple."
QUERY, CUE = "apple", "ate"  # the query is the last occurrence of QUERY; CUE picks the head of the figure
TOL = 1e-5  # the relative tolerance qkv.check uses for float32 activations
STAGES = ("zW", "x_zW", "sum", "mid")


def _distance(point, vertices) -> float:
    from qkv.core.see.hull import convex_weights

    return convex_weights(np.asarray(point), np.asarray(vertices), tol=TOL).distance


def layer_norm(ln, x: torch.Tensor) -> torch.Tensor:
    """The block's LayerNorm in float64 (the same weights, eps)."""
    return torch.nn.functional.layer_norm(
        x, x.shape[-1:], ln.weight.detach().double(), ln.bias.detach().double(), ln.eps
    )


@torch.no_grad()
def head_stages(block, trace, layer: int, head: int, q: int) -> dict:
    """The four distances of one head at query q, and what explains them (float64 throughout)."""
    W_O = block.attn.head_weights()["W_O"][head].detach().double()  # (d_head, d_model)
    V = trace["v", layer][0, :, head].double()  # (T, d_head)
    z = trace["z", layer][0, q, head].double()  # (d_head,)
    x = trace["resid_pre", layer][0, q].double()  # (d_model,)
    s = x + trace["attn_out", layer][0, q].double()  # x + Σ_h z_h W_O[h] + b_O
    VW, zW = V @ W_O, z @ W_O  # (T, d_model), (d_model,)
    c = s - zW  # x + b_O + the other heads' outputs
    mid = trace["resid_mid", layer][0, q].double()
    mapped = layer_norm(block.ln1, c + VW)  # (T, d_model): the values sent where z was sent
    return {
        "zW": _distance(zW, VW),
        "x_zW": _distance(x + zW, VW),
        "sum": _distance(s, c + VW),
        "mid": _distance(mid, mapped),
        "norm_x": float(x.norm()),
        "norm_zW": float(zW.norm()),
        "ln_gap": float((layer_norm(block.ln1, s) - mid).abs().max()),
        "max_weight": float(trace["pattern", layer][0, head, q].max()),
    }


@torch.no_grad()
def measure(model, tokenizer, seed: int = 0) -> Result:
    ids = tokenizer.encode(TEXT)
    tokens = [tokenizer.display(i) for i in ids]
    word = tokenizer.encode(QUERY)[1:-1]  # without [CLS] and [SEP]
    if len(word) != 1 or word[0] not in ids:
        raise ValueError(f"this lesson needs {QUERY!r} to be one token of the tokenizer")
    q = len(ids) - 1 - ids[::-1].index(word[0])  # the last occurrence
    cue = tokens.index(CUE) if CUE in tokens else q - 2
    _, trace = model.run_with_trace(torch.tensor([ids]))
    cfg, T = model.cfg, len(ids)
    z_dist = np.zeros((cfg.n_layers, cfg.n_heads))  # the largest distance of z over the positions
    z_out = 0
    per = {k: np.zeros((cfg.n_layers, cfg.n_heads)) for k in (*STAGES, "norm_x", "norm_zW", "ln_gap", "max_weight")}
    for layer in range(cfg.n_layers):
        V, Z = trace["v", layer][0].double().numpy(), trace["z", layer][0].double().numpy()  # (T, n_heads, d_head)
        for head in range(cfg.n_heads):
            d = [_distance(Z[i, head], V[:, head]) for i in range(T)]
            z_dist[layer, head], z_out = max(d), z_out + sum(x > 0 for x in d)
            for k, v in head_stages(model.blocks[layer], trace, layer, head, q).items():
                per[k][layer, head] = v
    n_total = cfg.n_layers * cfg.n_heads
    mid = per["mid"]
    lo, hi = np.unravel_index(int(np.argmin(mid)), mid.shape), np.unravel_index(int(np.argmax(mid)), mid.shape)
    L, H = pick_head(trace, q, cue)
    return Result(
        model_name=model_name(model),
        text=TEXT,
        tokens=tokens,
        position=q,
        query=tokens[q],
        cue=tokens[cue],
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        n_total=n_total,
        d_head=cfg.d_head,
        d_model=cfg.d_model,
        tol=TOL,
        stages=list(STAGES),
        z_points=n_total * T,
        z_outside=int(z_out),
        z_max_distance=float(z_dist.max()),
        distances={"z": z_dist.tolist(), **{k: per[k].tolist() for k in STAGES}},
        outside={k: int((per[k] > 0).sum()) for k in STAGES},
        max_distance={k: float(per[k].max()) for k in STAGES},
        min_distance={k: float(per[k].min()) for k in STAGES},
        median_distance={k: float(np.median(per[k])) for k in STAGES},
        norm_x=[float(per["norm_x"][layer, 0]) for layer in range(cfg.n_layers)],
        norm_zW_median=float(np.median(per["norm_zW"])),
        norm_zW_max=float(per["norm_zW"].max()),
        ln_gap=float(per["ln_gap"].max()),
        mid_min=_extreme(lo, mid, per["max_weight"]),
        mid_max=_extreme(hi, mid, per["max_weight"]),
        max_weight=per["max_weight"].tolist(),
        example=_example(trace, L, H, q, cue),
    )


def _extreme(at, mid: np.ndarray, max_weight: np.ndarray) -> Extreme:
    """The head at `at` (layer, head) of the (n_layers, n_heads) tables of stage "mid" distances and weights."""
    return Extreme(layer=int(at[0]), head=int(at[1]), distance=float(mid[at]), max_weight=float(max_weight[at]))


def _example(trace, layer: int, head: int, q: int, cue: int) -> Example:
    """The figure's head: its weights at the query `q`, its values and z there."""
    return Example(
        layer=layer,
        head=head,
        cue_weight=float(trace["pattern", layer][0, head, q, cue]),
        weights=trace["pattern", layer][0, head, q].double().tolist(),
        values=trace["v", layer][0, :, head].double().tolist(),
        z=trace["z", layer][0, q, head].double().tolist(),
    )
