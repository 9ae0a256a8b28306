"""The weight files of a Hugging Face directory: exactly those its layout names, read by their headers.

`stored_tensors(d)` opens model.safetensors, or the shards model.safetensors.index.json maps every
tensor to, and gives each tensor's name, shape and dtype from the headers alone; the data is read one
tensor at a time, later, through safetensors' memory map (models.pretrained._load_weights).
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch

from ..files import check_regular, read_json_object

INDEX = "model.safetensors.index.json"  # a sharded model's: which file holds each tensor


def weight_files(d: Path) -> list[Path]:
    """The files that hold a Hugging Face directory's weights, as its layout names them (a ValueError if
    it names none or is broken)."""
    return list(_layout(d))


def _layout(d: Path) -> dict[Path, set[str] | None]:
    """The weight files the directory's layout names, each with the tensors it must hold (None: what it
    holds): model.safetensors, or the shards model.safetensors.index.json maps every tensor to. These
    are the files transformers reads; another .safetensors file beside them is not read (it once was,
    and a stray copy sorted after model.safetensors silently replaced its weights)."""
    single, index = d / "model.safetensors", d / INDEX
    if single.exists():  # beside an index too: transformers reads model.safetensors then, and so does qkv
        return {single: None}
    if not index.exists():
        found = sorted(p.name for p in d.glob("*.safetensors"))
        if found:
            raise ValueError(
                f"{d} has no model.safetensors nor {INDEX} (it holds {', '.join(found[:3])}): "
                "name the weights model.safetensors"
            )
        found = ", ".join(sorted(p.name for p in d.glob("*.bin"))) or "none"
        raise ValueError(
            f"{d} holds no .safetensors weights (found .bin files: {found}); save with safe_serialization=True"
        )
    weight_map = read_json_object(index).get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map or not all(isinstance(f, str) for f in weight_map.values()):
        raise ValueError(f"{index}: field 'weight_map' must map every tensor name to the file that holds it")
    files: dict[Path, set[str]] = {}
    for tensor, name in weight_map.items():
        if name in ("", ".", "..") or any(c in name for c in "/\\\0"):  # a file of this directory, by its name
            raise ValueError(f"{index}: weight_map[{tensor!r}] = {name!r} is not the name of a file in {d}")
        files.setdefault(d / name, set()).add(tensor)
    for path in files:
        if not path.exists():
            raise ValueError(f"{index} names {path.name}, which is missing")
    return files


@dataclass(frozen=True)
class _Stored:
    """A tensor of a weight file as its header describes it; read() reads it from the memory map."""

    file: object  # the file, open (safetensors.safe_open)
    name: str
    shape: tuple[int, ...]
    dtype: str  # safetensors' name: "F32", "BF16", ...

    def read(self) -> torch.Tensor:
        return self.file.get_tensor(self.name)


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
                raise ValueError(f"{path} is not a valid safetensors file: {e}") from None
            held[path] = set(f.keys())
            for name in held[path]:
                t = f.get_slice(name)
                theirs[name] = _Stored(f, name, tuple(t.get_shape()), t.get_dtype())
        shards = [(path, mapped, held[path]) for path, mapped in layout.items() if mapped is not None]
        for path, mapped, names in shards:  # a sharded model: the index and each shard agree, tensor by tensor
            if mapped - names:
                raise ValueError(f"{d / INDEX} maps {min(mapped - names)} to {path.name}, which does not hold it")
        for path, mapped, names in shards:
            if names - mapped:
                raise ValueError(f"{path} holds {min(names - mapped)}, which {INDEX} does not map to it")
        yield theirs
