"""A GGUF tensor read into a model's parameter: dequantized a few rows at a time, by the `gguf` package.

A quantized tensor is stored in blocks: Q8_0 keeps 32 numbers as one float16 scale d and 32 int8
values q (x = d * q), Q4_1 keeps d, a minimum m and 32 4-bit values (x = d * q + m), the K types
(Q2_K ... Q6_K) 256 numbers in sub-blocks, each with a scale and a minimum of its own. A row of
the matrix is whole blocks, so a run of rows can be dequantized on its own: `read_into` reads about
CHUNK bytes of float32 at a time and writes them straight into the parameter, in its dtype (bfloat16
halves the memory), never holding the whole tensor as float32 beside the model.

`layout` (hub/gguf/layouts.py) undoes what llama.cpp's converter did to the tensor: its rows put
back in Hugging Face's order (a "llama" file's W_Q and W_K, GPT-NeoX's query_key_value), the matrix
transposed back (GPT-2's Conv1D), a constant taken off every number (Gemma's norms, stored as 1 + w).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from qkv.core.hub.gguf.header import TensorInfo
from qkv.core.hub.gguf.layouts import AS_STORED, Layout
from qkv.core.io.refusal import Refusal

CHUNK = 1 << 20  # bytes of float32 dequantized at a time


def readable(ggml_type: int) -> bool:
    """Whether the `gguf` package dequantizes this ggml type (one block of zeros, tried)."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
    from gguf.quants import dequantize

    kind = GGMLQuantizationType(ggml_type)
    try:
        dequantize(np.zeros((1, GGML_QUANT_SIZES[kind][1]), np.uint8), kind)
    except (NotImplementedError, ValueError, TypeError):
        return False
    return True


@dataclass(frozen=True)
class GgufTensor:
    """A tensor of a GGUF file as hub/read.py reads one: its shape (PyTorch's order), a float dtype
    (float32: what dequantizing gives), read() and read_into(out)."""

    path: Path
    info: TensorInfo
    layout: Layout = AS_STORED  # what llama.cpp's converter did to it, undone as it is read

    dtype = "F32"  # what it is read as, in safetensors' names (hub/read.py checks it is a float type)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.info.shape[::-1] if self.layout.transposed else self.info.shape

    def read(self) -> torch.Tensor:
        out = torch.empty(self.info.shape, dtype=torch.float32)
        self._read_into(out)
        return out.T if self.layout.transposed else out  # (in, out) of a Conv1D: a view of the stored matrix

    def read_into(self, out: torch.Tensor) -> None:
        """Dequantize the tensor into `out` (contiguous, of its shape), CHUNK bytes of float32 at a time."""
        if self.layout.transposed:
            out.copy_(self.read())
        else:
            self._read_into(out)

    def _read_into(self, out: torch.Tensor) -> None:
        info, order, shift = self.info, self.layout.order, self.layout.shift
        if tuple(out.shape) != self.info.shape or not out.is_contiguous():
            raise Refusal.of(
                "hub.stored_shape", path=self.path, name=info.name, shape=self.shape, wanted=tuple(out.shape)
            )
        if out.dim() == 1:  # a norm's gain or a bias: whole, and a q or k bias reordered element by element
            values = next(self._chunks(1, 1))[1].view(-1) + shift
            if order is not None:
                out.index_copy_(0, order, values.to(out.dtype))
            else:
                out.copy_(values)
            return
        width = info.dims[0]  # numbers in a row
        rows = out.numel() // width
        flat = out.view(rows, width)  # (rows, width)
        for first, values in self._chunks(rows, max(1, CHUNK // (4 * width))):
            n = values.shape[0]
            if shift:
                values = values + shift
            if order is None:
                flat[first : first + n].copy_(values)
            else:
                flat.index_copy_(0, order[first : first + n], values.to(out.dtype))

    def _chunks(self, rows: int, per: int):
        """(first row, those rows dequantized as float32 (n, row length)), `per` rows at a time."""
        from gguf.constants import GGMLQuantizationType
        from gguf.quants import dequantize

        info, kind = self.info, GGMLQuantizationType(self.info.ggml_type)
        row_bytes = info.size // rows
        with open(self.path, "rb") as f:
            f.seek(info.start)
            for first in range(0, rows, per):
                n = min(per, rows - first)
                raw = bytearray(n * row_bytes)
                if f.readinto(raw) != len(raw):
                    raise Refusal.of("hub.ends_inside", path=self.path, name=info.name)
                blocks = np.frombuffer(raw, np.uint8).reshape(n, row_bytes)  # (n, row_bytes)
                values = np.ascontiguousarray(dequantize(blocks, kind), dtype=np.float32)
                yield first, torch.from_numpy(values.reshape(n, -1))  # (n, numbers in a row)
