"""Which files of a checkpoint directory are qkv's own: the only ones it may replace or remove.

A directory is qkv's when its config.json or state.json carries "format": "qkv-checkpoint". In such a
directory qkv may replace or remove only: config.json, tokenizer.json, state.json, log.jsonl and
their staged forms (config.next.json, ...); weight files with qkv's names (model-0000020.safetensors)
that state.json names, or whose safetensors header carries the marker and the id of the run writing,
of the live checkpoint's run, or of a run it replaced (state.json's "replaced" lists those whose files
a killed clean-up left) — a qkv weight file copied in from elsewhere is left alone; and the temporary files
`.<one of those>.tmp-<pid>`. A non-empty directory that is not qkv's is never written into.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from qkv.core.io.files import JSON_LIMIT, open_regular, read_bytes
from qkv.core.io.refusal import Refusal
from qkv.core.train.lock import LOCK_NAME

FORMAT = "qkv-checkpoint"
FIXED = {"config": "config.json", "tokenizer": "tokenizer.json", "log": "log.jsonl"}
STAGED = {key: name.replace(".", ".next.", 1) for key, name in FIXED.items()}
OWN_NAMES = {"state.json", *FIXED.values(), *STAGED.values()}
WEIGHTS_RE = re.compile(r"(model|optimizer)-(\d{7,})(?:-\d+)?\.safetensors")
TMP_RE = re.compile(r"\.(.+)\.tmp-\d+")


def header_meta(path: Path) -> dict:
    """The __metadata__ of a safetensors file, read from its header alone ({} if there is none).
    A FIFO or a device in its place is a ValueError (files.open_regular), not a read that never ends."""
    with open_regular(path, what="safetensors file") as f:
        n = int.from_bytes(f.read(8), "little")  # the header: its length, then JSON with "__metadata__"
        if not 2 <= n <= 100_000_000:
            raise ValueError(f"{path} is not a valid safetensors file: header length {n}")
        try:
            meta = json.loads(f.read(n)).get("__metadata__") or {}
        except (ValueError, AttributeError):
            raise ValueError(f"{path} is not a valid safetensors file: its header is not a JSON object") from None
    return meta if isinstance(meta, dict) else {}


def weights_run(path: Path) -> str | None:
    """The run id in the header of a weight file qkv wrote (qkv's name and marker), else None.

    A run may remove only its own files and those of the checkpoint it replaces: a qkv weight file
    copied in from another run, or one of a version of qkv before run ids, is someone else's."""
    if not WEIGHTS_RE.fullmatch(path.name):
        return None
    try:
        meta = header_meta(path) if path.is_file() else {}
    except (ValueError, OSError):
        return None
    run = meta.get("run")
    return run if meta.get("format") == FORMAT and isinstance(run, str) else None


def is_debris(name: str) -> bool:
    """A temporary file of qkv's, left by a write that was interrupted."""
    m = TMP_RE.fullmatch(name)
    return m is not None and (m[1] in OWN_NAMES or bool(WEIGHTS_RE.fullmatch(m[1])))


def _marked(path: Path) -> bool:
    try:
        obj = json.loads(read_bytes(path, JSON_LIMIT, "JSON file"))
    except (OSError, ValueError, RecursionError):  # missing, not a regular file, too large, not JSON
        return False
    return isinstance(obj, dict) and obj.get("format") == FORMAT


def inspect(path) -> str:
    """What `path` holds: "new" (nothing, or an empty directory), "unfinished" (a qkv run that saved
    no checkpoint yet) or "checkpoint"; ValueError for a file, or a non-empty directory not qkv's."""
    d = Path(path)
    if not d.exists():
        return "new"
    if not d.is_dir():
        raise Refusal.of("errors.ckpt_is_file", path=d)
    if all(p.name == LOCK_NAME or is_debris(p.name) for p in d.iterdir()):
        return "new"
    if not (_marked(d / "config.json") or _marked(d / "state.json")):
        raise Refusal.of("errors.train_dir_foreign", path=d, format=f'"{FORMAT}"')
    return "checkpoint" if (d / "state.json").exists() else "unfinished"
