"""The header of a GGUF file (llama.cpp's format), read and checked before anything large is allocated.

    magic "GGUF" | version u32 | n_tensors u64 | n_kv u64
    n_kv times:      key (u64 length, UTF-8) | value type u32 | value
    n_tensors times: name | n_dims u32 | dims u64 x n_dims | ggml type u32 | offset u64
    padding to `general.alignment` (32) | the tensors' data, each at data_start + offset

All numbers are little-endian. A value is a number, a bool, a string (u64 length, then bytes) or an
array (item type u32, count u64, items). Every count and length is checked against what is left of
the file before it is read: a header that says 2^60 bytes follow, in a file of 2 kB, is a one-line
refusal, not an allocation that never ends. The tensors' data is not read here; `Header.tensors`
says where each one is, its bytes and its shape (hub/gguf/tensors.py reads them).
"""

from __future__ import annotations

import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qkv.core.io.files import open_regular
from qkv.core.io.refusal import Refusal, phrase

MAGIC = b"GGUF"
VERSIONS = (2, 3)  # version 1 counted in u32 and is long gone; 2 and 3 differ only in big-endian support
STRING_LIMIT = 64 << 20  # one string: a chat template is kilobytes, a token a few bytes
ARRAY_LIMIT = 16 << 20  # items of one array: the largest vocabularies have a few hundred thousand tokens
MAX_DIMS = 4  # ggml's GGML_MAX_DIMS
DEFAULT_ALIGNMENT = 32

# value types: (numpy dtype, bytes) of the numbers; 7 is a bool, 8 a string, 9 an array
_NUMBERS = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 10: "<u8", 11: "<i8", 12: "<f8"}
BOOL, STRING, ARRAY = 7, 8, 9
_SMALLEST = {**{k: np.dtype(v).itemsize for k, v in _NUMBERS.items()}, BOOL: 1, STRING: 8, ARRAY: 12}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as the header describes it. `dims` in ggml's order (dims[0]: the length of a row,
    the numbers stored next to each other); `shape` is PyTorch's order, the reverse."""

    name: str
    dims: tuple[int, ...]
    ggml_type: int
    start: int  # where its first byte is in the file
    size: int  # its bytes

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dims[::-1]

    @property
    def type_name(self) -> str:
        from gguf.constants import GGMLQuantizationType

        return GGMLQuantizationType(self.ggml_type).name


@dataclass(frozen=True)
class Header:
    """What a GGUF file says before its data: its metadata (key -> value: a number, bool, string or list)
    and its tensors, name -> TensorInfo, in the order the file lists them."""

    path: Path
    version: int
    metadata: dict
    tensors: dict[str, TensorInfo]
    file_size: int

    def get(self, key: str, default=None):
        return self.metadata.get(key, default)


class _Cursor:
    """Reads a file front to back, refusing any read that would pass its end."""

    def __init__(self, f, path: Path, size: int):
        self.f, self.path, self.size, self.pos = f, path, size, 0

    def left(self) -> int:
        return self.size - self.pos

    def take(self, n: int, what) -> bytes:
        if n > self.left():
            raise Refusal.of("gguf.ends_inside", path=self.path, what=what, n=f"{n:,}", left=f"{self.left():,}")
        data = self.f.read(n)
        if len(data) != n:  # the file shrank while it was read
            raise Refusal.of("gguf.ends_inside", path=self.path, what=what, n=f"{n:,}", left=f"{len(data):,}")
        self.pos += n
        return data

    def number(self, code: int, what):
        dtype = np.dtype(_NUMBERS[code])
        return np.frombuffer(self.take(dtype.itemsize, what), dtype)[0].item()

    def u32(self, what) -> int:
        return struct.unpack("<I", self.take(4, what))[0]

    def u64(self, what) -> int:
        return struct.unpack("<Q", self.take(8, what))[0]

    def string(self, what) -> str:
        n = self.u64(what)
        if n > STRING_LIMIT:
            raise Refusal.of("gguf.string_too_long", path=self.path, what=what, n=f"{n:,}", limit=f"{STRING_LIMIT:,}")
        data = self.take(n, what)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise Refusal.of("gguf.not_utf8", path=self.path, what=what) from None

    def count(self, n: int, smallest: int, limit: int, what) -> int:
        """`n` items of at least `smallest` bytes each: refused unless they can fit in what is left."""
        if n > limit or n * smallest > self.left():
            raise Refusal.of("gguf.count_too_large", path=self.path, what=what, n=f"{n:,}", left=f"{self.left():,}")
        return n


def _value(c: _Cursor, code: int, what, in_array: bool = False):
    """One value of type `code` (a number, bool, string or array of them)."""
    if code in _NUMBERS:
        return c.number(code, what)
    if code == BOOL:
        return c.take(1, what) != b"\0"
    if code == STRING:
        return c.string(what)
    if code == ARRAY and not in_array:
        item = c.u32(what)
        if item not in _SMALLEST or item == ARRAY:
            raise Refusal.of("gguf.value_type", path=c.path, what=what, code=item)
        n = c.count(c.u64(what), _SMALLEST[item], ARRAY_LIMIT, what)
        if item in _NUMBERS:  # the whole array in one read
            dtype = np.dtype(_NUMBERS[item])
            return np.frombuffer(c.take(n * dtype.itemsize, what), dtype).tolist()
        return [_value(c, item, what, True) for _ in range(n)]
    raise Refusal.of("gguf.value_type", path=c.path, what=what, code=code)


