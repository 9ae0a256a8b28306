"""Where the model that ships with qkv lives (trained by scripts/train_bundled.py on qkv's corpus)."""

from __future__ import annotations

from pathlib import Path

BUNDLED = Path(__file__).resolve().parent.parent / "assets" / "model"


def default_ckpt() -> Path:
    """The bundled model's checkpoint directory; a one-line ValueError when it is missing."""
    if not (BUNDLED / "state.json").exists():
        raise ValueError(f"the bundled model is missing from {BUNDLED}; reinstall qkv or run scripts/train_bundled.py")
    return BUNDLED
