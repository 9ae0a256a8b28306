"""How llama.cpp's converter changed a family's tensors, and how each is put back as Hugging Face has it.

A `Layout` says, for one tensor, what tensors.py does as it dequantizes it:

    order       stored row r is Hugging Face's row order[r] (None: the rows as stored)
    transposed  the stored matrix is Hugging Face's transposed (GPT-2's Conv1D keeps (in, out))
    shift       added to every number (Gemma's norms: llama.cpp stores 1 + w, Hugging Face w)

Each family's function takes the Hugging Face name and the model's config and gives its Layout:

    llama    W_Q's and W_K's rows (and their biases): in each head, the two halves of every rotated pair
             interleaved (row 2j + s is Hugging Face's row s * d/2 + j); put back in halves
    gpt2     c_attn, c_proj, c_fc stored as nn.Linear's (out, in); transposed back to Conv1D's (in, out)
    gemma    every RMSNorm's weight stored as 1 + w (the weight Gemma's norm multiplies by): w = stored - 1,
             which the gemma adapter adds back, as Gemma's RMSNorm computes 1 + w
    gptneox  query_key_value stored q of every head, then k, then v; put back head by head
             ([h][q, k, v][d_head]), the order the neox adapter regroups
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from qkv.core.spec.config import ModelConfig


@dataclass(frozen=True)
class Layout:
    order: torch.Tensor | None = None  # stored row -> Hugging Face row
    transposed: bool = False
    shift: float = 0.0


AS_STORED = Layout()


def halves_rows(rows: int, n_heads: int) -> torch.Tensor:
    """For each stored row of a llama.cpp W_Q or W_K (n_heads heads, `rows` rows), its Hugging Face row:
    stored h*d + 2j + s -> h*d + s*(d/2) + j."""
    d = rows // n_heads
    stored = torch.arange(rows).view(n_heads, d // 2, 2)  # (head, pair j, half s): stored row numbers
    return stored.transpose(1, 2).reshape(rows).argsort()  # stored row -> its place in head-major, half, pair order


def per_head_rows(n_heads: int, d_head: int) -> torch.Tensor:
    """For each stored row of a llama.cpp GPT-NeoX attn_qkv (part s of q, k, v; head h; j), its Hugging
    Face row: stored s*H*d + h*d + j -> h*3d + s*d + j."""
    hf = torch.arange(3 * n_heads * d_head).view(n_heads, 3, d_head)  # (head, part, j): Hugging Face rows
    return hf.transpose(0, 1).reshape(-1)  # in stored order (part, head, j)


def llama(hf: str, cfg: ModelConfig) -> Layout:
    if ".self_attn.q_proj." in hf:
        return Layout(order=halves_rows(cfg.n_heads * cfg.d_head, cfg.n_heads))
    if ".self_attn.k_proj." in hf:
        return Layout(order=halves_rows(cfg.n_kv_heads * cfg.d_head, cfg.n_kv_heads))
    return AS_STORED


def gpt2(hf: str, cfg: ModelConfig) -> Layout:
    conv1d = (".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight")
    return Layout(transposed=True) if hf.endswith(conv1d) else AS_STORED


def gemma(hf: str, cfg: ModelConfig) -> Layout:
    return Layout(shift=-1.0) if hf.endswith("norm.weight") else AS_STORED


def gptneox(hf: str, cfg: ModelConfig) -> Layout:
    if ".attention.query_key_value." in hf:
        return Layout(order=per_head_rows(cfg.n_heads, cfg.d_head))
    return AS_STORED
