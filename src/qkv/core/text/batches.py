"""Text in, batches out: read a UTF-8 file, split the token ids into train/val, sample batches.

A batch holds B windows of n_ctx + 1 consecutive tokens; x is each window without its last token,
y without its first, so y[t] is the token that follows x[..t] (the target of the prediction at t).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, TypeVar

import torch

from qkv.core.io.files import TEXT_LIMIT, read_bytes, without_bom
from qkv.core.io.refusal import Refusal
from qkv.core.machine.processes import ALONE, World


class _Sequence(Protocol):
    def __len__(self) -> int: ...
    def __getitem__(self, key: Any) -> Any: ...


Ids = TypeVar("Ids", bound=_Sequence)  # a 1-D tensor of token ids, or MappedIds (len, slices, indexing by a tensor)


def read_text(path) -> str:
    """The text of a UTF-8 file; a missing, empty or non-UTF-8 file, a FIFO or a device (a regular file
    only: reading a pipe may never end), or one past TEXT_LIMIT raises ValueError (one line)."""
    p = Path(path)
    if not p.exists():
        raise Refusal.of("errors.text_file_missing", path=p)
    if p.is_dir():
        raise Refusal.of("errors.not_a_file", path=p)
    data = read_bytes(p, TEXT_LIMIT, "training text")
    if not data.strip():
        raise Refusal.of("errors.text_file_empty", path=p)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise Refusal.of(
            "errors.text_file_not_utf8", path=p, byte=e.start, line=line, bytes=repr(data[e.start : e.start + 4])
        ) from None
    text = without_bom(text)
    if not text.strip():
        raise Refusal.of("errors.text_file_empty", path=p)
    return text


def split_ids(ids: Ids, val_fraction: float, n_ctx: int) -> tuple[Ids, Ids | None]:
    """The first (1 - val_fraction) of the tokens for training, the rest for validation (`ids`: a 1-D
    tensor, or ids on disk: qkv.core.text.shards.MappedIds, sliced without reading them).

    Each part needs at least n_ctx + 1 tokens (one window); otherwise ValueError says how many.
    """
    need = n_ctx + 1
    if len(ids) < need:
        raise Refusal.of("errors.text_too_short", n=len(ids), need=need)
    n_val = int(len(ids) * val_fraction)
    if n_val == 0:
        return ids, None
    train, val = ids[:-n_val], ids[-n_val:]
    if len(train) < need or len(val) < need:
        raise Refusal.of(
            "errors.text_split_short", n=len(ids), train=len(train), val=len(val), fraction=val_fraction, need=need
        )
    return train, val


def get_batch(ids, batch_size: int, n_ctx: int, generator: torch.Generator, world: World = ALONE):
    """x, y: windows at random offsets, y being x shifted by one token: this rank's rows of the global
    batch, (batch_size / world.size, n_ctx) each (all of it in one process).

    The offsets of all batch_size rows are drawn (every rank draws the same), then only this rank's
    windows are read: `ids` is a 1-D tensor of ids, or ids on disk (qkv.core.text.shards.MappedIds)
    that read only the positions indexed."""
    starts = torch.randint(len(ids) - n_ctx, (batch_size,), generator=generator)  # (B,)
    starts = world.shard(starts)  # (B/N,): this rank's rows
    index = starts[:, None] + torch.arange(n_ctx + 1)  # (B/N, n_ctx + 1)
    window = ids[index]  # (B/N, n_ctx + 1)
    return window[:, :-1], window[:, 1:]
