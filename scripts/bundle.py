"""What the two bundling scripts share: copy a finished run into the package, without its optimizer state
(a bundled model is for reading and explaining, not for resuming)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


def bundle(run: Path, out: Path) -> float:
    """Replace `out` with the checkpoint in `run` minus the optimizer; return its size in MiB."""
    state = json.loads((run / "state.json").read_text(encoding="utf-8"))
    state.pop("optimizer", None)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in ("config.json", "tokenizer.json", "log.jsonl", state["model"]):
        shutil.copy(run / name, out / name)
    (out / "state.json").write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    return sum(p.stat().st_size for p in out.iterdir()) / 2**20
