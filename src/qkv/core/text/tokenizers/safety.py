"""What a tokenizer.json may not make qkv do: checked once when it is read (`settle`), and on every
encode (`encode`).

A tokenizer.json is a program the `tokenizers` library runs on every text, and a 5 KB file can make
it panic (a Rust panic reaches Python as pyo3_runtime.PanicException, a BaseException that passes
every `except Exception`) or multiply the text it reads until memory runs out. qkv reads no file
it cannot bound:

    padding, truncation    qkv pads and cuts nothing through the tokenizer (batches are padded by the
                           model's caller, a text longer than n_ctx is refused): both are switched off
                           (a pad to 10^8 ids, a stride >= max_length that panics, do nothing)
    normalizers            each may make a text longer: a Replace by len(content) / len(pattern), a
                           Prepend by 1 + len(prepend), NFKC by up to 18 (U+FDFA is 18 characters), a
                           Precompiled map by its longest replacement. Their product (22 Replace a->aa
                           chained: 2^22) must stay <= MAX_GROWTH, and no inserted text may be longer
                           than MAX_INSERT characters (a 100 MB Prepend); a Replace pattern that can
                           match empty text panics, and is refused
    regexes                a Split or Replace regex that repeats a repetition ((a+)+) is refused:
                           Oniguruma backtracks over it exponentially (regex_risk.py)
    post-processor         the special tokens it adds must be ids of the vocabulary, at most
                           MAX_SPECIAL_IDS of them to a text

`encode` then runs the pipeline with a panic turned into a one-line Refusal, and checks what it gave:
at most `Bound.most_ids(text)` ids (the growth the load allowed, times 4 bytes a character), each an id
of the vocabulary (a Refusal naming the id and its token otherwise).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from qkv.core.io.refusal import Refusal
from qkv.core.text.tokenizers import rust_stderr
from qkv.core.text.tokenizers.regex_risk import scan
from qkv.core.text.tokenizers.rust_stderr import is_panic

MAX_GROWTH = 256  # how many times longer the normalizers may make a text (NFKC x Lowercase: 54)
MAX_INSERT = 64  # characters a Replace or Prepend may insert (real files: "▁", " ")
MAX_SPECIAL_IDS = 64  # ids a post-processor may add to one text ([CLS] [SEP], <s>: 1 or 2)
BYTES_PER_CHAR = 4  # a byte-level or byte-fallback vocabulary spells a character with at most 4 tokens
# how many characters one character may become, for the normalizers that insert nothing of the file's
FACTORS = {
    "NFC": 3,
    "NFD": 4,
    "NFKC": 18,
    "NFKD": 18,
    "Lowercase": 3,
    "BertNormalizer": 12,  # spaces around a CJK character (3), accents split off (4): never both on one
    "ByteLevel": 4,
    "Strip": 1,
    "StripAccents": 1,
    "Nmt": 1,
}


def panic_line(error: BaseException) -> str:
    """The panic's message, its first line, at most 200 characters."""
    text = str(error).strip()
    return (text.splitlines()[0] if text else type(error).__name__)[:200]


@dataclass(frozen=True)
class Bound:
    """How long an encode's output may be: its normalizers' growth (a product) and the ids its
    post-processor adds."""

    growth: float = 1.0
    specials: int = 0
    regex: bool = False  # whether a Split or Replace step runs a regex of the file's (what may still panic)

    def most_ids(self, text: str) -> int:
        """The most ids `text` may become: 4 tokens a character, times the growth, plus the specials."""
        return int(BYTES_PER_CHAR * self.growth * (len(text) + 1)) + self.specials + 8


def settle(hf) -> Bound:
    """Switch off `hf`'s padding and truncation and check its pipeline (the module docstring): a
    Refusal in one line naming what it may not do, or the Bound its encodes keep to."""
    hf.no_padding()
    hf.no_truncation()
    normalizer = _state(hf.normalizer)
    growth = _growth(normalizer)
    splits = [s for s in _steps(_state(hf.pre_tokenizer), "pretokenizers") if s.get("type") == "Split"]
    for step in splits:
        _check_pattern(step.get("pattern"), "Split", replace=False)
    replaces = [s for s in _steps(normalizer, "normalizers") if s.get("type") == "Replace"]
    regex = any("Regex" in (s.get("pattern") or {}) for s in splits + replaces)
    return Bound(growth, _post_specials(_state(hf.post_processor), hf.get_vocab_size()), regex)


def shielded(call, *args, quiet: bool = False, **kw):
    """call(*args, **kw), a panic of the Rust library it calls turned into a one-line Refusal; `quiet`:
    with the panic's own message kept off the terminal (rust_stderr.py)."""
    try:
        if quiet:
            with rust_stderr.quiet():
                return call(*args, **kw)
        return call(*args, **kw)
    except BaseException as e:
        if not is_panic(e):
            raise
        detail = panic_line(e)
    raise Refusal.of("tokenizer_safety.panicked", detail=detail)


def encode(hf, text: str, bound: Bound, add_special_tokens: bool = True) -> list[int]:
    """The ids `hf` gives `text` (its special tokens added or not), checked: no panic, at most
    bound.most_ids(text) ids, each below hf.get_vocab_size(); a one-line Refusal otherwise."""
    ids = shielded(hf.encode, text, add_special_tokens=add_special_tokens, quiet=bound.regex).ids
    most = bound.most_ids(text)
    if len(ids) > most:
        raise Refusal.of("tokenizer_safety.too_many_ids", n=len(ids), chars=len(text), most=most)
    n_vocab = hf.get_vocab_size()
    for i in ids:
        if not 0 <= i < n_vocab:
            token = hf.id_to_token(i) if 0 <= i < 2**32 else None
            raise Refusal.of("tokenizer_safety.id_beyond", id=i, token="?" if token is None else repr(token), n=n_vocab)
    return ids


