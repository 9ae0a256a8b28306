"""The words of a typed text that a word tokenizer does not know, said as notes (one line each): what
each became (single characters, or UTF-8 bytes) and the known words nearest to it. The pieces come
from core.text.tokenizers.unknown.unknown_pieces; the page says the same in its own strings."""

from __future__ import annotations

from qkv.presentation.i18n import lang_of, t


def unknown_notes(pieces: list[dict], lang: str | None = None) -> list[str]:
    """One line per piece read below the level of a word (not the characters a pretrained vocabulary
    cannot spell at all: those have their own warning)."""
    lang = lang_of(lang)
    sep = "、" if lang == "zh" else ", "
    lines = []
    for u in pieces:
        if u["how"] not in ("chars", "bytes"):
            continue
        fields = {
            "text": u["text"],
            "pieces": " · ".join(u["pieces"]),
            "how": t(f"segment.unknown_{u['how']}", lang),
            "nearest": sep.join(u["nearest"]),
        }
        lines.append(t("segment.unknown_line" if u["nearest"] else "segment.unknown_far", lang, **fields))
    return lines
