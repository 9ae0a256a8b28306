"""Lesson: z in the convex hull of its values on every head of a real LLM (SmolLM2-135M-Instruct).

A head's output before W_O is z_i = Σ_j A[i, j] v_j, with A[i, j] ≥ 0 and Σ_j A[i, j] = 1: a convex
combination of the values of the positions j ≤ i (grouped-query attention: query head h reads the
values of key/value head h // (n_heads / n_kv_heads)). On every head of every layer, for each of TEXTS:

1. the certificate, at every position: the model's own weights A are non-negative (min A), add up to 1
   (max |Σ_j A[i, j] - 1|), and rebuild z (max |z_i - Σ_j A[i, j] v_j|, relative to the largest |v|);
2. an independent check, at the last position: a linear program (qkv.core.see.hull.convex_weights) looks
   for any convex weights reproducing z, and answers with z's L1 distance to conv{v_j} (0: inside, at a
   relative tolerance TOL), without being told A;
3. where the hull stops: x + z W_O[h] (the residual stream plus what head h writes), at the last position
   of the first text, against conv{u_j} = conv{v_j W_O[h]}, the hull z W_O[h] is in. The proof that it is
   outside is a separating direction: with d = p - mean_j u_j, p = x + z W_O[h],

       margin = (d·p - max_j d·u_j) / |d| > 0   ⇒   p is outside, at least `margin` (Euclidean) from the hull.
"""

from __future__ import annotations

import numpy as np
import torch

from qkv.core.io.refusal import phrase
from qkv.core.see.hull import convex_weights
from qkv.lessons.common.llm import model_name
from qkv.lessons.llm_hull.result import Example, Result, Text

NEEDS_MODEL = "llm"
READS = ("decoder",)
READS_WHY = phrase("lessons.llm_hull.reads_why")  # why it reads no other family (said when it refuses one)
TEXTS = (
    "I bought Apple shares, then ate an apple.",
    "When Mary and John went to the store, John gave a drink to Mary.",
    "The capital of France is Paris, and the capital of Italy is Rome.",
)
TOL = 1e-5  # the relative tolerance of the linear programs (float32 activations)


def _distance(point, vertices) -> float:
    return convex_weights(np.asarray(point, dtype=float), np.asarray(vertices, dtype=float), tol=TOL).distance


def separation(p: torch.Tensor, U: torch.Tensor) -> float:
    """(d·p - max_j d·u_j) / |d| with d = p - mean_j u_j: positive only when p is outside conv{u_j}, and
    then a lower bound on its Euclidean distance to it (the hull lies on one side of a plane)."""
    d = p - U.mean(0)  # (d_model,)
    return float((d @ p - (U @ d).max()) / d.norm().clamp_min(1e-30))


