"""Where the models that ship with qkv live: the GPT (trained by scripts/train_bundled.py) and the
translation model (scripts/train_bundled_translate.py), both on qkv's corpus."""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).resolve().parent.parent / "assets"
BUNDLED = ASSETS / "model"
BUNDLED_TRANSLATE = ASSETS / "translate"


def default_ckpt() -> Path:
    """The bundled model's checkpoint directory; a one-line ValueError when it is missing."""
    if not (BUNDLED / "state.json").exists():
        raise ValueError(f"the bundled model is missing from {BUNDLED}; reinstall qkv or run scripts/train_bundled.py")
    return BUNDLED


def default_translate_ckpt() -> Path:
    """The bundled translation model's checkpoint directory (zh -> en); a one-line ValueError when it is missing."""
    if not (BUNDLED_TRANSLATE / "state.json").exists():
        raise ValueError(f"the bundled translation model is missing from {BUNDLED_TRANSLATE}; "
                         "reinstall qkv or run scripts/train_bundled_translate.py")
    return BUNDLED_TRANSLATE
