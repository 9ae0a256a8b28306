"""The weight files of a Hugging Face directory: exactly those its layout names, read by their headers.

`stored_tensors(d)` opens model.safetensors, or the shards model.safetensors.index.json maps every
tensor to, and gives each tensor's name, shape and dtype from the headers alone; the data is read one
tensor at a time, later, by plain reads (hub/read.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch

from qkv.core.io.files import check_regular, read_json_object
from qkv.core.io.refusal import Refusal, phrase

INDEX = "model.safetensors.index.json"  # a sharded model's: which file holds each tensor
CHUNK = 8 << 20  # bytes read at a time into a tensor of another dtype


def weight_files(d: Path) -> list[Path]:
    """The files that hold a Hugging Face directory's weights, as its layout names them (a ValueError if
    it names none or is broken)."""
    return list(_layout(d))


def _layout(d: Path) -> Mapping[Path, set[str] | None]:
    """The weight files the directory's layout names, each with the tensors it must hold (None: what it
    holds): model.safetensors, or the shards model.safetensors.index.json maps every tensor to. These
    are the files transformers reads; another .safetensors file beside them is not read (it once was,
    and a stray copy sorted after model.safetensors silently replaced its weights)."""
    single, index = d / "model.safetensors", d / INDEX
    for name in (single, index):
        if name.is_symlink() and not name.exists():  # a link to nothing: say so, rather than that it is missing
            raise Refusal.of("tokenizer_safety.broken_link", path=name, target=os.readlink(name))
    if single.exists():  # beside an index too: transformers reads model.safetensors then, and so does qkv
        return {single: None}
    if not index.exists():
        found = sorted(p.name for p in d.glob("*.safetensors"))
        if found:
            raise Refusal.of("hub.weights_unnamed", path=d, index=INDEX, found=found[:3])
        found = sorted(p.name for p in d.glob("*.bin"))
        raise Refusal.of("hub.no_safetensors", path=d, found=found or phrase("hub.none"))
    weight_map = read_json_object(index).get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map or not all(isinstance(f, str) for f in weight_map.values()):
        raise Refusal.of("hub.weight_map", path=index)
    files: dict[Path, set[str]] = {}
    for tensor, name in weight_map.items():
        if name in ("", ".", "..") or any(c in name for c in "/\\\0"):  # a file of this directory, by its name
            raise Refusal.of("hub.weight_map_file", path=index, tensor=repr(tensor), name=repr(name), directory=d)
        files.setdefault(d / name, set()).add(tensor)
    for path in files:
        if not path.exists():
            raise Refusal.of("hub.shard_missing", path=index, name=path.name)
    return files


# safetensors' dtype names of the float types, as torch dtypes
SAFETENSORS_FLOATS = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "F8_E4M3": torch.float8_e4m3fn,
    "F8_E5M2": torch.float8_e5m2,
}


@dataclass(frozen=True)
class _Stored:
    """A tensor of a weight file as its header describes it, and where its bytes are.

    read() reads those bytes into memory of its own with a plain file read, not through a memory map:
    the pages of a mapped file count in the process's resident memory while the file is open (1.1 GB
    for Qwen2.5-0.5B's bfloat16 weights, on top of the model), a read leaves them in the page cache."""

    path: Path
    name: str
    shape: tuple[int, ...]
    dtype: str  # safetensors' name: "F32", "BF16", ...
    start: int  # the offset of its first byte in the file
    size: int  # its bytes

    @property
    def torch_dtype(self) -> torch.dtype:
        dtype = SAFETENSORS_FLOATS.get(self.dtype)
        if dtype is None:
            raise Refusal.of("hub.stored_dtype", path=self.path, name=self.name, dtype=self.dtype)
        return dtype

    def read(self) -> torch.Tensor:
        """The tensor, in memory of its own, in the file's dtype."""
        out = torch.empty(self.shape, dtype=self.torch_dtype)
        self._read_bytes(out)
        return out

    def read_into(self, out: torch.Tensor) -> None:
        """Write the tensor into `out` (contiguous, of its shape): its bytes straight into out's memory when
        the dtypes agree, else CHUNK bytes at a time through one small buffer, converted as they come (no
        copy of the whole tensor in the file's dtype, no fresh memory to fault in for each one)."""
        if not out.is_contiguous() or tuple(out.shape) != self.shape:
            raise Refusal.of(
                "hub.stored_shape", path=self.path, name=self.name, shape=self.shape, wanted=tuple(out.shape)
            )
        if out.dtype == self.torch_dtype:
            return self._read_bytes(out)
        flat, size = out.view(-1), SAFETENSORS_FLOATS[self.dtype].itemsize
        if self.size != flat.numel() * size:
            raise Refusal.of("hub.stored_size", path=self.path, name=self.name, size=self.size)
        buffer = torch.empty(CHUNK // size, dtype=self.torch_dtype)
        with open(self.path, "rb") as f:
            f.seek(self.start)
            for first in range(0, flat.numel(), buffer.numel()):
                part = buffer[: min(buffer.numel(), flat.numel() - first)]
                if f.readinto(part.view(torch.uint8).numpy().data) != part.numel() * size:
                    raise Refusal.of("hub.ends_inside", path=self.path, name=self.name)
                flat[first : first + part.numel()].copy_(part)

    def _read_bytes(self, out: torch.Tensor) -> None:
        if self.size != out.numel() * out.element_size():
            raise Refusal.of("hub.stored_size", path=self.path, name=self.name, size=self.size)
        if self.size == 0:
            return
        with open(self.path, "rb") as f:
            f.seek(self.start)
            if f.readinto(out.view(-1).view(torch.uint8).numpy().data) != self.size:
                raise Refusal.of("hub.ends_inside", path=self.path, name=self.name)


def _header(path: Path) -> tuple[dict, int]:
    """The safetensors header of `path` (already checked by safe_open) and where its data begins."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return json.loads(f.read(n)), 8 + n


@contextmanager
def stored_tensors(d: Path):
    """{name: _Stored} of every tensor in the weight files of the layout, from their headers alone: the
    tensors are read one at a time, later, and only once their shapes are known to fit the config."""
    from safetensors import SafetensorError, safe_open

    layout = _layout(d)
    with ExitStack() as files:
        theirs, held = {}, {}  # held: file -> the names of its tensors
        for path in layout:
            check_regular(path)  # opening a FIFO would wait for a writer forever
            try:
                f = files.enter_context(safe_open(str(path), framework="pt"))
            except (SafetensorError, OSError) as e:
                raise Refusal.of("hub.not_safetensors", path=path, error=e) from None
            held[path] = set(f.keys())
            header, data = _header(path)
            for name in held[path]:
                begin, end = header[name]["data_offsets"]
                t = f.get_slice(name)
                theirs[name] = _Stored(path, name, tuple(t.get_shape()), t.get_dtype(), data + begin, end - begin)
        shards = [(path, mapped, held[path]) for path, mapped in layout.items() if mapped is not None]
        for path, mapped, names in shards:  # a sharded model: the index and each shard agree, tensor by tensor
            if mapped - names:
                raise Refusal.of("hub.shard_lacks", path=d / INDEX, tensor=min(mapped - names), name=path.name)
        for path, mapped, names in shards:
            if names - mapped:
                raise Refusal.of("hub.shard_extra", path=path, tensor=min(names - mapped), index=INDEX)
        yield theirs
