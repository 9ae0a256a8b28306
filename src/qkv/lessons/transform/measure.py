"""Lesson: a matrix is a transformation of space. What W_Q, W_K, W_V and W_O of the bundled model do.

    W = U Σ Vᵀ       every matrix is rotate, stretch, rotate; Σ holds the stretch factors
    R = U Vᵀ         its rotation part (every stretch set to 1)

The claims measured:
  1. training makes the stretch uneven: in every place (layer, head, matrix) the condition number σ_1/σ_r
     of the trained matrix is larger than that of the matrix in the same place of a random (seeded,
     untrained) model of the same shape;
  2. the map moves a cloud of word vectors: fruit, company and energy words before (x, what block 0's
     attention reads for the word alone) and after x W_Q, x W_K, x W_V: do the groups sit further apart?
     Measured for every head of the layer, whatever it shows.
"""

from __future__ import annotations

import numpy as np
import torch

from qkv.analysis.transform import MATRICES, all_spectra, head_matrices, random_twin, rotation_part, svd
from qkv.analysis.transform_cloud import PROJECTIONS, word_cloud
from qkv.lessons.transform.result import Compared, Result, Spread

NEEDS_MODEL = True
READS = ("decoder", "encoder")  # the model families (Family.design) it reads
LAYER = 0  # the cloud's layer: its input is closest to the embeddings themselves
HEAD = 0  # the head drawn in detail


def _summary(spectra, name: str) -> Spread:
    """Mean and range over every layer and head of one matrix's numbers."""
    rows = [s[name] for layer in spectra for s in layer]
    cond = [r["condition"] for r in rows]
    return Spread(
        condition_mean=float(np.mean(cond)),
        condition_min=float(min(cond)),
        condition_max=float(max(cond)),
        effective_rank_mean=float(np.mean([r["effective_rank"] for r in rows])),
        top4_mean=float(np.mean([r["energy_top"]["4"] for r in rows])),
        rotation_cos_mean=float(np.mean([r["rotation_cos"] for r in rows])),
    )


@torch.no_grad()
def _exactness(model, layer: int, head: int) -> dict:
    """How exactly U Σ Vᵀ gives back W, and how orthogonal R = U Vᵀ is (largest entry of the error)."""
    recon, ortho = 0.0, 0.0
    for W in head_matrices(model, layer, head).values():
        U, s, Vh = svd(W)
        recon = max(recon, float((U @ torch.diag(s) @ Vh - W).abs().max()))
        R = rotation_part(W)
        small = R.T @ R if R.shape[0] >= R.shape[1] else R @ R.T  # the identity on the smaller side
        ortho = max(ortho, float((small - torch.eye(small.shape[0], dtype=small.dtype)).abs().max()))
    return {"reconstruction_error": recon, "orthogonality_error": ortho}


def measure(model, tokenizer, seed: int = 0) -> Result:
    twin = random_twin(model, seed)
    trained, random = all_spectra(model), all_spectra(twin)
    summary = {name: Compared(trained=_summary(trained, name), random=_summary(random, name)) for name in MATRICES}
    # each place (layer, head, matrix) against the untrained model's matrix in the same place
    places = [
        (t[name]["condition"], r[name]["condition"])
        for tl, rl in zip(trained, random)
        for t, r in zip(tl, rl)
        for name in MATRICES
    ]
    more_uneven = sum(a > b for a, b in places)
    heads = range(model.cfg.n_heads)
    clouds = [word_cloud(model, tokenizer, LAYER, h) for h in heads]
    before = clouds[0]["before"]["separation"]  # the same x for every head of the layer
    after = {p: [c[p]["separation"] for c in clouds] for p in PROJECTIONS}
    detail = clouds[HEAD]
    twin_cloud = word_cloud(twin, tokenizer, LAYER, HEAD)
    return Result(
        layer=LAYER,
        head=HEAD,
        seed=seed,
        n_layers=model.cfg.n_layers,
        n_heads=model.cfg.n_heads,
        d_model=model.cfg.d_model,
        d_head=model.cfg.d_head,
        norm=model.cfg.norm,
        pre_norm=model.cfg.pre_norm,  # the heads read LN1(x) (LayerNorm or RMSNorm), not x
        summary=summary,
        more_uneven=more_uneven,
        n_places=len(places),
        uneven_claim_holds=more_uneven == len(places),
        detail={name: trained[LAYER][HEAD][name] for name in (*MATRICES, "W_QK", "W_OV")},
        detail_random={name: random[LAYER][HEAD][name] for name in (*MATRICES, "W_QK", "W_OV")},
        **_exactness(model, LAYER, HEAD),
        words=detail["words"],
        labels=detail["labels"],
        groups=detail["groups"],
        input=detail["input"],
        before_ratio=before["ratio"],
        before_accuracy=before["accuracy"],
        after_ratio={p: [a["ratio"] for a in after[p]] for p in PROJECTIONS},
        after_accuracy={p: [a["accuracy"] for a in after[p]] for p in PROJECTIONS},
        heads_separating_more={p: sum(a["ratio"] > before["ratio"] for a in after[p]) for p in PROJECTIONS},
        kept_share={p: [c[p]["kept_share"] for c in clouds] for p in PROJECTIONS},
        random_share=detail["random_share"],
        nearest_before=detail["before"]["nearest"],
        nearest_q=detail["q"]["nearest"],
        before_ratio_2d=detail["before"]["separation_2d"]["ratio"],
        q_ratio_2d=detail["q"]["separation_2d"]["ratio"],
        cloud_before=detail["before"]["points"],
        cloud_q=detail["q"]["points"],
        twin_before_ratio=twin_cloud["before"]["separation"]["ratio"],
        twin_q_ratio=twin_cloud["q"]["separation"]["ratio"],
        trace_max_diff=max(c[p]["trace_max_diff"] for c in clouds for p in PROJECTIONS),
    )
