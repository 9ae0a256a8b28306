"""Tokenizing a corpus once, into shards (`qkv tokenize`): a text larger than memory, streamed.

    tokenize_corpus("corpus/", "data/corpus", tokenizer="bpe", vocab_size=4096)

Nothing holds the whole corpus: the files are read in chunks (qkv.core.text.stream) and each chunk's
ids go to the shards (qkv.core.text.shards) before the next is read. A new tokenizer is trained in a
first pass over the same chunks, from what it keeps of them, never the text itself:

    char   the set of the corpus's characters                    (= train_tokenizer("char", whole text))
    word   each piece's count, at most MAX_WORD_TYPES pieces     (= train_tokenizer("word", whole text))
    bpe    `tokenizers`' trainer, fed the chunks one by one: it counts pre-tokenized words
           (= train_tokenizer("bpe", whole text))

so for one file the ids are those `qkv train --text FILE --tokenizer KIND` trains on. A folder's files
are tokenized one by one, and their ids follow each other in the shards (no separator between files).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from qkv.core.io.files import atomic_write, json_bytes
from qkv.core.io.refusal import Refusal, phrase, said
from qkv.core.text import shards
from qkv.core.text.stream import chunks, text_files
from qkv.core.text.tokenizers import KINDS, CharTokenizer, Tokenizer, UnknownTokenError, WordTokenizer
from qkv.core.text.tokenizers.bpe import MAX_BPE_VOCAB, BPETokenizer
from qkv.core.text.tokenizers.words import _CJK_RE

SHARD_TOKENS = 1 << 27  # ids per shard: 256 MiB of uint16, 512 MiB of uint32
MAX_WORD_TYPES = 4_000_000  # distinct pieces a new word tokenizer may count (a Counter of ~0.5 GB)


def _bar(total: int, key: str, progress: bool):
    from tqdm import tqdm

    desc = said(phrase(key))
    return tqdm(total=total, unit="B", unit_scale=True, desc=desc, file=sys.stderr, disable=not progress, leave=False)


def _texts(files: list[Path], bar) -> Iterator[str]:
    """Every chunk of every file, the bar moved by the bytes read."""
    for f in files:
        yield from chunks(f, on_block=lambda b: bar.update(len(b)))


def check_vocab_size(kind: str, vocab_size: int | None) -> None:
    """A vocab_size a new tokenizer of `kind` can take (train_tokenizer's bounds), else a one-line refusal."""
    if kind not in KINDS:
        raise Refusal.of("shards.tokenizer_kind", kind=repr(kind))
    if vocab_size is None:
        return
    if kind == "char":
        raise Refusal.of("shards.char_vocab_size")
    low, high = (256, MAX_BPE_VOCAB) if kind == "bpe" else (1, None)
    if vocab_size < low or (high is not None and vocab_size > high):
        raise Refusal.of("shards.vocab_size_range", kind=kind, low=low, high=high or "∞", got=vocab_size)


def _word_tokenizer(files: list[Path], vocab_size: int | None, total: int, progress: bool) -> WordTokenizer:
    """A word tokenizer counted over the corpus: without jieba, and again with it if the corpus holds
    Chinese and jieba is installed (what train_tokenizer's segment="auto" decides on the whole text)."""
    import importlib.util

    for use_jieba in (False, True):
        counts: Counter = Counter()
        cjk = False
        with _bar(total, "shards.bar_vocab", progress) as bar:
            for text in _texts(files, bar):
                counts.update(WordTokenizer.count(text, use_jieba))
                cjk = cjk or bool(_CJK_RE.search(text))
                if len(counts) > MAX_WORD_TYPES:
                    raise Refusal.of("shards.too_many_words", most=f"{MAX_WORD_TYPES:,}")
        if use_jieba or not cjk or importlib.util.find_spec("jieba") is None:
            break
    if not counts:
        raise Refusal.of("shards.empty", path=files[0] if len(files) == 1 else files[0].parent)
    return WordTokenizer.from_counts(counts, vocab_size, use_jieba)


def new_tokenizer(kind: str, files: list[Path], vocab_size: int | None, progress: bool = True) -> Tokenizer:
    """A new tokenizer of `kind` trained on the files, streamed (see the module's docstring)."""
    check_vocab_size(kind, vocab_size)
    total = sum(f.stat().st_size for f in files)
    if kind == "word":
        return _word_tokenizer(files, vocab_size, total, progress)
    with _bar(total, "shards.bar_vocab", progress) as bar:
        if kind == "bpe":
            return BPETokenizer.train_from(_texts(files, bar), vocab_size)
        chars: set[str] = set()
        for text in _texts(files, bar):
            chars.update(text)
    return CharTokenizer(sorted(chars))


def _check_out(out: Path) -> None:
    """`out` must be free: nothing there, or an empty folder."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise Refusal.of("shards.out_taken", path=out)


def _encode(tokenizer: Tokenizer, text: str):
    """The ids of `text` (a list, or an array where the tokenizer has a faster way: CharTokenizer.encode_array)."""
    try:
        if isinstance(tokenizer, CharTokenizer):
            return tokenizer.encode_array(text)
        return tokenizer.encode(text)
    except UnknownTokenError as e:  # a word list cut by vocab_size: a word tokenizer has no unknown token
        raise Refusal.of("train.vocab_too_small", n=tokenizer.vocab_size, unknown=e) from None


def _write_shards(files: list[Path], tokenizer: Tokenizer, folder: Path, shard_tokens: int, progress: bool):
    """Encode every file chunk by chunk into shards in `folder`; (shards, sources) as the index lists them."""
    writer = shards.ShardWriter(folder, shards.id_bytes(tokenizer.vocab_size), shard_tokens)
    sources, done, words = [], 0, False
    with _bar(sum(f.stat().st_size for f in files), "shards.bar_encode", progress) as bar:
        for f in files:
            digest, n, size = hashlib.sha256(), 0, f.stat().st_size
            for text in chunks(f, on_block=lambda block, d=digest: (d.update(block), bar.update(len(block)))):
                words = words or not text.isspace()
                ids = _encode(tokenizer, text)
                writer.write(ids)
                n += len(ids)
            sources.append(
                {"path": str(f.resolve()), "bytes": size, "sha256": digest.hexdigest(), "first": done, "tokens": n}
            )
            done += n
    if not words:  # nothing but whitespace, as read_text refuses it
        raise Refusal.of("shards.empty", path=files[0] if len(files) == 1 else files[0].parent)
    return writer.finish(), sources


def tokenize_corpus(
    source,
    out,
    tokenizer: str | Tokenizer = "char",
    vocab_size: int | None = None,
    shard_tokens: int = SHARD_TOKENS,
    progress: bool = True,
) -> dict:
    """Tokenize the file or folder `source` (every *.txt under it, sorted) into the data folder `out`
    (qkv.core.text.shards); returns its index. `tokenizer` is a kind (char, word, bpe: a new one trained
    on the corpus) or a tokenizer. `out` is written whole or not at all (a folder beside it, renamed)."""
    out = Path(out)
    files = text_files(source)
    _check_out(out)
    if shard_tokens < 1:
        raise Refusal.of("shards.shard_tokens", got=shard_tokens)
    tok = tokenizer if isinstance(tokenizer, Tokenizer) else new_tokenizer(tokenizer, files, vocab_size, progress)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        written, sources = _write_shards(files, tok, tmp, shard_tokens, progress)
        total = sum(s["tokens"] for s in written)
        tok_bytes = json_bytes(tok.to_dict(), indent=None)
        atomic_write(tmp / shards.TOKENIZER, tok_bytes)
        tok_sha = hashlib.sha256(tok_bytes).hexdigest()
        index = {
            "format": shards.FORMAT,
            "version": shards.VERSION,
            "dtype": "uint16" if shards.id_bytes(tok.vocab_size) == 2 else "uint32",
            "tokens": total,
            "tokenizer": {"file": shards.TOKENIZER, "kind": tok.kind, "vocab_size": tok.vocab_size, "sha256": tok_sha},
            "val": shards.VAL_RULE,
            "shards": written,
            "sources": sources,
            "sha256": shards.identity(tok_sha, [s["sha256"] for s in written]),
        }
        atomic_write(tmp / shards.INDEX, json_bytes(index))
        if out.exists():
            out.rmdir()  # empty (checked above)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return index