def head_values(trace, cfg, layer: int) -> torch.Tensor:
    """(T, n_heads, d_head) float64: the values each query head mixes (its key/value head's, repeated)."""
    v = trace["v", layer][0].double()  # (T, n_kv_heads, d_head)
    return v.repeat_interleave(cfg.n_heads // v.shape[1], dim=1)  # (T, n_heads, d_head)


def certificate(trace, cfg, layer: int) -> dict[str, np.ndarray]:
    """Per head of `layer`: min A, max |Σ_j A - 1| and max |z - A v| / max |v| over every position."""
    A = trace["pattern", layer][0].double()  # (n_heads, T, T)
    V = head_values(trace, cfg, layer)  # (T, n_heads, d_head)
    z = trace["z", layer][0].double()  # (T, n_heads, d_head)
    rebuilt = torch.einsum("hij,jhd->ihd", A, V)  # (T, n_heads, d_head): Σ_j A[h, i, j] v_j
    scale = V.abs().amax(dim=(0, 2)).clamp_min(1e-30)  # (n_heads,)
    return {
        "min_weight": A.amin(dim=(1, 2)).numpy(),
        "sum_error": (A.sum(-1) - 1).abs().amax(-1).numpy(),
        "rebuild_error": ((z - rebuilt).abs().amax(dim=(0, 2)) / scale).numpy(),
    }


@torch.no_grad()
def one_text(model, tokenizer, text: str, outside: bool) -> tuple[Text, dict]:
    """Text's numbers, and its trace's pieces the figure needs (the last position's weights and values)."""
    cfg = model.cfg
    ids = tokenizer.encode(text)[: cfg.n_ctx]
    kinds = ("attn.hook_pattern", "attn.hook_v", "attn.hook_z", "hook_resid_pre")
    names = [f"blocks.{L}.{k}" for L in range(cfg.n_layers) for k in kinds]
    _, trace = model.run_with_trace(torch.tensor([ids]), names=names)
    T, shape = len(ids), (cfg.n_layers, cfg.n_heads)
    cert = {k: np.zeros(shape) for k in ("min_weight", "sum_error", "rebuild_error")}
    lp, x_zW = np.zeros(shape), np.zeros(shape)
    for L in range(cfg.n_layers):
        for k, v in certificate(trace, cfg, L).items():
            cert[k][L] = v
        V = head_values(trace, cfg, L)  # (T, n_heads, d_head)
        z = trace["z", L][0, T - 1].double()  # (n_heads, d_head)
        W_O = model.blocks[L].attn.head_W_O().detach().double()  # (n_heads, d_head, d_model)
        x = trace["resid_pre", L][0, T - 1].double()  # (d_model,)
        for h in range(cfg.n_heads):
            lp[L, h] = _distance(z[h], V[:, h])
            if outside:
                x_zW[L, h] = separation(x + z[h] @ W_O[h], V[:, h] @ W_O[h])
    numbers = Text(
        text=text,
        tokens=[tokenizer.display(i) for i in ids],
        min_weight=float(cert["min_weight"].min()),
        max_sum_error=float(cert["sum_error"].max()),
        max_rebuild_error=float(cert["rebuild_error"].max()),
        lp_distances=lp.tolist(),
        max_lp_distance=float(lp.max()),
        lp_outside=int((lp > 0).sum()),
    )
    pieces = {
        "weights": torch.stack([trace["pattern", L][0, :, T - 1] for L in range(cfg.n_layers)]).double(),  # (L, H, T)
        "values": torch.stack([head_values(trace, cfg, L) for L in range(cfg.n_layers)]),  # (L, T, H, d_head)
        "z": torch.stack([trace["z", L][0, T - 1] for L in range(cfg.n_layers)]).double(),  # (L, H, d_head)
        "x_zW": x_zW,
    }
    return numbers, pieces


def pick_example(weights: torch.Tensor) -> tuple[int, int]:
    """(layer, head) whose weights at the last position are spread most evenly (the largest entropy):
    the head whose z lies deepest inside its hull, the clearest picture."""
    entropy = -(weights * weights.clamp_min(1e-30).log()).sum(-1)  # (n_layers, n_heads)
    k = int(entropy.argmax())
    return k // weights.shape[1], k % weights.shape[1]


def measure(model, tokenizer, seed: int = 0) -> Result:
    cfg = model.cfg
    texts, first = [], None
    for i, text in enumerate(TEXTS):
        numbers, pieces = one_text(model, tokenizer, text, outside=i == 0)
        texts.append(numbers)
        first = pieces if i == 0 else first
    L, h = pick_example(first["weights"])
    x_zW = first["x_zW"]
    return Result(
        model_name=model_name(model),
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        n_kv_heads=cfg.n_kv_heads,
        d_head=cfg.d_head,
        d_model=cfg.d_model,
        tol=TOL,
        texts=texts,
        n_positions=sum(len(t.tokens) for t in texts),
        x_zW_distances=x_zW.tolist(),
        x_zW_outside=int((x_zW > 0).sum()),
        x_zW_min=float(x_zW.min()),
        example=Example(
            layer=L,
            head=h,
            weights=first["weights"][L, h].tolist(),
            values=first["values"][L, :, h].tolist(),
            z=first["z"][L, h].tolist(),
        ),
    )
