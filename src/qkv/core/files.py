"""Writing a file so that a kill at any moment leaves either the old file or the whole new one."""

from __future__ import annotations

import json
import os
from pathlib import Path


def atomic_write(path: Path, data: bytes) -> None:
    """Write bytes to path so that a reader sees either the old file or the whole new one."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        f = open(tmp, "wb")
    except OSError as e:  # say the file asked for, not the temporary one
        raise OSError(e.errno, e.strerror, str(path)) from None
    try:
        with f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except Exception:  # e.g. the disk is full: leave no half-written file behind
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some platforms cannot open a directory
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def json_bytes(obj, indent: int | None = 2) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=indent) + "\n").encode("utf-8")


def write_json(path: Path, obj) -> None:
    atomic_write(path, json_bytes(obj))
