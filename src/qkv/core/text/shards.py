"""Token ids on disk, read by memory mapping: a corpus larger than memory (docs/data.md).

A data folder, written by `qkv tokenize` (qkv.core.text.prepare):

    DATA/index.json          what is there: shards, token counts, sources, the tokenizer, the split
    DATA/tokenizer.json      the tokenizer that wrote the ids (qkv's tokenizer JSON, as a checkpoint's)
    DATA/shard_00000.bin     HEADER_BYTES of header, then the ids, little-endian uint16 or uint32
    DATA/shard_00001.bin     ...

The shards, one after the other, are one sequence of ids (the source files' ids, in the index's order).
A shard's header: MAGIC (8 bytes), then the format version, the bytes per id (2 or 4) and the count of
ids (struct "<IIQ"), then 8 zero bytes. `open_data` checks every header and file size against the
index (a truncated or foreign shard is refused in one line) without reading the ids; `MappedIds` is
the sequence, memory-mapped, and reads only the windows a batch takes.
"""

from __future__ import annotations

import bisect
import hashlib
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import torch

from qkv.core.io.files import JSON_LIMIT, read_json_object
from qkv.core.io.refusal import Refusal
from qkv.core.text.tokenizers import Tokenizer, load_tokenizer

MAGIC = b"qkvtoks\n"
VERSION = 1
_FIELDS = struct.Struct("<IIQ8x")  # version, bytes per id, count of ids, 8 zero bytes
HEADER_BYTES = len(MAGIC) + _FIELDS.size  # 32
DTYPES: dict[int, np.dtype] = {2: np.dtype("<u2"), 4: np.dtype("<u4")}
INDEX, TOKENIZER = "index.json", "tokenizer.json"
FORMAT = "qkv token shards"
VAL_RULE = "the last int(tokens * val_fraction) tokens, val_fraction being the training run's (qkv train --set)"


def id_bytes(vocab_size: int) -> int:
    """2 (uint16) where every id fits in 16 bits, else 4 (uint32)."""
    return 2 if vocab_size <= 1 << 16 else 4


def header(itemsize: int, count: int) -> bytes:
    return MAGIC + _FIELDS.pack(VERSION, itemsize, count)


def read_header(path: Path) -> tuple[int, int]:
    """(bytes per id, count of ids) of the shard at `path`, checked: its magic, version, id size, and
    a file size that holds exactly the ids it says. Anything else is refused in one line."""
    with open(path, "rb") as f:
        head = f.read(HEADER_BYTES)
    if len(head) < HEADER_BYTES or head[: len(MAGIC)] != MAGIC:
        raise Refusal.of("shards.not_a_shard", path=path)
    version, itemsize, count = _FIELDS.unpack(head[len(MAGIC) :])
    if version != VERSION:
        raise Refusal.of("shards.version", path=path, version=version, expected=VERSION)
    if itemsize not in DTYPES:
        raise Refusal.of("shards.id_size", path=path, size=itemsize)
    size = path.stat().st_size
    if size != HEADER_BYTES + itemsize * count:
        raise Refusal.of(
            "shards.truncated", path=path, count=count, size=size, expected=HEADER_BYTES + itemsize * count
        )
    return itemsize, count


@dataclass(frozen=True)
class Shard:
    """One shard file, memory-mapped: `ids` is a read-only array over the mapping (nothing is read until
    an id is indexed)."""

    path: Path
    mapping: mmap.mmap
    ids: np.ndarray

    @classmethod
    def open(cls, path: Path, itemsize: int, count: int) -> Shard:
        with open(path, "rb") as f:
            mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if hasattr(mapping, "madvise"):  # windows at random offsets: no read-ahead around each
            mapping.madvise(mmap.MADV_RANDOM)
        return cls(path, mapping, np.frombuffer(mapping, dtype=DTYPES[itemsize], count=count, offset=HEADER_BYTES))

    def release(self) -> None:
        """Unmap the pages read so far from this process (they stay in the page cache, and are mapped
        again when read again): what the process holds of the shard stays one batch, whatever its size."""
        if hasattr(mmap, "MADV_DONTNEED"):
            self.mapping.madvise(mmap.MADV_DONTNEED)


class MappedIds:
    """A sequence of token ids held in shard files, memory-mapped: len(), slices (a view, nothing read)
    and indexing by a tensor of positions (only those ids are read), as a 1-D tensor of ids is indexed
    by get_batch and split by split_ids."""

    def __init__(self, shards: list[Shard], start: int = 0, stop: int | None = None, limit: int | None = None):
        self.shards, self.limit = shards, limit  # limit: the ids read must be below it (a model's d_vocab)
        self.ends = list(np.cumsum([len(s.ids) for s in shards]))  # where each shard ends in the whole sequence
        self.starts = [0, *self.ends[:-1]]
        total = self.ends[-1] if self.ends else 0
        self.start, self.stop = start, total if stop is None else stop

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                raise IndexError("MappedIds slices take step 1 only")
            return MappedIds(self.shards, self.start + start, self.start + max(start, stop), self.limit)
        return self.gather(torch.as_tensor(key))

    def limited(self, limit: int) -> MappedIds:
        """The same ids, each checked below `limit` as it is read (a shard damaged after it was written)."""
        return MappedIds(self.shards, self.start, self.stop, limit)

    def gather(self, index: torch.Tensor) -> torch.Tensor:
        """The ids at the positions `index` (any shape, positions in [0, len)) as a long tensor of that
        shape; each shard reads only the positions that fall in it."""
        pos = index.numpy().astype(np.int64) + self.start
        out = np.empty(pos.shape, dtype=np.int64)
        if pos.size == 0:
            return torch.from_numpy(out)
        if pos.min() < self.start or pos.max() >= self.stop:
            raise IndexError(f"position out of range [0, {len(self)})")
        first = bisect.bisect_right(self.ends, int(pos.min()))
        last = bisect.bisect_right(self.ends, int(pos.max()))
        for s in range(first, last + 1):
            inside = (pos >= self.starts[s]) & (pos < self.ends[s])
            read = self.shards[s].ids[pos[inside] - self.starts[s]]
            self.shards[s].release()
            if self.limit is not None and read.size and read.max() >= self.limit:  # a shard damaged since
                raise Refusal.of("shards.id_beyond", path=self.shards[s].path, id=int(read.max()), n=self.limit)
            out[inside] = read
        return torch.from_numpy(out)

    def numpy(self) -> np.ndarray:
        """Every id, read into memory (int64): for tests and small data only."""
        return self.gather(torch.arange(len(self))).numpy()


