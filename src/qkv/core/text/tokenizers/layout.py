"""Which of qkv's tokenizers reads a Hugging Face tokenizer.json, decided from its layout.

A tokenizer.json is a pipeline: normalizer (NFC, Replace(" ", "▁"), Prepend("▁")), pre-tokenizer
(ByteLevel, Split with a regex, Digits, Metaspace, in a Sequence), model (BPE, Unigram, WordPiece,
WordLevel), post-processor (BOS in front), decoder. qkv runs that pipeline as it is (the `tokenizers`
object encodes), so its ids are transformers' ids; what qkv adds is each token's bytes, read off
the vocabulary, and that needs to know how the vocabulary writes a byte and a space:

    byte-level     ByteLevel in the pre-tokenizer or the decoder: GPT-2's 256 characters ("Ġ" a space)
                   -> BPETokenizer (GPT-2, Llama 3, Qwen2, SmolLM2)
    pieces         ▁ for a space (Metaspace, or a normalizer that writes ▁), <0xE5> for a byte
                   -> PieceTokenizer (Llama 2, Mistral, Gemma; BPE or Unigram)
    wordpiece      "##" for a continuation -> WordPieceTokenizer (BERT)

Anything else (WordLevel; a BPE whose pre-tokenizer throws spaces away) is refused in one line
naming what it lacks: qkv never shows tokens whose bytes it would have to guess.
"""

from __future__ import annotations

import json

from qkv.core.io.refusal import Refusal
from qkv.core.text.tokenizers.base import Tokenizer
from qkv.core.text.tokenizers.bpe import BPETokenizer
from qkv.core.text.tokenizers.pieces import PieceTokenizer, byte_fallback
from qkv.core.text.tokenizers.wordpiece import WordPieceTokenizer

SPACE = "▁"


def _types(part) -> list[dict]:
    """The steps of a pipeline part (a Sequence's steps, flattened), as dicts."""
    if not isinstance(part, dict):
        return []
    steps = part.get("pretokenizers") or part.get("normalizers") or part.get("decoders") or part.get("processors")
    if part.get("type") == "Sequence" and isinstance(steps, list):
        return [s for step in steps for s in _types(step)]
    return [part]


def pipeline(hf) -> dict:
    """The parts of tokenizer.json that say its layout, read off the `tokenizers` object without writing
    out its vocabulary (a 256k-token vocabulary is tens of megabytes of JSON)."""
    spec = {}
    for key in ("normalizer", "pre_tokenizer", "decoder"):
        part = getattr(hf, key)
        spec[key] = json.loads(part.__getstate__()) if part is not None else None
    spec["model"] = {"type": type(hf.model).__name__, "byte_fallback": byte_fallback(hf)}
    return spec


def layout_of(spec: dict) -> str:
    """ "bpe" (byte-level), "pieces" or "wordpiece": how the vocabulary of tokenizer.json `spec` writes its
    bytes and spaces; a Refusal naming what it lacks when it is none of them."""
    model = spec.get("model")
    model = model if isinstance(model, dict) else {}
    kind = model.get("type") or "?"
    if kind == "WordPiece":
        return "wordpiece"
    if kind not in ("BPE", "Unigram"):
        raise Refusal.of("tokenizer.model_unsupported", model=kind)
    steps = [s for key in ("normalizer", "pre_tokenizer", "decoder") for s in _types(spec.get(key))]
    types = {s.get("type") for s in steps}
    if "ByteLevel" in types:
        return "bpe"
    writes_space = any(SPACE in json.dumps(s, ensure_ascii=False) for s in steps)
    if "Metaspace" in types or writes_space or model.get("byte_fallback"):
        return "pieces"
    raise Refusal.of("tokenizer.layout_unknown", model=kind)


def from_hf(hf) -> Tokenizer:
    """The qkv tokenizer for a `tokenizers` object (read from tokenizer.json or built from a GGUF file's
    vocabulary): BPETokenizer, PieceTokenizer or WordPieceTokenizer, chosen by `layout_of`; a Refusal
    (one line) when its layout is none of them or a token's bytes cannot be read."""
    layout = layout_of(pipeline(hf))
    reader = {"bpe": BPETokenizer, "pieces": PieceTokenizer, "wordpiece": WordPieceTokenizer}[layout]
    try:
        return reader(hf)
    except Refusal:  # what it may not do (safety.py), said as it is
        raise
    except ValueError as e:  # a token that is not written as the layout writes them
        raise Refusal.of("tokenizer.token_unreadable", layout=layout, error=str(e)) from None


__all__ = ["pipeline", "layout_of", "from_hf"]
