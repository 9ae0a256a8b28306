"""The tokenizer a GGUF file describes in its metadata (`tokenizer.ggml.*`), rebuilt as a `tokenizers` object.

    model "gpt2"   byte-level BPE: tokens (each in GPT-2's byte alphabet), merges ("Ġ t": the pair
                   merged, best first), the text split before merging by the regular expression
                   `tokenizer.ggml.pre` names (GPT-2's own when qkv does not know the name)
    model "llama"  SentencePiece's pieces ("▁the", "<0x0A>" for a byte) with a score each; a word is
                   merged pair by pair, the pair whose merged piece scores highest first (the merges
                   are those pairs, ordered by that score), a character the pieces lack spelled in bytes

Tokens of type 3 (control: "<|im_end|>", "<s>") and the BOS, EOS, unknown and padding tokens are
matched whole in a text, as special tokens; type 4 (user-defined: "<think>") whole too, as plain ones.
`tokenizer.ggml.add_bos_token` (SentencePiece files: yes unless they say no) puts BOS in front of every
encoded text. SentencePiece's space before the text differs by architecture, as transformers reads it:
"▁" put before a text that does not begin with one (Llama's Metaspace), before every text (phi3), or
never (gemma2, gemma3, whose tokens of spaces only are written with spaces, respelled "▁", and whose
merges follow the tokens' order in the file rather than their scores).
This is what transformers builds for the same file (its GGUF tokenizer), so the ids agree.
"""

from __future__ import annotations

from typing import Any

from qkv.core.io.refusal import Refusal
from qkv.core.text.tokenizers.bpe import _byte_to_char

CONTROL, USER_DEFINED = 3, 4  # llama.cpp's token types

# regular expressions that split a text into words before BPE, by tokenizer.ggml.pre
_LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPLITS = {
    **dict.fromkeys(("llama3", "llama-v3", "llama-bpe", "smaug-bpe", "dbrx"), _LLAMA3),
    **dict.fromkeys(("qwen2", "deepseek-r1-qwen", "megrez"), _QWEN2),
}


def _key(header, name: str, kind, default=None):
    """Metadata `tokenizer.<name>`, of Python type `kind`, or `default` when absent."""
    value = header.get(f"tokenizer.{name}", default)
    if value is not default and not (isinstance(value, kind) and not (kind is int and isinstance(value, bool))):
        raise Refusal.of("gguf.key_type", path=header.path, key=f"tokenizer.{name}")
    return value


def _strings(header, name: str) -> list[str] | None:
    value = _key(header, name, list)
    if value is not None and not all(isinstance(v, str) for v in value):
        raise Refusal.of("gguf.key_type", path=header.path, key=f"tokenizer.{name}")
    return value


def read_tokenizer(header):
    """qkv's tokenizer for the file: a BPETokenizer ("gpt2") or a PieceTokenizer ("llama"), with the
    attributes chat_template (str or None), chat_tokens (the special tokens a template names: bos_token, ...),
    bos_id, eos_id and eot_id (int or None)."""
    from qkv.core.text.tokenizers import BPETokenizer
    from qkv.core.text.tokenizers.pieces import PieceTokenizer

    kind = _key(header, "ggml.model", str)
    tokens = _strings(header, "ggml.tokens")
    if kind not in ("gpt2", "llama") or not tokens:
        raise Refusal.of("gguf.tokenizer_kind", path=header.path, got=repr(kind), supported=["gpt2", "llama"])
    types = _key(header, "ggml.token_type", list) or []
    spelled = _byte_level(tokens) if kind == "gpt2" else _pieces(tokens, header.get("general.architecture"))
    hf = _bpe(header, spelled, kind)
    ids = {name: _id(header, name, len(tokens)) for name in ("bos", "eos", "unknown", "padding", "eot")}
    whole = [t if t == s else None for t, s in zip(tokens, spelled)]  # a token respelled is not matched whole
    _special(hf, whole, types, [ids[n] for n in ("bos", "eos", "unknown", "padding")])
    bos_first = _key(header, "ggml.add_bos_token", bool, kind == "llama")
    if bos_first and ids["bos"] is not None:
        from tokenizers import processors

        bos = spelled[ids["bos"]]
        hf.post_processor = processors.TemplateProcessing(
            single=f"{bos}:0 $A:0", pair=f"{bos}:0 $A:0 {bos}:1 $B:1", special_tokens=[(bos, ids["bos"])]
        )
    tok: Any  # with the attributes below
    try:
        tok = BPETokenizer(hf) if kind == "gpt2" else PieceTokenizer(hf)
    except ValueError as e:
        raise Refusal.of("gguf.tokenizer_bad", path=header.path, error=str(e)) from None
    tok.chat_template = _key(header, "chat_template", str)
    named = (("bos_token", "bos"), ("eos_token", "eos"), ("unk_token", "unknown"), ("pad_token", "padding"))
    tok.chat_tokens = {key: tokens[i] for key, n in named if (i := ids[n]) is not None}  # a template's bos_token, ...
    tok.bos_id, tok.eos_id, tok.eot_id = ids["bos"], ids["eos"], ids["eot"]
    return tok


