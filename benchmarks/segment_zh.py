"""How the bundled model cuts Chinese typed without spaces, against a reader's cut (issue 32).

    python benchmarks/segment_zh.py

Of the words a reader cuts that the model holds as one token, the share it reads as that one token
(qkv.analysis.segmentation.agreement): on the 151 sentences of tests/data/segment_zh.txt against
jieba, and on the HSK held-out sentences against jieba and against the package's own words (the
way the training text was split). Each beside the old cut, longest known word first.
"""

from __future__ import annotations

from pathlib import Path

from qkv.analysis.segmentation import agreement
from qkv.core.hub.bundled import BUNDLED
from qkv.core.text.corpus import hsk
from qkv.core.text.tokenizers import load_tokenizer

SENTENCES = Path(__file__).resolve().parents[1] / "tests" / "data" / "segment_zh.txt"


def longest_first(tok):
    """`tok.parts` as it was before issue 32: the longest known string first, left to right."""

    def parts(piece: str) -> list[tuple[str, int | None]]:
        out, at = [], 0
        while at < len(piece):
            n = next((n for n in range(min(tok._longest, len(piece) - at), 0, -1) if piece[at : at + n] in tok.ids), 0)
            part = piece[at : at + max(n, 1)]
            out.append((part, tok.ids.get(part)))
            at += len(part)
        return out

    return parts


def main() -> None:
    lines = SENTENCES.read_text(encoding="utf-8").splitlines()
    mine = [line for line in lines if line.strip() and not line.startswith("#")]
    held = {s.chinese: list(s.words) for s in hsk.split("heldout")}
    sets = [
        ("segment_zh.txt vs jieba", mine, None),
        ("HSK held-out vs jieba", list(held), None),
        ("HSK held-out vs its own words", list(held), held.__getitem__),
    ]
    for cut_name in ("most probable", "longest first"):
        tok = load_tokenizer(BUNDLED / "tokenizer.json")
        if cut_name == "longest first":
            tok.parts = longest_first(tok)  # type: ignore[method-assign]
        for name, texts, reader in sets:
            r = agreement(tok, texts, reader)
            print(
                f"{cut_name:13}  {name:30} kept {r['kept']:5} of {r['words']:5} = {100 * r['share']:.2f}%"
                f"   Chinese words only: {r['han_kept']:5} of {r['han_words']:5} = {100 * r['han_share']:.2f}%"
            )


if __name__ == "__main__":
    main()
