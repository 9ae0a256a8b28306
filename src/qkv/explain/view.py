"""Everything the web page needs to show one text: kind "view" of the qkv-explain format.

    doc = view(model, tokenizer, "我 投资了 苹果 ，")        # a JSON-ready dict

The model runs once, traced, in eval mode; the page then switches layer, head and query token
without asking again. Per layer L, head h, query i and key j the document holds

    dots[L,h,i,j]    = q_i·k_j                     (hook_dots)
    scores[L,h,i,j]  = q_i·k_j / √d_head, −∞ masked (hook_attn_scores)
    pattern[L,h,i,j] = A = softmax_j(scores)        (hook_pattern)
    z = Σ_j A_ij v_j, given by its norm and first coordinates, with each value's
    v_2d, z_2d       = both projected on the two principal directions of that head's values
                       (an affine map, so z_2d = Σ_j A_ij v_2d[j]: z stays inside the projected hull)

and per layer and position the norms of the residual update x → x + attn_out (→ resid_mid → + mlp_out),
then the most likely next tokens at each position. Big arrays are packed (see `pack`): float32 or
int32, little-endian, base64 — a browser reads them into a typed array without parsing numbers.
"""

from __future__ import annotations

import base64
import math

import numpy as np
import torch

from .explain import FORMAT, N_COORDS, VERSION

TOP_NEXT = 10  # next-token candidates kept per position


class TextError(ValueError):
    """The text cannot be shown (empty, too long for n_ctx, or holds what the tokenizer does not know)."""


def pack(x) -> dict:
    """A tensor as {dtype, shape, data}: data is the base64 of its little-endian bytes, row-major."""
    a = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
    a = np.ascontiguousarray(a, dtype="<i4" if a.dtype.kind in "iub" else "<f4")
    return {"dtype": "int32" if a.dtype.kind == "i" else "float32", "shape": list(a.shape),
            "data": base64.b64encode(a.tobytes()).decode("ascii")}


def unpack(p: dict) -> np.ndarray:
    """The inverse of `pack`."""
    dtype = {"float32": "<f4", "int32": "<i4"}[p["dtype"]]
    return np.frombuffer(base64.b64decode(p["data"]), dtype=dtype).reshape(p["shape"])


def model_info(model, tokenizer, name: str = "") -> dict:
    cfg = model.cfg
    keys = ("n_layers", "n_heads", "d_model", "d_head", "d_mlp", "n_ctx", "d_vocab", "norm", "pos", "causal",
            "residual", "values")
    return {**{k: getattr(cfg, k) for k in keys}, "tokenizer": tokenizer.kind, "name": name,
            "parameters": model.num_params()}


def encode_text(tokenizer, text, n_ctx: int) -> list[int]:
    """The ids of `text`, or a TextError that says what is wrong (in one line)."""
    if not isinstance(text, str) or not text.strip():
        raise TextError("the text is empty: type at least one token")
    try:
        ids = tokenizer.encode(text)
    except ValueError as e:  # UnknownTokenError names the characters or words
        raise TextError(str(e)) from None
    if not ids:
        raise TextError("the text gives no tokens: type at least one token")
    if len(ids) > n_ctx:
        raise TextError(f"the text has {len(ids)} tokens; this model reads at most n_ctx = {n_ctx}")
    return ids


def _values_2d(v: torch.Tensor, z: torch.Tensor):
    """Project each head's values (and its z rows) on the values' two principal directions.

    v, z: (L, H, T, d). Returns v_2d, z_2d (L, H, T, 2) and the share of the values' variance the
    two directions keep (L, H). The directions are the top eigenvectors of the values' scatter
    matrix (geometry.pca_2d's, found faster), with pca_2d's sign rule so pictures are stable."""
    v, z = v.double(), z.double()
    d = v.shape[-1]
    if d <= 2:  # nothing to project: keep the coordinates (a zero second one when d = 1)
        mean = torch.zeros_like(v[..., :1, :])
        comp = torch.eye(2, d, dtype=v.dtype).expand(*v.shape[:2], 2, d)
        kept = torch.ones(v.shape[:2], dtype=v.dtype)
    else:
        mean = v.mean(dim=2, keepdim=True)  # (L, H, 1, d)
        centred = v - mean
        var, vecs = torch.linalg.eigh(centred.transpose(-1, -2) @ centred)  # ascending; vecs (L, H, d, d)
        comp = vecs[..., [-1, -2]].transpose(-1, -2)  # (L, H, 2, d): the two leading directions
        sign = torch.sign(torch.gather(comp, -1, comp.abs().argmax(-1, keepdim=True)))  # (L, H, 2, 1)
        comp = comp * torch.where(sign == 0, torch.ones_like(sign), sign)
        var = var.clamp_min(0)
        kept = var[..., -2:].sum(-1) / var.sum(-1).clamp_min(1e-300)
    v2 = (v - mean) @ comp.transpose(-1, -2)  # (L, H, T, d) @ (L, H, d, 2) -> (L, H, T, 2)
    z2 = (z - mean) @ comp.transpose(-1, -2)
    return v2, z2, kept