# ------------------------------------------------------------------ the pipeline's parts, as JSON


def _state(part) -> dict | None:
    return json.loads(part.__getstate__()) if part is not None else None


def _steps(part: dict | None, key: str) -> list[dict]:
    """The steps of a pipeline part, a Sequence's (under `key`) flattened."""
    if not isinstance(part, dict):
        return []
    if part.get("type") == "Sequence" and isinstance(part.get(key), list):
        return [s for step in part[key] for s in _steps(step, key)]
    return [part]


def _growth(normalizer: dict | None) -> float:
    """The product of the normalizers' growth factors (a Refusal for a step that panics or grows too much)."""
    product, named = 1.0, []
    for step in _steps(normalizer, "normalizers"):
        kind = step.get("type")
        factor = _factor(step)
        if factor > 1:
            named.append(f"{kind} x{factor:g}")
        product *= factor
        if product > MAX_GROWTH:
            raise Refusal.of("tokenizer_safety.growth", factor=f"{product:,.0f}", most=MAX_GROWTH, steps=named[-4:])
    return product


def _factor(step: dict) -> float:
    """How many characters one character may become in this normalizer."""
    kind = step.get("type")
    if kind == "Replace":
        content = step.get("content") or ""
        _check_insert("Replace", content)
        fewest = _check_pattern(step.get("pattern"), "Replace", replace=True)
        return max(1.0, len(content) / fewest)
    if kind == "Prepend":
        prepend = step.get("prepend") or ""
        _check_insert("Prepend", prepend)
        return 1.0 + len(prepend)  # once per piece of text between added tokens: at most once a character
    if kind == "Precompiled":
        return float(_longest_replacement(step.get("precompiled_charsmap")))
    if kind in FACTORS:
        return float(FACTORS[kind])
    raise Refusal.of("tokenizer_safety.unknown_step", kind=repr(kind))


def _check_insert(kind: str, content: str) -> None:
    if len(content) > MAX_INSERT:
        raise Refusal.of("tokenizer_safety.insert_too_long", step=kind, n=len(content), most=MAX_INSERT)


def _check_pattern(pattern, step: str, replace: bool) -> int:
    """The fewest characters a Split's or Replace's pattern matches (at least 1), after refusing a pattern
    that can match empty text (for Replace: a panic) or that repeats a repetition."""
    pattern = pattern if isinstance(pattern, dict) else {}
    if "String" in pattern:
        text = str(pattern["String"])
        if not text and replace:
            raise Refusal.of("tokenizer_safety.empty_pattern", step=step, pattern=repr(text))
        return max(1, len(text))
    regex = str(pattern.get("Regex", ""))
    try:
        shape = scan(regex)
    except RecursionError:  # groups nested hundreds deep: nothing a real tokenizer writes
        raise Refusal.of("tokenizer_safety.deep_regex", step=step, pattern=repr(regex[:80])) from None
    if shape.nested:
        raise Refusal.of("tokenizer_safety.nested_regex", step=step, pattern=repr(regex[:80]))
    if shape.min_len == 0 and replace:
        raise Refusal.of("tokenizer_safety.empty_pattern", step=step, pattern=repr(regex[:80]))
    return max(1, shape.min_len)


def _longest_replacement(charsmap) -> int:
    """The longest text a Precompiled (SentencePiece) normalizer writes for one match: its map is a trie
    (a little-endian u32 size, then that many bytes) followed by the replacements, each ended by a NUL."""
    try:
        blob = base64.b64decode(charsmap) if isinstance(charsmap, str) else bytes(charsmap or b"")
    except (ValueError, TypeError):
        return MAX_GROWTH + 1  # tokenizers read it; qkv cannot: as if it grew without bound
    size = int.from_bytes(blob[:4], "little")
    pool = blob[4 + size :]
    return max([1] + [len(s.decode("utf-8", errors="replace")) for s in pool.split(b"\0")])


def _post_specials(post: dict | None, n_vocab: int) -> int:
    """How many ids the post-processor adds to one text, after checking each of its special tokens' ids."""
    added = 0
    for step in _steps(post, "processors"):
        kind = step.get("type")
        if kind == "TemplateProcessing":
            specials = step.get("special_tokens") or {}
            for name, special in specials.items():
                _check_special(name, special.get("ids") or [], n_vocab)
            single = step.get("single") or []
            for item in single:
                name = (item.get("SpecialToken") or {}).get("id") if isinstance(item, dict) else None
                added += len((specials.get(name) or {}).get("ids") or []) if name is not None else 0
        elif kind in ("BertProcessing", "RobertaProcessing"):
            for key in ("cls", "sep"):
                token, id = (step.get(key) or ["?", 0])[:2]
                _check_special(token, [id], n_vocab)
            added += 2
    if added > MAX_SPECIAL_IDS:
        raise Refusal.of("tokenizer_safety.too_many_specials", n=added, most=MAX_SPECIAL_IDS)
    return added


def _check_special(token: str, ids: list, n_vocab: int) -> None:
    for i in ids:
        if not isinstance(i, int) or not 0 <= i < n_vocab:
            raise Refusal.of("tokenizer_safety.special_beyond", token=repr(token), id=i, n=n_vocab)


__all__ = ["MAX_GROWTH", "MAX_INSERT", "Bound", "is_panic", "panic_line", "settle", "shielded", "encode"]
