"""Reading a corpus larger than memory: its files, and each file's text in chunks cut where a tokenizer
cuts anyway, so that encoding the chunks one by one gives the ids of encoding the whole file.

    for path in text_files("corpus/"):            # a file, or every *.txt under a folder, sorted
        for chunk in chunks(path):                 # str, about CHUNK_BYTES of UTF-8 each
            ids.extend(tokenizer.encode(chunk))

Where a chunk is cut: just after a line break that has a character other than whitespace on each side
("…word\\n|Word…"). qkv's tokenizers never join two tokens across such a break: a char tokenizer cuts
everywhere, a word tokenizer ends a whitespace run (and jieba a run of Chinese) there, and byte-level
BPE's pre-tokenizer (GPT-2's pattern) makes "\\n" a piece of its own between two pieces that are not
whitespace. So chunks(path) encoded one by one give exactly the ids of read_text(path) encoded whole.
A text with no such break in MAX_CARRY characters (one enormous line) is cut anyway, at MAX_CARRY,
where the ids may differ from the whole text's around the cut. A pretrained tokenizer that adds
something at the start of every text it encodes (a BOS token, SentencePiece's "▁" prefix) adds it at
the start of every chunk.

The first chunk of a file loses a byte-order mark, as read_text's text does. Bytes that are not UTF-8
are refused in one line, with the byte offset and the line, as read_text refuses them.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import Path

from qkv.core.io.files import BOM, check_regular
from qkv.core.io.refusal import Refusal

CHUNK_BYTES = 1 << 20  # what one read takes from the file (1 MiB)
MAX_CARRY = 16 << 20  # characters kept waiting for a place to cut, at most


def text_files(path) -> list[Path]:
    """`path` itself if it is a file; every *.txt under it (at any depth), sorted, if it is a folder.
    A missing path, a folder without a .txt file, or something that is not a regular file is refused."""
    p = Path(path)
    if not p.exists():
        raise Refusal.of("errors.text_file_missing", path=p)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*.txt") if f.is_file())
        if not files:
            raise Refusal.of("shards.no_txt", path=p)
    else:
        files = [p]
    for f in files:
        check_regular(f, None, "text file")
    return files


def cut_point(text: str) -> int:
    """The index just after the last line break in `text` with a non-whitespace character on each side
    (0 if there is none): text[:i] and text[i:] encode, one after the other, as text does."""
    end = len(text) - 1  # the character after the break must be in `text`
    i = text.rfind("\n", 0, end)
    while i > 0:
        if not text[i - 1].isspace() and not text[i + 1].isspace():
            return i + 1
        i = text.rfind("\n", 0, i)
    return 0


def _decoded(path: Path, block: bytes, decoder, done: int, lines: int, final: bool) -> str:
    """`block` (the bytes after the first `done` of the file, which held `lines` line breaks) as text;
    a byte that is not UTF-8 is refused as read_text refuses it."""
    pending = decoder.getstate()[0]  # the start of a character cut by the previous block
    try:
        return decoder.decode(block, final)
    except UnicodeDecodeError as e:
        seen = pending + block  # what e.start counts in
        at, line = done - len(pending) + e.start, lines + seen[: e.start].count(b"\n") + 1
        with open(path, "rb") as f:  # the 4 bytes from there, as read_text shows them (the block may end first)
            f.seek(at)
            shown = f.read(4)
        raise Refusal.of("errors.text_file_not_utf8", path=path, byte=at, line=line, bytes=repr(shown)) from None


def chunks(path, chunk_bytes: int | None = None, on_block=None) -> Iterator[str]:
    """The text of the UTF-8 file `path`, in pieces cut by cut_point (see the module's docstring);
    `on_block(data)` is given each block of bytes as it is read (a progress bar, a sha256)."""
    path, chunk_bytes = Path(path), chunk_bytes or CHUNK_BYTES  # (read when called: tests make it small)
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    carry, done, lines, first = "", 0, 0, True
    with open(path, "rb") as f:
        while True:
            block = f.read(chunk_bytes)
            text = _decoded(path, block, decoder, done, lines, final=not block)
            done, lines = done + len(block), lines + block.count(b"\n")
            if on_block is not None and block:
                on_block(block)
            if first and text:
                text, first = text.removeprefix(BOM), False
            carry += text
            if not block:
                break
            i = cut_point(carry) or (len(carry) if len(carry) >= MAX_CARRY else 0)
            if i:
                yield carry[:i]
                carry = carry[i:]
    if carry:
        yield carry
