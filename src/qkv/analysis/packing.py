"""Arrays inside a qkv JSON document: packed, not written as numbers.

    pack(x) -> {"dtype": "float32" | "int32", "shape": [...], "data": base64, "layout"?: "lower"}

The data is the base64 of the array's little-endian bytes, row-major: a browser reads it into a typed
array without parsing numbers, and `unpack` gives it back to numpy. Under a causal mask an attention
matrix may be sent as its lower triangle only (layout "lower"). `dumps` writes a document whose
"arrays" are packed faster than json.dumps would (the base64 strings need no escaping).

The same document can travel as one binary body instead (`binary`, what the page asks /api/view for:
no base64 to write or read, no megabyte string to parse), little-endian throughout:

    bytes 0-3    b"QKV1"
    bytes 4-7    n, the header's length in bytes (uint32)
    n bytes      the header: the document as JSON (UTF-8), each packed array's "data" replaced by
                 "at": [offset, length], where its bytes lie in the data section
    the data section, starting at the first multiple of 8 after the header: each array's bytes,
                 each starting at a multiple of 8 (a typed array can be laid over them as they are)

`pack(x, raw=True)` keeps the bytes themselves in "data" for it; `from_binary` reads a body back.
"""

from __future__ import annotations

import base64
import json

import numpy as np
import torch

from qkv.core.io.finite import dumps as finite_dumps

MAGIC = b"QKV1"
ALIGN = 8  # where the data section and each array in it start: a multiple of ALIGN bytes


def pack(x, lower: bool = False, raw: bool = False) -> dict:
    """A tensor as {dtype, shape, data}: data is the base64 of its little-endian bytes, row-major.

    lower=True (for (…, T, T) arrays under a causal mask) keeps only each matrix's lower triangle,
    diagonal included, row by row (T(T+1)/2 numbers per matrix, about half), and says
    "layout": "lower"; the entries above the diagonal read back as 0. raw=True: "data" is the bytes
    themselves (for `binary`), not their base64."""
    a = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
    a = np.asarray(a, dtype="<i4" if a.dtype.kind in "iub" else "<f4")
    out = {"dtype": "int32" if a.dtype.kind == "i" else "float32", "shape": list(a.shape)}
    if lower:
        rows, cols = np.tril_indices(a.shape[-1])
        a = a[..., rows, cols]  # (…, T(T+1)/2)
        out["layout"] = "lower"
    data = np.ascontiguousarray(a).tobytes()
    out["data"] = data if raw else base64.b64encode(data).decode("ascii")
    return out


def unpack(p: dict) -> np.ndarray:
    """The inverse of `pack`, raw or not (a "lower" layout comes back with zeros above the diagonal)."""
    data = p["data"] if isinstance(p["data"], bytes) else base64.b64decode(p["data"])
    flat = np.frombuffer(data, dtype={"float32": "<f4", "int32": "<i4"}[p["dtype"]])
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


def binary(doc: dict) -> bytes:
    """A document whose packed arrays hold raw bytes (`pack(x, raw=True)`) as one binary body (the layout
    in the module's docstring); its header is JSON as `dumps` writes it (a non-finite number: null, noted)."""
    chunks: list[bytes] = []
    at = 0

    def place(obj):
        nonlocal at
        if isinstance(obj, dict):
            if isinstance(obj.get("data"), bytes):
                data = obj["data"]
                chunks.append(data + bytes(-len(data) % ALIGN))
                out = {k: v for k, v in obj.items() if k != "data"} | {"at": [at, len(data)]}
                at += len(chunks[-1])
                return out
            return {k: place(v) for k, v in obj.items()}
        return [place(v) for v in obj] if isinstance(obj, list) else obj

    header = finite_dumps(place(doc)).encode("utf-8")
    start = len(MAGIC) + 4 + len(header)
    return b"".join([MAGIC, len(header).to_bytes(4, "little"), header, bytes(-start % ALIGN), *chunks])


def from_binary(body: bytes) -> dict:
    """The inverse of `binary`: the document, each packed array's "data" its bytes again."""
    if body[:4] != MAGIC:
        raise ValueError("not a qkv binary document")
    n = int.from_bytes(body[4:8], "little")
    start = 8 + n + (-(8 + n) % ALIGN)

    def attach(obj: dict) -> dict:
        if "at" in obj and "dtype" in obj:
            offset, length = obj.pop("at")
            obj["data"] = bytes(body[start + offset : start + offset + length])
        return obj

    return json.loads(body[8 : 8 + n], object_hook=attach)
