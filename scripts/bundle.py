"""What the two bundling scripts share: copy a finished run into the package, without its optimizer state
(a bundled model is for reading and explaining, not for resuming)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HSK_CREDIT = (
    "The HSK sentences come from the PyPI package hsk-sentences-audio (code MIT; sentences, translations "
    "and glosses CC-BY-SA-4.0, by its authors), read through its loader and never copied into qkv. Only "
    "their training part (qkv.core.text.corpus.hsk.split('train')) was trained on; every figure on everyday "
    "Chinese is measured on the held-out part."
)


def bundle(run: Path, out: Path, card: str) -> float:
    """Replace `out` with the checkpoint in `run` minus the optimizer, and its card (README.md: what it
    is, what it was trained on, whose data that is); return its size in MiB."""
    state = json.loads((run / "state.json").read_text(encoding="utf-8"))
    state.pop("optimizer", None)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in ("config.json", "tokenizer.json", "log.jsonl", state["model"]):
        shutil.copy(run / name, out / name)
    (out / "state.json").write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    (out / "README.md").write_text(card.strip() + "\n", encoding="utf-8")
    return sum(p.stat().st_size for p in out.iterdir()) / 2**20
