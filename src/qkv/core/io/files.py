"""Writing a file so that a kill at any moment leaves either the old file or the whole new one; reading
one only if it is a regular file of a bounded size (a FIFO, a device or a huge file is a one-line refusal)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from qkv.core.io.finite import dumps
from qkv.core.io.refusal import Refusal


@contextmanager
def replacing(path) -> Iterator[BinaryIO]:
    """A binary file to write `path`'s new contents into: a temporary file beside it, renamed over `path`
    (os.replace) when the block ends without an error, removed when it ends with one. So a reader, a
    kill or a full disk (ENOSPC, or EFBIG past `ulimit -f`) leaves either the old file whole or the new
    one whole, never a fragment. Every file qkv writes is written here (atomic_write, write_text, a
    figure's savefig). The folder must exist: an OSError naming `path`, not the temporary file, otherwise.
    A file replaced keeps its permission bits; a path that is a device or a FIFO (/dev/stdout) holds
    nothing to keep and is written as it is."""
    path = Path(path)
    try:
        st: os.stat_result | None = os.stat(path)
    except OSError:
        st = None
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        with open(path, "wb") as direct:
            yield direct
        return
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        f = open(tmp, "wb")
    except OSError as e:  # say the file asked for, not the temporary one
        raise _named(e, tmp, path) from None
    try:
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if st is not None:  # the permissions of the file it replaces, not the umask's
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
    except OSError as e:  # e.g. the disk is full: leave no half-written file behind, and the old one as it was
        tmp.unlink(missing_ok=True)
        raise _named(e, tmp, path) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def _named(error: OSError, tmp: Path, path: Path) -> OSError:
    """`error` said of `path` when it is about the temporary file (or about no file: a failed write)."""
    if error.errno is None or error.filename not in (None, str(tmp)):
        return error
    return OSError(error.errno, error.strerror, str(path))  # (OSError picks the subclass of the errno)


def atomic_write(path, data: bytes) -> None:
    """Write bytes to path so that a reader sees either the old file or the whole new one (replacing)."""
    with replacing(path) as f:
        f.write(data)


def write_text(path, text: str) -> None:
    """Write `text` as UTF-8 to path, whole or not at all (replacing)."""
    atomic_write(path, text.encode("utf-8"))


def check_folder_of(path) -> Path:
    """`path` as a file to write, refused before any work is done when its folder is not there (the
    OSError replacing would raise at the end, naming only `path`): one line naming the folder;
    nothing makes it."""
    path = Path(path)
    parent = path.parent
    if not parent.is_dir():
        key = "outputs.folder_is_file" if parent.exists() else "outputs.no_folder"
        raise Refusal.of(key, path=str(path), folder=str(parent))
    return path


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
    """JSON as qkv writes it to a file: a NaN becomes null, and the document says so (core/io/finite.py)."""
    return (dumps(obj, indent=indent) + "\n").encode("utf-8")


def write_json(path: Path, obj) -> None:
    atomic_write(path, json_bytes(obj))


# ---------------------------------------------------------------------------- reading

# How large a file qkv reads whole may be. A file past its limit is damage or a mistake, never a model's
# or a run's: a config is a few kB, the largest tokenizers on the hub a few tens of MB, and the log of
# the longest run (TrainConfig.steps at most 10 million, about 75 bytes a line) under 1 GB.
MB, GB = 10**6, 10**9
JSON_LIMIT = 16 * MB  # config.json, state.json, tokenizer_config.json, sentence_bert_config.json, an index
TOKENIZER_LIMIT = 256 * MB  # tokenizer.json (a qkv one or Hugging Face's), vocab.txt, vocab.json, merges.txt
LOG_LIMIT = 2 * GB  # log.jsonl
TEXT_LIMIT = 2 * GB  # a training text (read whole, and held as its token ids)

_NOT_REGULAR = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


BOM = "\ufeff"  # a byte-order mark, as some editors begin a UTF-8 file: not part of the text


def without_bom(text: str) -> str:
    return text.removeprefix(BOM)


def format_bytes(n: int) -> str:
    """3.3 TB, 21.9 GB, 16.0 MB, 512 bytes: decimal units, as disks and `df -H` count."""
    for unit, size in (("TB", 10**12), ("GB", GB), ("MB", MB), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def _refuse(path, st: os.stat_result, limit: int | None, what: str) -> None:
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for is_kind, name in _NOT_REGULAR if is_kind(st.st_mode)), "not a file")
        link = f" (a link to {os.path.realpath(path)})" if os.path.islink(path) else ""
        raise ValueError(f"{path} is {kind}{link}, not a regular file")
    if limit is not None and st.st_size > limit:
        raise ValueError(f"{path} is {format_bytes(st.st_size)}, more than a {what} can be ({format_bytes(limit)})")


def check_regular(path, limit: int | None = None, what: str = "file") -> None:
    """Refuse, in one line naming it, a path that is not a regular file (a link to one is fine) or is
    larger than `limit`, before anything opens it: opening a FIFO waits for a writer, opening some
    devices does something, and reading /dev/zero never ends. FileNotFoundError if it does not exist.
    For a file a library opens by its name (safetensors, tokenizers); qkv's own reads use read_bytes."""
    _refuse(path, os.stat(path), limit, what)


def open_regular(path, limit: int | None = None, what: str = "file") -> BinaryIO:
    """`path` opened for reading, as check_regular checks it, and checked again on the open descriptor
    (fstat: the name may have been pointed elsewhere in between). O_NONBLOCK, so that a FIFO put there
    meanwhile does not hang the open; no read blocks on a regular file anyway."""
    check_regular(path, limit, what)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        _refuse(path, os.fstat(fd), limit, what)
        if hasattr(os, "O_NONBLOCK"):  # (Windows has neither)
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path, limit: int, what: str) -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes (ValueError naming it otherwise;
    FileNotFoundError if it does not exist): every file qkv reads whole is read here. Never more than
    limit bytes are read, even from a file that grows while it is read."""
    with open_regular(path, limit, what) as f:
        data = f.read(os.fstat(f.fileno()).st_size)  # its size, not the limit: read(n) first allocates n bytes
        while len(data) <= limit and (more := f.read(min(1 << 20, limit + 1 - len(data)))):  # it grew meanwhile
            data += more
    if len(data) > limit:
        raise ValueError(f"{path} grew past {format_bytes(limit)} while it was read, more than a {what} can be")
    return data


def read_json_object(path, limit: int = JSON_LIMIT) -> dict:
    """The JSON object in `path`, read by read_bytes; ValueError naming the file if it is not one."""
    data = read_bytes(path, limit, "JSON file")
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # RecursionError: [[[[... nested too deep
        raise ValueError(f"{path} could not be read as JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path} is not a JSON object")
    return obj
