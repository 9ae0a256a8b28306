"""Byte tokens among the next-token candidates, shown as what they are.

A word tokenizer with a byte fallback (the bundled model's) and SentencePiece byte pieces (Llama's)
spell a character they hold no token for as its UTF-8 bytes, each a token shown ``<0xE6>``. Such a
token is no character: a lead byte (0xC2-0xF4) starts a character of 2, 3 or 4 bytes (most Chinese
characters take 3, so 0xE4-0xE9 start them), a continuation byte (0x80-0xBF) goes on with one, and a
byte below 0x80 is a whole ASCII character. `byte_notes` labels each candidate that is a byte and
writes one line on why such tokens are candidates at all.
"""

from __future__ import annotations

import re

from qkv.presentation.i18n import translator

_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def byte_value(shown: str) -> int | None:
    """The byte a token shown as ``<0xE6>`` stands for; None for any other token."""
    m = _BYTE.fullmatch(shown)
    return int(m.group(1), 16) if m else None


def byte_role(b: int) -> str:
    """What a byte is in UTF-8: "ascii" (a whole character), "cont" (continues one), "lead2",
    "lead3", "lead4" (starts a character of that many bytes) or "bad" (never in UTF-8)."""
    if b < 0x80:
        return "ascii"
    if b < 0xC0:
        return "cont"
    if 0xC2 <= b < 0xE0:
        return "lead2"
    if 0xE0 <= b < 0xF0:
        return "lead3"
    if 0xF0 <= b < 0xF5:
        return "lead4"
    return "bad"


def byte_notes(shown: list[str], lang: str) -> tuple[list[str], str | None]:
    """(each token as the candidate list shows it: a byte token with what it is, "<0xE6> (byte: starts
    a 3-byte character)"; the line that says why bytes are candidates, or None when none is)."""
    say = translator(lang, "segment")
    out, first = [], None  # first: the first byte token, the example the line names
    for tok in shown:
        b = byte_value(tok)
        first = first or (tok if b is not None else None)
        out.append(tok if b is None else say("byte_cell", tok=tok, role=say(f"role_{byte_role(b)}")))
    return out, say("bytes_why", tok=first) if first else None


__all__ = ["byte_notes", "byte_role", "byte_value"]
