"""Lesson: one head's output z is a convex combination of its values, and what breaks that.

    z = Σ_j a_j v_j,  a_j ≥ 0,  Σ_j a_j = 1      →  z lies in conv{v_j}        (checked by an LP)
    z W_O[h] = Σ_j a_j (v_j W_O[h])              →  inside conv{v_j W_O[h]}     (a linear map keeps it)
    x + z W_O[h]                                 →  in general outside it       (the residual adds x)

First the source document's worked example (s = (ln 2, 0, 0), a = (1/2, 1/4, 1/4), z = (1, 1)),
then a real head of the bundled model on a real sentence.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from qkv.core.io.refusal import phrase
from qkv.lessons.convex.result import Plane, Result

NEEDS_MODEL = True
READS = ("decoder",)  # the model families (Family.design) it reads
READS_WHY = phrase("lessons.convex.reads_why")  # why it reads no other family (said when it refuses one)
TEXT = "我 投资了 苹果 ，"
TOL = 1e-5  # the relative tolerance qkv.check uses for float32 activations


def pick_head(trace, pos: int, target: int) -> tuple[int, int]:
    """The (layer, head) whose query at `pos` puts the most weight on the key at `target`."""
    best, where = -1.0, (0, 0)
    for layer in range(trace.cfg.n_layers):
        row = trace["pattern", layer][0, :, pos, target]  # (n_heads,)
        h = int(row.argmax())
        if row[h].item() > best:
            best, where = row[h].item(), (layer, h)
    return where


def nearest_l2(point: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """The point of conv(vertices) nearest to `point` in Euclidean distance (a small QP on the simplex)."""
    from scipy.optimize import minimize

    n = len(vertices)
    G = vertices @ vertices.T
    c = vertices @ point
    res = minimize(
        lambda w: w @ G @ w - 2 * c @ w,
        np.full(n, 1.0 / n),
        jac=lambda w: 2 * G @ w - 2 * c,
        bounds=[(0.0, 1.0)] * n,
        constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1.0}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    w = np.clip(res.x, 0.0, None)
    return (w / w.sum()) @ vertices


def separating_plane(VW, zW, x_new, x, near) -> Plane:
    """2-D coordinates that keep the hull and x + z W_O apart: axis 1 runs from the nearest hull point
    `near` to x + z W_O (a separating direction), axis 2 is the values' main direction orthogonal to it."""
    e1 = x_new - near
    e1 = e1 / max(np.linalg.norm(e1), 1e-12)
    centred = VW - VW.mean(0)
    centred = centred - np.outer(centred @ e1, e1)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    e2 = vt[0]
    to2 = lambda P: np.stack([np.atleast_2d(P) @ e1, np.atleast_2d(P) @ e2], -1).tolist()  # (n, 2)
    return Plane(values=to2(VW), zW=to2(zW)[0], x_new=to2(x_new)[0], x=to2(x)[0], nearest=to2(near)[0])


def worked_example() -> dict:
    """The source document's worked example, s = (ln 2, 0, 0), a = (1/2, 1/4, 1/4), z = (1, 1), as the
    example_* fields of the Result."""
    from qkv.analysis.attend import attend

    ex = attend(
        [math.sqrt(2), 0.0], [[math.log(2), 0.0], [0.0, 1.0], [0.0, -1.0]], [[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]]
    )
    return {
        "example_scores": [float(s) for s in ex.scores],
        "example_weights": [float(w) for w in ex.weights],
        "example_z": [float(c) for c in ex.z],
        "example_values": ex.V.tolist(),
        "example_inside": bool(ex.hull.inside),
        "example_distance": float(ex.hull.distance),
    }


@torch.no_grad()
def measure(model, tokenizer, seed: int = 0) -> Result:
    from qkv.core.see.hull import convex_weights

    torch.manual_seed(seed)
    ex = worked_example()
    ids = tokenizer.encode(TEXT)
    tokens = [tokenizer.display(i) for i in ids]
    _, trace = model.run_with_trace(torch.tensor([ids]))
    T, pos = len(ids), len(ids) - 1
    cue_pos = len(tokenizer.encode(" ".join(TEXT.split()[:2]))) - 1  # the last token of the verb 投资了
    layer, head = pick_head(trace, pos, cue_pos)

    a = trace["pattern", layer][0, head, pos, :T].double().numpy()  # (T,)
    V = trace["v", layer][0, :T, head].double().numpy()  # (T, d_head)
    z = trace["z", layer][0, pos, head].double().numpy()  # (d_head,)
    W_O = model.blocks[layer].attn.head_weights()["W_O"][head].double().numpy()  # (d_head, d_model)
    VW, zW = V @ W_O, z @ W_O  # (T, d_model), (d_model,)
    x = trace["resid_pre", layer][0, pos].double().numpy()  # (d_model,)
    x_new = x + zW  # the seed's single-head update x + z W_O
    mid = trace["resid_mid", layer][0, pos].double().numpy()  # x + all heads + b_O

    hz = convex_weights(z, V, tol=TOL)
    hzW = convex_weights(zW, VW, tol=TOL)
    hx = convex_weights(x_new, VW, tol=TOL)
    hmid = convex_weights(mid, VW, tol=TOL)
    near = nearest_l2(x_new, VW)
    result_gap = float(np.abs(trace["result", layer][0, pos, head].double().numpy() - zW).max())
    return Result(
        **ex,
        text=TEXT,
        tokens=tokens,
        position=pos,
        layer=layer,
        head=head,
        weights=a.tolist(),
        cue=tokens[cue_pos],
        cue_weight=float(a[cue_pos]),
        values=V.tolist(),
        z=z.tolist(),
        z_inside=bool(hz.inside),
        z_distance=float(hz.distance),
        zW_inside=bool(hzW.inside),
        zW_distance=float(hzW.distance),
        residual_inside=bool(hx.inside),
        residual_distance=float(hx.distance),
        residual_l2_distance=float(np.linalg.norm(x_new - near)),
        resid_mid_inside=bool(hmid.inside),
        resid_mid_distance=float(hmid.distance),
        norm_x=float(np.linalg.norm(x)),
        norm_zW=float(np.linalg.norm(zW)),
        d_head=int(V.shape[1]),
        d_model=int(VW.shape[1]),
        result_gap=result_gap,
        plane=separating_plane(VW, zW, x_new, x, near),
    )
