"""What the model knows: its tokenizer's vocabulary, with how often each token occurs in the training text.

    doc = vocab(tokenizer, text=corpus.default_text(), query="苹", match="prefix")   # kind "vocab"
    text, where = training_text(checkpoint_dir)   # the text the model was trained on, when qkv finds it

A token's count is how many times it occurs in tokenizer.encode(text), the training text as the
saved tokenizer reads it. The training run may have read it a little differently (the bundled model
was trained with some words spelled as characters or bytes, so that those tokens learn something:
qkv.core.text.tokenizers.spelling); those spellings are not counted. When the training text is not
known (a model trained on a string, a pretrained model, a file that has moved or changed) every
count is null and the document says why.

Each token has a kind: "word" (a word of the training text), "char" (a single character kept for
the fallback, or any token of a character tokenizer), "byte" (one byte, for what nothing else
covers), "piece" (part of a word: a BPE merge or a WordPiece piece) or "special" ([CLS], [SEP]...).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from qkv.core.io.document import header
from qkv.core.io.files import TEXT_LIMIT, read_bytes
from qkv.core.io.refusal import Refusal
from qkv.core.text import corpus

KINDS = ("word", "char", "byte", "piece", "special")
MATCHES = ("prefix", "substring")
MAX_LIMIT = 1000

_COUNTS: dict[tuple, list[int]] = {}  # (id(tokenizer), sha256 of the text) -> count per id


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _known_texts():
    """The texts qkv makes itself that a checkpoint may have trained on: the built-in corpus, and the
    bundled GPT's (the corpus with the HSK sentences, when hsk-sentences-audio is installed)."""
    yield corpus.default_text(), "qkv corpus"
    try:
        from qkv.core.hub.bundled import training_text as bundled_text

        yield bundled_text(), "qkv corpus + HSK"
    except ValueError:  # the HSK sentences are not installed
        return


def training_text(ckpt_dir) -> tuple[str | None, str]:
    """(the text a qkv checkpoint was trained on, where it was found), or (None, why not).

    config.json records the text's sha256 (data.sha256): qkv's built-in corpus (corpus.default_text),
    the bundled GPT's text (bundled.training_text) or the file it names (data.path) is the training
    text when its sha256 is that one."""
    from qkv.core.train.checkpoint import read_config

    if ckpt_dir is None or not Path(ckpt_dir).is_dir():
        return None, "the model was not loaded from a qkv checkpoint directory: its training text is unknown"
    try:
        data = read_config(Path(ckpt_dir)).get("data")
    except ValueError:
        return None, "the model's directory has no qkv config.json: its training text is unknown"
    sha = data.get("sha256") if isinstance(data, dict) else None
    if not isinstance(sha, str):
        return None, "the checkpoint does not record its training text"
    for text, where in _known_texts():
        if _sha256(text) == sha:
            return text, where
    path = data.get("path")
    if data.get("kind") == "file" and isinstance(path, str) and Path(path).is_file():
        try:  # the recorded path may have become anything since: a regular file of bounded size only
            text = read_bytes(path, TEXT_LIMIT, "training text").decode("utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            text = None
        if text is not None and _sha256(text) == sha:
            return text, path
        return None, f"{path} has changed since training (its sha256 differs): counts unknown"
    return None, "the training text was not saved with the model (only its sha256): counts unknown"


def token_kind(tokenizer, i: int) -> str:
    """One of KINDS for token id i."""
    if i in (getattr(tokenizer, "special", None) or ()):
        return "special"
    own = getattr(tokenizer, "token_kind", None)  # a word tokenizer with a fallback says which of its parts
    if own is not None:
        return own(i)
    kind = tokenizer.kind
    if kind == "char":
        return "char"
    if kind == "word":
        return "word"
    data = tokenizer.token_bytes(i)
    if len(data) == 1:  # BPE's 256 single bytes: an ASCII character, or a byte of a longer character
        return "char" if data[0] < 0x80 else "byte"
    return "piece"


def _typed(tokenizer, i: int, kind: str) -> str | None:
    """What to type for token i (appended to a text), or None for a byte or special token."""
    if kind in ("byte", "special"):
        return None
    try:
        s = tokenizer.token_bytes(i).decode("utf-8")
    except (UnicodeDecodeError, ValueError):
        return None
    return s if s.strip() else None


def counts(tokenizer, text: str) -> list[int]:
    """How often each token id occurs in tokenizer.encode(text) (cached per tokenizer and text)."""
    key = (id(tokenizer), _sha256(text))
    found = _COUNTS.get(key)  # one read: another request may be refilling the cache meanwhile
    if found is None:
        seen = Counter(tokenizer.encode(text))
        found = [seen.get(i, 0) for i in range(tokenizer.vocab_size)]
        _COUNTS.clear()  # one tokenizer per server: keep one entry
        _COUNTS[key] = found
    return found


def _matching(tokenizer, q: str, match: str, kind: str | None) -> tuple[list[tuple[int, str, str]], Counter]:
    """(id, shown form, kind) of every token that matches the folded query `q` and `kind`, by id; and
    how many tokens of each kind the vocabulary holds."""
    rows = []
    by_kind = Counter()
    for i in range(tokenizer.vocab_size):
        shown = tokenizer.display(i)
        k = token_kind(tokenizer, i)
        by_kind[k] += 1
        if kind is not None and k != kind:
            continue
        s = shown.casefold()
        if q and not (s.startswith(q) if match == "prefix" else q in s):
            continue
        rows.append((i, shown, k))
    return rows, by_kind


def vocab(
    tokenizer,
    text: str | None = None,
    where: str = "",
    query: str = "",
    match: str = "prefix",
    kind: str | None = None,
    limit: int = 200,
    offset: int = 0,
) -> dict:
    """The "vocab" document: the tokens whose shown form starts with (match="prefix") or contains
    ("substring") `query` (case-insensitive), of `kind` when given, most frequent first (by id when
    the counts are unknown), `limit` of them from `offset`. `text`: the training text (None: unknown,
    then `where` says why); `where`: where it came from."""
    if match not in MATCHES:
        raise Refusal.of("errors.one_of", name="match", choices=list(MATCHES), got=repr(match))
    if kind is not None and kind not in KINDS:
        raise Refusal.of("errors.one_of", name="kind", choices=list(KINDS), got=repr(kind))
    if not 1 <= limit <= MAX_LIMIT or offset < 0:
        raise Refusal.of("errors.vocab_range", max=MAX_LIMIT, limit=limit, offset=offset)
    n = counts(tokenizer, text) if text is not None else None
    q = query.casefold()
    q = "␣" * (len(q) - len(q.lstrip(" "))) + q.lstrip(" ")  # a token's leading spaces are shown ␣ (" mary": "␣mary")
    rows, by_kind = _matching(tokenizer, q, match, kind)
    if n is not None:
        rows.sort(key=lambda r: (-n[r[0]], r[0]))
    page = rows[offset : offset + limit]
    return {
        **header("vocab"),
        "size": tokenizer.vocab_size,
        "tokenizer": tokenizer.kind,
        "kinds": {k: by_kind[k] for k in KINDS if by_kind[k]},
        "counted": n is not None,
        "counted_from": where,
        "total_count": sum(n) if n is not None else None,
        "query": query,
        "match": match,
        "filter": kind,
        "matches": len(rows),
        "offset": offset,
        "tokens": [
            {
                "id": i,
                "token": shown,
                "kind": k,
                "count": n[i] if n is not None else None,
                "text": _typed(tokenizer, i, k),
            }
            for i, shown, k in page
        ],
    }