def _tensor_info(c: _Cursor) -> tuple[str, tuple[int, ...], int, int]:
    name = c.string(phrase("gguf.part_tensor_name"))
    n_dims = c.u32(name)
    if not 1 <= n_dims <= MAX_DIMS:
        raise Refusal.of("gguf.tensor_dims", path=c.path, name=name, n=n_dims, most=MAX_DIMS)
    dims = tuple(c.u64(name) for _ in range(n_dims))
    return name, dims, c.u32(name), c.u64(name)


def _tensor_bytes(path: Path, name: str, dims: tuple[int, ...], ggml_type: int) -> int:
    """The bytes of a tensor of `dims` in `ggml_type`: rows of whole blocks (block_size numbers in type_size bytes)."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
    except (ValueError, KeyError):
        raise Refusal.of("gguf.tensor_type_unknown", path=path, name=name, code=ggml_type) from None
    if any(d < 1 for d in dims) or dims[0] % block:
        raise Refusal.of("gguf.tensor_row", path=path, name=name, dims=list(dims), block=block)
    rows = 1
    for d in dims[1:]:
        rows *= d
    return rows * (dims[0] // block) * type_size


def read_header(path) -> Header:
    """The header of the GGUF file `path`, every count, length and tensor checked against the file's size."""
    path = Path(path)
    try:
        f = open_regular(path, what="GGUF file")
    except FileNotFoundError:
        raise Refusal.of("gguf.no_file", path=path) from None
    except ValueError:  # a FIFO, a device, a directory: opening it could wait forever
        raise Refusal.of("gguf.not_regular", path=path, kind=_kind(path)) from None
    with f:
        c = _Cursor(f, path, os.fstat(f.fileno()).st_size)
        if c.left() < 4 or f.read(4) != MAGIC:
            raise Refusal.of("gguf.magic", path=path)
        c.pos = 4
        version = c.u32(phrase("gguf.part_version"))
        if version not in VERSIONS:
            raise Refusal.of("gguf.version", path=path, version=version, versions=list(VERSIONS))
        n_tensors, n_kv = c.u64(phrase("gguf.part_counts")), c.u64(phrase("gguf.part_counts"))
        c.count(n_kv, 8 + 4 + 1, ARRAY_LIMIT, phrase("gguf.part_metadata"))
        metadata: dict = {}
        for _ in range(n_kv):
            key = c.string(phrase("gguf.part_key"))
            if key in metadata:
                raise Refusal.of("gguf.duplicate", path=path, what=phrase("gguf.part_key"), name=key)
            metadata[key] = _value(c, c.u32(key), key)
        c.count(n_tensors, 8 + 4 + 8 + 4 + 8, ARRAY_LIMIT, phrase("gguf.part_tensors"))
        infos = [_tensor_info(c) for _ in range(n_tensors)]
        data_start = _aligned(c.pos, _alignment(path, metadata))
    return Header(path, version, metadata, _tensors(path, infos, data_start, c.size, metadata), c.size)


def _kind(path: Path):
    """What `path` is, when it is not a regular file (a phrase: a FIFO, a directory, a device, ...)."""
    mode = os.stat(path).st_mode
    kinds = (("fifo", stat.S_ISFIFO), ("directory", stat.S_ISDIR), ("device", stat.S_ISCHR), ("device", stat.S_ISBLK))
    return phrase(f"gguf.kind_{next((k for k, is_kind in kinds if is_kind(mode)), 'other')}")


def _alignment(path: Path, metadata: dict) -> int:
    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or isinstance(alignment, bool) or alignment < 1 or alignment & (alignment - 1):
        raise Refusal.of("gguf.alignment", path=path, got=repr(alignment))
    return alignment


def _aligned(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


def _tensors(path: Path, infos: list, data_start: int, size: int, metadata: dict) -> dict[str, TensorInfo]:
    """Each tensor's place and size, checked: a known type, whole blocks, aligned, inside the file."""
    alignment = _alignment(path, metadata)
    tensors: dict[str, TensorInfo] = {}
    for name, dims, ggml_type, offset in infos:
        if name in tensors:
            raise Refusal.of("gguf.duplicate", path=path, what=phrase("gguf.part_tensor"), name=name)
        n = _tensor_bytes(path, name, dims, ggml_type)
        if offset % alignment:
            raise Refusal.of("gguf.misaligned", path=path, name=name, offset=offset, alignment=alignment)
        start = data_start + offset
        if start + n > size:
            raise Refusal.of("gguf.tensor_beyond", path=path, name=name, end=f"{start + n:,}", size=f"{size:,}")
        tensors[name] = TensorInfo(name, dims, ggml_type, start, n)
    return tensors
