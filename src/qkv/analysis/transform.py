"""A weight matrix as a transformation of space: what W_Q, W_K, W_V and W_O of one head do to vectors.

    q = x W_Q          x: (d_model,) a row vector, W_Q: (d_model, d_head), q: (d_head,)
    W = U Σ Vᵀ         the SVD: U (d_in, r) and V (d_out, r) have orthonormal columns, Σ = diag(σ_1 ≥ … ≥ σ_r ≥ 0)
    x W = ((x U) Σ) Vᵀ read x along r directions (the columns of U), stretch the i-th by σ_i, set the
                       results along the columns of V: rotate, stretch, rotate
    R = U Vᵀ           the "rotation part" (polar decomposition W = R · V Σ Vᵀ): W with every σ_i set to 1;
                       its columns (for W_O: its rows) are orthonormal, so it turns vectors and stretches none

The numbers of one matrix (`spectrum`): its singular values (the stretch factors), the condition number
σ_1 / σ_r (how unevenly it stretches), the effective rank exp(−Σ p_i ln p_i) with p_i = σ_i² / Σσ² (how
many directions carry its energy), the energy share of the top k directions Σ_{i≤k} σ_i² / Σσ², and
cos(W, R) = Σσ_i / (√r · √Σσ_i²), 1 exactly when all σ_i are equal, i.e. when W is a rotation times a number.

The word cloud (`word_cloud` in qkv.analysis.transform_cloud) shows the same map acting on real inputs.
"""

from __future__ import annotations

import math

import torch

from qkv.core.io.finite import require_finite
from qkv.core.io.refusal import Refusal, family_title, phrase
from qkv.core.machine import rng
from qkv.core.see.indices import check_layer_head

MATRICES = ("W_Q", "W_K", "W_V", "W_O")
TOP_K = (1, 4, 8)  # energy shares reported: the top 1, 4 and 8 directions


def attention_module(model, layer: int):
    """The self-attention module of block `layer` of a GPT or an encoder (a one-line ValueError otherwise)."""
    if not model.family.one_stack:
        raise Refusal.of("errors.transform_family", title=family_title(model.family))
    layer, _ = check_layer_head(model.cfg, layer, None)
    return model.blocks[layer].attn


def _attention_head(model, layer: int, head: int):
    """(the self-attention of block `layer`, head made non-negative), refused in that order."""
    attn = attention_module(model, layer)
    return attn, check_layer_head(model.cfg, None, head)[1]


@torch.no_grad()
def head_matrices(model, layer: int, head: int) -> dict[str, torch.Tensor]:
    """W_Q, W_K, W_V (d_model, d_head) and W_O (d_head, d_model) of one head, in float64, in the row-vector
    convention q = x W_Q (MultiHeadAttention.head_weights)."""
    attn, head = _attention_head(model, layer, head)
    weights = attn.head_weights()  # each (n_heads, d_in, d_out)
    mats = {name: weights[name][head].detach().double().cpu() for name in MATRICES}
    for name, W in mats.items():  # an SVD of a NaN matrix has no answer
        require_finite(W, phrase("errors.head_matrix", layer=layer, head=head, name=name), model)
    return mats


@torch.no_grad()
def head_biases(model, layer: int, head: int) -> dict[str, torch.Tensor]:
    """b_Q, b_K, b_V (d_head,) of one head: q = x W_Q + b_Q. Zeros when the model has no biases."""
    attn, head = _attention_head(model, layer, head)
    return {name: b[head].detach().double().cpu() for name, b in attn.head_biases().items()}


def svd(W: torch.Tensor):
    """(U, σ, Vᵀ) with W = U diag(σ) Vᵀ: U (d_in, r), σ (r,) descending, Vᵀ (r, d_out), r = min(d_in, d_out)."""
    return torch.linalg.svd(W, full_matrices=False)


def rotation_part(W: torch.Tensor) -> torch.Tensor:
    """R = U Vᵀ: the polar factor of W, W with every singular value set to 1 (same shape as W)."""
    U, _, Vh = svd(W)
    return U @ Vh  # (d_in, d_out)


def spectrum(W: torch.Tensor, rank: int | None = None) -> dict:
    """The stretch of W: singular values and the numbers read from them (see the module docstring).
    rank: keep only the top `rank` singular values (a product of rank ≤ d_head: the rest are rounding)."""
    s = torch.linalg.svdvals(W.double())[:rank]
    r = s.numel()
    energy = s.pow(2)
    p = energy / energy.sum()
    nz = p[p > 0]
    return {
        "shape": list(W.shape),
        "singular_values": s.tolist(),
        "condition": float(s[0] / s[-1]) if s[-1] > 0 else math.inf,
        "effective_rank": float(torch.exp(-(nz * nz.log()).sum())),
        "energy_top": {str(k): float(p[:k].sum()) for k in TOP_K if k <= r},
        "rotation_cos": float(s.sum() / (math.sqrt(r) * energy.sum().sqrt())),
        "frobenius": float(energy.sum().sqrt()),
    }


def composites(mats: dict[str, torch.Tensor]) -> dict:
    """The two d_model × d_model maps a head is made of: W_Q W_Kᵀ (the bilinear form of the scores,
    scores = x_i W_Q W_Kᵀ x_jᵀ / √d_head) and W_V W_O (what a read token writes back), each of rank ≤ d_head."""
    r = mats["W_Q"].shape[1]  # d_head
    return {"W_QK": spectrum(mats["W_Q"] @ mats["W_K"].T, r), "W_OV": spectrum(mats["W_V"] @ mats["W_O"], r)}


def head_spectra(model, layer: int, head: int) -> dict:
    """spectrum() of W_Q, W_K, W_V, W_O and of the composites, for one head."""
    mats = head_matrices(model, layer, head)
    return {**{name: spectrum(W) for name, W in mats.items()}, **composites(mats)}


def all_spectra(model) -> list[list[dict]]:
    """head_spectra for every layer and head: [layer][head]."""
    return [
        [head_spectra(model, layer, head) for head in range(model.cfg.n_heads)] for layer in range(model.cfg.n_layers)
    ]


def random_twin(model, seed: int = 0):
    """A model of the same class and config, freshly initialised from `seed` (never trained), in eval mode.
    The global random state is left as it was. A second model of an LLM's size may not fit beside the
    first: refused in one line (size.check_fits) before it is built."""
    from qkv.core.hub.size import check_fits

    check_fits(model.cfg, f"a random model of this shape ({model.family.title})")
    with rng.GLOBAL, torch.random.fork_rng(devices=[]):  # no other thread draws meanwhile (machine/rng.py)
        torch.manual_seed(seed)
        twin = type(model)(model.cfg)
    return twin.eval()