@dataclass(frozen=True)
class TokenData:
    """A data folder opened: its index, its tokenizer and its ids (memory-mapped)."""

    path: Path
    index: dict
    tokenizer: Tokenizer
    ids: MappedIds

    @property
    def sha256(self) -> str:
        """The data's identity (the index's sha256: of the tokenizer and every shard's ids), what a resume checks."""
        return self.index["sha256"]

    def origin(self) -> dict:
        """config.json's "data" for a run trained on this folder."""
        return {"kind": "shards", "path": str(self.path.resolve()), "sha256": self.sha256}


def _index(folder: Path) -> dict:
    """index.json of a data folder, its fields checked (each shard's name, count and sha256)."""
    if not folder.exists():
        raise Refusal.of("shards.missing", path=folder)
    if not folder.is_dir() or not (folder / INDEX).is_file():
        raise Refusal.of("shards.not_data", path=folder)
    try:
        index = read_json_object(folder / INDEX, JSON_LIMIT)
    except ValueError as e:
        raise Refusal.of("shards.bad_index", path=folder / INDEX, reason=str(e)) from None
    shards = index.get("shards")
    good = (
        index.get("format") == FORMAT
        and index.get("version") == VERSION
        and isinstance(index.get("sha256"), str)
        and isinstance(shards, list)
        and len(shards) > 0
        and all(
            isinstance(s, dict)
            and isinstance(s.get("file"), str)
            and Path(s["file"]).name == s["file"]
            and isinstance(s.get("tokens"), int)
            and isinstance(s.get("sha256"), str)
            for s in shards
        )
    )
    if not good:
        raise Refusal.of("shards.bad_index", path=folder / INDEX, reason=f"not a {FORMAT} index of version {VERSION}")
    return index


def open_data(path) -> TokenData:
    """The data folder at `path`, checked: its index, its tokenizer, every shard's header and size."""
    folder = Path(path)
    index = _index(folder)
    tokenizer = load_tokenizer(folder / TOKENIZER)
    opened = []
    for s in index["shards"]:
        file = folder / s["file"]
        if not file.is_file():
            raise Refusal.of("shards.shard_missing", path=file)
        itemsize, count = read_header(file)
        if count != s["tokens"] or itemsize != id_bytes(tokenizer.vocab_size):
            raise Refusal.of("shards.shard_differs", path=file, index=folder / INDEX)
        if count:
            opened.append(Shard.open(file, itemsize, count))
    ids = MappedIds(opened)
    if len(ids) != index.get("tokens"):
        raise Refusal.of("shards.shard_differs", path=folder, index=folder / INDEX)
    return TokenData(folder, index, tokenizer, ids)


def identity(tokenizer_sha256: str, shard_sha256s: list[str]) -> str:
    """The data's sha256: of the tokenizer file's sha256 and each shard's ids' sha256, in order."""
    h = hashlib.sha256(tokenizer_sha256.encode("ascii"))
    for s in shard_sha256s:
        h.update(s.encode("ascii"))
    return h.hexdigest()


class ShardWriter:
    """Writes ids into shard files of at most `shard_tokens` ids each, in `folder`; each shard's sha256
    is of its ids' bytes (after the header), computed as they are written."""

    def __init__(self, folder: Path, itemsize: int, shard_tokens: int):
        self.folder, self.dtype, self.shard_tokens = folder, DTYPES[itemsize], shard_tokens
        self.done: list[dict] = []
        self._file: BinaryIO | None = None
        self._name, self._count = "", 0
        self._hash = hashlib.sha256()

    def _open(self) -> BinaryIO:
        name = f"shard_{len(self.done):05d}.bin"
        self._file = f = open(self.folder / name, "wb")
        f.write(header(self.dtype.itemsize, 0))  # the count is written when the shard is full
        self._name, self._count, self._hash = name, 0, hashlib.sha256()
        return f

    def _close(self) -> None:
        assert self._file is not None
        self._file.seek(0)
        self._file.write(header(self.dtype.itemsize, self._count))
        self._file.close()
        self._file = None
        self.done.append({"file": self._name, "tokens": self._count, "sha256": self._hash.hexdigest()})

    def write(self, ids) -> None:
        """Append `ids` (a list or array of ints, each below the vocabulary size) to the shards."""
        array = np.asarray(ids, dtype=self.dtype)
        while len(array):
            f = self._file if self._file is not None else self._open()
            room = self.shard_tokens - self._count
            part, array = array[:room], array[room:]
            data = part.tobytes()
            f.write(data)
            self._hash.update(data)
            self._count += len(part)
            if self._count == self.shard_tokens:
                self._close()

    def finish(self) -> list[dict]:
        """Close the last shard; every shard's {"file", "tokens", "sha256"}."""
        if self._file is not None:
            self._close()
        return self.done