@torch.no_grad()
def view(model, tokenizer, text: str, name: str = "") -> dict:
    """The kind-"view" document of `text` (see the module docstring and docs/trace-format.md)."""
    cfg = model.cfg
    ids = encode_text(tokenizer, text, cfg.n_ctx)
    T, Ls = len(ids), range(cfg.n_layers)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        _, tr = model.run_with_trace(torch.tensor([ids], device=device))
    finally:
        model.train(was_training)

    stack = lambda hook: torch.stack([tr[hook, L][0] for L in Ls])  # noqa: E731 (one sequence, every layer)
    dots, scores, pattern = stack("dots"), stack("attn_scores"), stack("pattern")  # (L, H, T, T)
    v = stack("v").transpose(1, 2)  # (L, T, H, d_head) -> (L, H, T, d_head)
    z = stack("z").transpose(1, 2)
    v_2d, z_2d, kept = _values_2d(v, z)
    x, attn_out = stack("resid_pre"), stack("attn_out")  # (L, T, d_model)
    k = min(N_COORDS, cfg.d_head)

    probs = tr["probs"][0]  # (T, d_vocab)
    top_p, top_i = torch.topk(probs, min(TOP_NEXT, cfg.d_vocab), dim=-1)  # (T, K)
    nxt = torch.tensor(ids[1:], device=probs.device)
    actual_p = probs[torch.arange(T - 1), nxt]  # (T-1,) the probability of the token that follows
    actual_rank = (probs[: T - 1] > actual_p[:, None]).sum(-1) + 1
    shown_ids = sorted(set(top_i.flatten().tolist()) | set(ids))
    arrays = {
        "dots": dots, "scores": scores, "pattern": pattern,
        "v_norm": v.norm(dim=-1), "v_first": v[..., :k], "z_norm": z.norm(dim=-1), "z_first": z[..., :k],
        "v_2d": v_2d, "z_2d": z_2d, "kept_2d": kept,
        "head_out_norm": stack("result").norm(dim=-1).transpose(1, 2),  # (L, T, H) -> (L, H, T)
        "x_norm": x.norm(dim=-1), "attn_out_norm": attn_out.norm(dim=-1),
        "x_plus_attn_norm": (x + attn_out).norm(dim=-1), "resid_mid_norm": stack("resid_mid").norm(dim=-1),
        "mlp_out_norm": stack("mlp_out").norm(dim=-1), "resid_post_norm": stack("resid_post").norm(dim=-1),
        "update_cos": torch.nn.functional.cosine_similarity(x, attn_out, dim=-1),
        "next_ids": top_i, "next_probs": top_p, "actual_prob": actual_p, "actual_rank": actual_rank,
    }
    return {"format": FORMAT, "version": VERSION, "kind": "view", "text": text, "ids": [int(i) for i in ids],
            "tokens": [tokenizer.display(i) for i in ids], "model": model_info(model, tokenizer, name),
            "scale": math.sqrt(cfg.d_head), "first": k,
            "vocab": {str(i): tokenizer.display(i) for i in shown_ids},
            "arrays": {key: pack(value) for key, value in arrays.items()}}


def unpack_view(doc: dict) -> dict[str, np.ndarray]:
    """Every packed array of a view document as a numpy array."""
    return {key: unpack(p) for key, p in doc["arrays"].items()}
