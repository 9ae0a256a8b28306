"""What the commands that read a model and a text share: the model (--ckpt, or the bundled one), and
the notes on stderr about the text as the tokenizer read it (cropped to n_ctx, pieces read below a word)."""

from __future__ import annotations

import sys

from qkv.presentation.i18n import t


def load_model(ckpt, device="cpu"):
    """(model, tokenizer) from --ckpt, or the bundled model when it is not given (qkv.load's None), its
    weights in --dtype's dtype (qkv runs too); on stderr a note when they are bfloat16 and will run on a
    CPU (`device`: where the command runs it) without native bfloat16 (say_slow_bf16)."""
    from qkv.core.train.checkpoint import load

    model, tokenizer = load(ckpt or None)
    say_slow_bf16(model, device)
    return model, tokenizer


def say_slow_bf16(model, device) -> None:
    """Say that bfloat16 is slower than float32 here: the model's weights are bfloat16, it runs on the
    CPU, and the CPU has neither AMX nor AVX-512 BF16 (qkv.core.machine.cpu.bf16_support)."""
    import torch

    from qkv.core.machine.cpu import bf16_support
    from qkv.presentation.i18n import get_lang

    p = next(model.parameters(), None)
    if p is None or p.dtype != torch.bfloat16 or torch.device(device).type != "cpu":
        return
    if bf16_support() == "none":
        print(t("bf16.slow_here", get_lang()), file=sys.stderr)


def say_cropped(what: str, n: int, n_ctx: int, lang: str) -> None:
    """Say that only the last n_ctx tokens of the prompt (or the text) were read."""
    print(t(f"cli.cropped_{what}", lang, n=n, n_ctx=n_ctx), file=sys.stderr)


def say_unread(tokenizer, text, lang) -> None:
    """Say on stderr which characters of `text` the vocabulary cannot spell (its ids leave them out), or,
    for a word tokenizer, which pieces it reads as single characters or UTF-8 bytes (the page's note)."""
    from qkv.core.text.tokenizers.base import shown_chars
    from qkv.core.text.tokenizers.unknown import unknown_pieces
    from qkv.presentation.unknown_words import unknown_notes

    find = getattr(tokenizer, "unspellable", None)
    missing = find(text) if find is not None and isinstance(text, str) else []
    if missing:
        note = t("tokenizer.unspellable_warning", lang or "en", n=len(missing), chars=shown_chars(missing))
        print(note, file=sys.stderr)
    elif isinstance(text, str):
        for line in unknown_notes(unknown_pieces(tokenizer, text), lang):
            print(line, file=sys.stderr)
