"""Name what a word tokenizer reads below the level of its words, and the known words nearest to it.

    unknown_pieces(tok, "我吃了苹果，味道很好")
    -> [{"text": "好", "pieces": ["好"], "how": "chars", "nearest": ["看好", "好吃"]}]

A text is cut as `WordTokenizer.encode` cuts it: into pieces (words, punctuation marks), and a
piece the vocabulary lacks into its most probable known words (bestpath.py). A character is named
when it is read one by one or as bytes, and only then:

- "bytes": a character no token holds, read as its UTF-8 bytes;
- "chars": a character read as one of the fallback's single-character tokens (a character the
  training text never held as a word of its own), or a character of a word a reader sees (jieba's
  dictionary cut, when jieba is installed; SPELLED_MIN characters or more) that the model reads a
  character at a time: 红楼梦 read 红 · 楼 · 梦, each a word of the vocabulary but not the word a
  reader sees.

Named characters that follow one another, are read the same way and lie in the same reader's word
make one entry (巅峰之作: "巅" bytes, "峰" chars, "之" chars). Without jieba the reader's words are
unknown, so only fallback characters and bytes are named. In a piece without Chinese characters (a
word of a script that puts spaces between words: "apples", "café") the whole piece is the unknown
text, and "pieces" lists everything it was read as ("apple", "s"). A tokenizer without a fallback
cannot read such a run at all ("how": "none"; its `encode` raises UnknownTokenError naming the same
runs). "nearest": see `nearest.py`.
"""

from __future__ import annotations

from functools import cache

from qkv.core.text.tokenizers.base import HFBacked
from qkv.core.text.tokenizers.nearest import nearest_words
from qkv.core.text.tokenizers.words import _CJK_RE, WordTokenizer

# a reader's word of at least this many characters, read one character per token, is named whole
# (红楼梦 -> 红 · 楼 · 梦); a two-character one is not: jieba's dictionary holds many such words a
# reader also reads as two (这个, 很多, 一天), and they would bury the note
SPELLED_MIN = 3


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
        runs = _named_runs(tok, piece) if _CJK_RE.search(piece) else _spaced_runs(tok, piece)
        for how, run in runs:
            run_text = "".join(run)
            if how == "bytes":  # the tokens it became: its UTF-8 bytes (<0xE5> <0x96> <0x94>), not the characters
                run = [tok.display(i) for i in tok.encode(run_text)]
            out.append({"text": run_text, "pieces": run, "how": how, "nearest": nearest_words(words, run_text)})
    return out


def part_kinds(tok: WordTokenizer, piece: str) -> list[tuple[str, str]]:
    """How `tok` reads `piece`: (part, kind) in order, kind "word" (a word of the vocabulary), "char"
    (a fallback single-character token) or "bytes" (a character no token holds)."""
    i = tok.ids.get(piece)
    parts = [(piece, i)] if i is not None else tok.parts(piece)
    return [(p, "bytes" if i is None else "word" if i < tok.n_words else "char") for p, i in parts]


def _named_runs(tok: WordTokenizer, piece: str) -> list[tuple[str, list[str]]]:
    """(how, parts) of a piece with Chinese: the named characters (module docstring), consecutive ones
    read the same way inside one reader's word together."""
    kinds = part_kinds(tok, piece)
    if not _reader_matters(kinds):  # nothing to name, whatever jieba would cut (and its dictionary not loaded)
        return []
    seen = reader_words(piece)
    reader = seen or [piece]
    owner = [n for n, w in enumerate(reader) for _ in w]  # character -> its reader's word
    singles = [0] * len(reader)  # how many of each reader's word's characters are read one per token
    at = 0
    for part, _ in kinds:
        singles[owner[at]] += len(part) == 1
        at += len(part)
    spelled = [len(w) >= SPELLED_MIN and singles[n] == len(w) and seen is not None for n, w in enumerate(reader)]
    runs: list[tuple[str, list[str]]] = []
    at, last = 0, None  # last: (how, reader's word) of the run being grown, None after an unnamed part
    for part, kind in kinds:
        how = _how(tok, kind, spelled[owner[at]])
        if how is None:
            last = None
        elif (how, owner[at]) == last:
            runs[-1][1].append(part)
        else:
            runs.append((how, [part]))
            last = (how, owner[at])
        at += len(part)
    return runs


def _reader_matters(kinds: list[tuple[str, str]]) -> bool:
    """Whether a piece has anything to name: a part read below a word, or SPELLED_MIN one-character
    words in a row (the only way a reader's word can be read a character at a time)."""
    run = 0
    for part, kind in kinds:
        if kind != "word":
            return True
        run = run + 1 if len(part) == 1 else 0
        if run >= SPELLED_MIN:
            return True
    return False


def _how(tok: WordTokenizer, kind: str, spelled: bool) -> str | None:
    """How a part is named: "bytes", "chars", "none" (no fallback) or None (read as a word)."""
    if kind == "bytes":
        return "bytes" if tok.fallback else "none"
    return "chars" if kind == "char" or spelled else None


def _spaced_runs(tok: WordTokenizer, piece: str) -> list[tuple[str, list[str]]]:
    """(how, parts) of a piece without Chinese: the whole piece, when it is not a word of the vocabulary."""
    kinds = part_kinds(tok, piece)
    if all(k == "word" for _, k in kinds):
        return []
    how = "none" if not tok.fallback else "bytes" if any(k == "bytes" for _, k in kinds) else "chars"
    return [(how, [p for p, _ in kinds])]


def reader_words(piece: str) -> list[str] | None:
    """`piece` cut into the words a reader sees: jieba's dictionary cut (no guessing of new words),
    None when jieba is not installed."""
    jieba = _jieba()
    words = None if jieba is None else [w for w in jieba.lcut(piece, HMM=False) if w]
    return words if words and "".join(words) == piece else None


@cache
def _jieba():
    try:
        import jieba
    except ImportError:
        return None
    jieba.setLogLevel(60)  # silence "Building prefix dict..."
    return jieba


__all__ = ["part_kinds", "reader_words", "unknown_pieces"]
