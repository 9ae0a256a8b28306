"""Where the models that ship with qkv live: the GPT (trained by scripts/train_bundled.py) and the
translation model (scripts/train_bundled_translate.py), both on qkv's corpus."""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).resolve().parent.parent / "assets"
BUNDLED = ASSETS / "model"
BUNDLED_TRANSLATE = ASSETS / "translate"


def learner_tokenizer(text: str, spell_seed: int = 0):
    """The bundled GPT's tokenizer recipe for `text`: its words, no whitespace tokens, ASCII capitals
    read as lower case, and a character and UTF-8 byte fallback, so that whatever a learner types is
    read; wrapped in `Spelled` so that training spells a seeded few words as characters (and
    characters as bytes) and those tokens are learned too. scripts/train_bundled.py and `qkv demo` use it."""
    from .tokenizers import train_tokenizer
    from .tokenizers.spelling import Spelled

    return Spelled(
        train_tokenizer("word", text, segment="none", whitespace=False, fallback=True, fold_case=True), seed=spell_seed
    )


def default_ckpt() -> Path:
    """The bundled model's checkpoint directory; a one-line ValueError when it is missing."""
    if not (BUNDLED / "state.json").exists():
        raise ValueError(f"the bundled model is missing from {BUNDLED}; reinstall qkv or run scripts/train_bundled.py")
    return BUNDLED


def default_translate_ckpt() -> Path:
    """The bundled translation model's checkpoint directory (zh -> en); a one-line ValueError when it is missing."""
    if not (BUNDLED_TRANSLATE / "state.json").exists():
        raise ValueError(
            f"the bundled translation model is missing from {BUNDLED_TRANSLATE}; "
            "reinstall qkv or run scripts/train_bundled_translate.py"
        )
    return BUNDLED_TRANSLATE
