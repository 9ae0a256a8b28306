"""What the checkpoint-directory tests share (their fixtures `runs` and `base` are in conftest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from qkv.apps.cli import main

TINY = [
    "n_layers=1",
    "d_model=32",
    "n_heads=2",
    "n_ctx=16",
    "steps=20",
    "batch_size=4",
    "eval_interval=10",
    "eval_steps=2",
]
QKV = [sys.executable, "-m", "qkv"]
FILES = [
    "config.json",
    "tokenizer.json",
    "state.json",
    "model-0000010.safetensors",
    "optimizer-0000010.safetensors",
    "log.jsonl",
]


def sets(pairs) -> list[str]:
    return [a for pair in pairs for a in ("--set", pair)]


def snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def one_error(capsys, argv) -> str:
    """Run a qkv command that must fail; return its one error line."""
    assert main(argv) != 0
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qkv: error: ") and "Traceback" not in err + out, err
    return lines[0]


def lines(path: Path) -> int:
    """How many lines a file holds (0 when it is missing)."""
    return path.read_bytes().count(b"\n") if path.exists() else 0
