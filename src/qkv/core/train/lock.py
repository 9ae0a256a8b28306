"""One writer at a time in a checkpoint directory.

`locked(dir)` holds `fcntl.flock` on DIR/.qkv.lock for the life of a run. The kernel releases it
when the process ends, however it ends (kill -9 included), so a lock is never left stale. The file
holds the owner's pid and start time, so that a second run can say who holds the directory. On
release the file is removed; a run that took the lock on a file removed meanwhile takes it again on
the new one. Which files in the directory qkv may touch at all: rundir.py.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path

from qkv.core.io.files import read_bytes

try:
    import fcntl

    HAS_FLOCK = True
except ImportError:  # not POSIX (Windows): no lock
    HAS_FLOCK = False

LOCK_NAME = ".qkv.lock"


class DirectoryLocked(RuntimeError):
    """Another process is writing into the checkpoint directory."""


def _holder(path: Path) -> str:
    try:  # a regular file of a line (a FIFO or a device put there must not hang the message)
        text = read_bytes(path, 4096, "lock file").decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        text = ""
    return text or "pid unknown"


def _flock(fd: int, path: Path) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DirectoryLocked(
            f"{path.parent} is in use by another qkv run ({_holder(path)}); "
            "wait for it to finish or choose another directory"
        ) from None


def _acquire(path: Path) -> int:
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        _flock(fd, path)
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:  # the previous holder removed the file as we opened it
            same = False
        if same:
            return fd
        os.close(fd)


def check_free(directory) -> None:
    """Raise DirectoryLocked now if another process holds the directory's lock (before slow work)."""
    path = Path(directory) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY) if HAS_FLOCK else None
    except OSError:  # no lock file: free
        return
    if fd is not None:
        _flock(fd, path)
        os.close(fd)


@contextmanager
def locked(directory):
    """Hold the directory's lock (creating the directory) until the block ends; DirectoryLocked if taken."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if not HAS_FLOCK:
        yield
        return
    path = directory / LOCK_NAME
    fd = _acquire(path)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
        yield
    finally:
        path.unlink(missing_ok=True)  # before closing: while we hold the lock nobody else can own the file
        os.close(fd)