def _id(header, name: str, n: int) -> int | None:
    value = _key(header, f"ggml.{name}_token_id", int)
    if value is not None and not 0 <= value < n:
        raise Refusal.of("gguf.token_id", path=header.path, key=f"tokenizer.ggml.{name}_token_id", id=value, n=n)
    return value


def _byte_level(tokens: list[str]) -> list[str]:
    """Each token in GPT-2's byte alphabet: one written in plain text instead is spelled byte by byte."""
    spell = _byte_to_char()
    alphabet = set(spell.values())
    return [t if set(t) <= alphabet else "".join(spell[b] for b in t.encode("utf-8")) for t in tokens]


def _pieces(tokens: list[str], arch) -> list[str]:
    """SentencePiece's pieces, a Gemma token of two or more spaces spelled with "▁" as its merges are."""
    if arch not in _NO_PREFIX:
        return tokens
    return ["▁" * len(t) if " " in t and not t.strip() else t for t in tokens]


_NO_PREFIX = ("gemma2", "gemma3")  # architectures whose SentencePiece puts no "▁" before a text


def _spaces(hf, arch) -> None:
    """How a SentencePiece text's spaces become "▁" (and back), by architecture (module docstring)."""
    from tokenizers import decoders, normalizers, pre_tokenizers

    steps = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    if arch in _NO_PREFIX:
        hf.normalizer = normalizers.Replace(" ", "▁")
        hf.decoder = decoders.Sequence(steps)
        return
    if arch == "phi3":
        hf.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    else:
        hf.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    hf.decoder = decoders.Sequence([*steps, decoders.Strip(content=" ", left=1)])


def _bpe(header, tokens: list[str], kind: str):
    """The `tokenizers` object: its BPE model, the split before it and the decoder, per kind."""
    from tokenizers import Regex, decoders, models, pre_tokenizers
    from tokenizers import Tokenizer as HFTokenizer

    vocab = {t: i for i, t in enumerate(tokens)}
    written = _strings(header, "ggml.merges")
    if written is not None:
        pairs = [m.split(" ") for m in written]
        if any(len(p) != 2 for p in pairs):
            raise Refusal.of("gguf.merges", path=header.path)
        merges = [(p[0], p[1]) for p in pairs]
    elif kind == "llama":
        scores = _key(header, "ggml.scores", list) or []
        if len(scores) != len(tokens):
            raise Refusal.of("gguf.scores", path=header.path, n=len(scores), tokens=len(tokens))
        by_order = header.get("general.architecture") in _NO_PREFIX  # Gemma: the file's order, best first
        merges = merges_from_scores(
            vocab, {t: -i for i, t in enumerate(tokens)} if by_order else dict(zip(tokens, scores))
        )
    else:
        raise Refusal.of("gguf.merges", path=header.path)
    try:
        if kind == "gpt2":
            hf = HFTokenizer(models.BPE(vocab, merges, continuing_subword_prefix="", end_of_word_suffix=""))
            split = SPLITS.get(_key(header, "ggml.pre", str))
            byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=split is None)
            parts = [pre_tokenizers.Split(Regex(split), behavior="isolated")] if split else []
            hf.pre_tokenizer = pre_tokenizers.Sequence([*parts, byte_level]) if parts else byte_level
            hf.decoder = decoders.ByteLevel()
        else:
            hf = HFTokenizer(models.BPE(vocab, merges, fuse_unk=True, byte_fallback=True))
            _spaces(hf, header.get("general.architecture"))
    except Exception as e:  # the Rust side's own exception: a merge of tokens the vocabulary lacks, ...
        raise Refusal.of(
            "gguf.tokenizer_bad", path=header.path, error=str(e).splitlines()[0] if str(e) else ""
        ) from None
    return hf


def merges_from_scores(vocab: dict[str, int], scores: dict[str, float]) -> list[tuple[str, str]]:
    """SentencePiece's merges, from its pieces' scores: every way to cut a piece into two pieces of the
    vocabulary is a merge; the merge making the higher-scoring piece comes first (ties: the longer left
    part, then the longer right part, then the order of the pieces, then of the parts' ids)."""
    found = []
    for piece, score in scores.items():
        cuts = [(piece[:k], piece[k:]) for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab]
        cuts.sort(key=lambda lr: (vocab[lr[0]], vocab[lr[1]]))
        found += [(left, right, score) for left, right in cuts]
    found.sort(key=lambda m: (-m[2], -len(m[0]), -len(m[1])))  # stable: ties keep the order above
    return [(left, right) for left, right, _ in found]


def _special(hf, tokens: list, types: list, named: list) -> None:
    """Control tokens and the named ones (BOS, EOS, ...) matched whole as special tokens; user-defined ones
    matched whole as plain tokens (`tokens`: None for one that is not matched whole)."""
    from tokenizers import AddedToken

    special = [t for t, k in zip(tokens, types) if k == CONTROL and t is not None]
    special += [tokens[i] for i in named if i is not None and tokens[i] is not None]
    if special:
        hf.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in dict.fromkeys(special)])
    plain = [t for t, k in zip(tokens, types) if k == USER_DEFINED and t is not None]
    if plain:
        hf.add_tokens([AddedToken(t, normalized=False, special=False) for t in plain])
