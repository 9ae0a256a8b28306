"""Arrays inside a qkv JSON document: packed, not written as numbers.

    pack(x) -> {"dtype": "float32" | "int32", "shape": [...], "data": base64, "layout"?: "lower"}

The data is the base64 of the array's little-endian bytes, row-major: a browser reads it into a typed
array without parsing numbers, and `unpack` gives it back to numpy. Under a causal mask an attention
matrix may be sent as its lower triangle only (layout "lower"). `dumps` writes a document whose
"arrays" are packed faster than json.dumps would (the base64 strings need no escaping).
"""

from __future__ import annotations

import base64
import json

import numpy as np
import torch

from qkv.core.io.finite import dumps as finite_dumps


def pack(x, lower: bool = False) -> dict:
    """A tensor as {dtype, shape, data}: data is the base64 of its little-endian bytes, row-major.

    lower=True (for (…, T, T) arrays under a causal mask) keeps only each matrix's lower triangle,
    diagonal included, row by row (T(T+1)/2 numbers per matrix, about half), and says
    "layout": "lower"; the entries above the diagonal read back as 0."""
    a = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
    a = np.asarray(a, dtype="<i4" if a.dtype.kind in "iub" else "<f4")
    out = {"dtype": "int32" if a.dtype.kind == "i" else "float32", "shape": list(a.shape)}
    if lower:
        rows, cols = np.tril_indices(a.shape[-1])
        a = a[..., rows, cols]  # (…, T(T+1)/2)
        out["layout"] = "lower"
    out["data"] = base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")
    return out


def unpack(p: dict) -> np.ndarray:
    """The inverse of `pack` (a "lower" layout comes back with zeros above the diagonal)."""
    flat = np.frombuffer(base64.b64decode(p["data"]), dtype={"float32": "<f4", "int32": "<i4"}[p["dtype"]])
    if p.get("layout") != "lower":
        return flat.reshape(p["shape"])
    *lead, T, _ = p["shape"]
    out = np.zeros(p["shape"], dtype=flat.dtype)
    rows, cols = np.tril_indices(T)
    out[..., rows, cols] = flat.reshape(*lead, T * (T + 1) // 2)
    return out


def dumps(doc: dict) -> bytes:
    """json.dumps(doc) as UTF-8, written faster for a view: the base64 strings of the packed arrays
    need no escaping, so they are joined in rather than scanned (a test compares with json.dumps)."""
    arrays = doc.get("arrays")
    if not arrays:
        return finite_dumps(doc).encode("utf-8")
    rest = finite_dumps({k: v for k, v in doc.items() if k != "arrays"})  # NaN lives in the arrays' bytes only
    parts = [
        f'"{name}": {{{", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in p.items() if k != "data")}, '
        f'"data": "{p["data"]}"}}'
        for name, p in arrays.items()
    ]
    return f'{rest[:-1]}, "arrays": {{{", ".join(parts)}}}}}'.encode()
