"""Name what a word tokenizer reads below the level of its words, and the known words nearest to it.

    unknown_pieces(tok, "我吃了苹果，味道很好")
    -> [{"text": "好", "pieces": ["好"], "how": "chars", "nearest": ["看好", "好吃"]}]

A text is cut as `WordTokenizer.encode` cuts it: into pieces (words, punctuation marks), and a
piece the vocabulary lacks into its longest known words, left to right. What is left over is
unknown: a maximal run of characters that were read as single-character tokens ("how": "chars")
or, for characters not even the fallback holds, as UTF-8 bytes ("bytes"; a run that holds both is
"bytes"). In a piece without Chinese characters (a word of a script that puts spaces between
words: "apples", "café") the whole piece is the unknown text, and "pieces" lists everything it
was read as ("apple", "s"). A tokenizer without a fallback cannot read such a run at all ("how":
"none"; its `encode` raises UnknownTokenError naming the same runs). "nearest": see `nearest.py`.
"""

from __future__ import annotations

from qkv.core.text.tokenizers.base import HFBacked
from qkv.core.text.tokenizers.nearest import nearest_words
from qkv.core.text.tokenizers.words import WordTokenizer


def unknown_pieces(tok, text: str) -> list[dict]:
    """The runs of `text` that `tok` reads below the level of its words, in text order (see the
    module docstring); [] when every piece is a word, or when `tok` is not a word tokenizer (char and
    BPE tokenizers have no words to miss). For a pretrained vocabulary (HFBacked), the characters it
    cannot spell (`unspellable`), one entry each, "how": "unspelled": its ids leave them out."""
    if isinstance(tok, HFBacked) and isinstance(text, str):
        return [{"text": c, "pieces": [], "how": "unspelled", "nearest": []} for c in tok.unspellable(text)]
    if not isinstance(tok, WordTokenizer) or not isinstance(text, str):
        return []
    out = []
    words = tok.tokens[: tok.n_words]
    for piece in tok.split(text):
        for run in tok.unknown_runs(piece):
            run_text = "".join(part for part, _ in run)
            how = "none" if not tok.fallback else "bytes" if any(i is None for _, i in run) else "chars"
            out.append(
                {
                    "text": run_text,
                    "pieces": [part for part, _ in run],
                    "how": how,
                    "nearest": nearest_words(words, run_text),
                }
            )
    return out


__all__ = ["unknown_pieces"]
