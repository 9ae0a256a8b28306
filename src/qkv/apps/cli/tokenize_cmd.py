"""`qkv tokenize`: a text, or every .txt under a folder, written once as token ids on disk (shards), for
`qkv train --data` (qkv.core.text.prepare; the format: docs/data.md)."""

from __future__ import annotations

import time
from pathlib import Path

from qkv.core.io.refusal import Refusal
from qkv.presentation.i18n import t


def tokenizer_of(ref: str, vocab_size: int | None):
    """A kind for a new tokenizer (char, word, bpe), or the tokenizer of a qkv run or a pretrained model."""
    from qkv.core.hub.pretrained import is_pretrained_ref
    from qkv.core.text.tokenizers import KINDS

    if ref in KINDS:
        return ref
    if not is_pretrained_ref(ref) and not Path(ref).is_dir():
        raise Refusal.of("shards.tokenizer_kind", kind=repr(ref))
    if vocab_size is not None:
        raise Refusal.of("shards.ref_vocab_size", ref=ref)
    from qkv.core.train.checkpoint import load

    return load(ref)[1]


def tokenize(args) -> None:
    from qkv.core.text.prepare import SHARD_TOKENS, tokenize_corpus

    began = time.perf_counter()
    index = tokenize_corpus(
        args.text,
        args.out,
        tokenizer_of(args.tokenizer, args.vocab_size),
        args.vocab_size,
        SHARD_TOKENS if args.shard_tokens is None else args.shard_tokens,
        progress=not args.quiet,
    )
    seconds = time.perf_counter() - began
    read = sum(s["bytes"] for s in index["sources"])
    tok = index["tokenizer"]
    print(
        t(
            "shards.wrote",
            args.lang,
            tokens=f"{index['tokens']:,}",
            dtype=index["dtype"],
            shards=len(index["shards"]),
            kind=tok["kind"],
            vocab=f"{tok['vocab_size']:,}",
            out=args.out,
            seconds=f"{seconds:.1f}",
            rate=f"{read / 1e6 / max(seconds, 1e-9):.1f}",
        )  # fmt: skip
    )
