"""What the lessons on a real pretrained encoder (real-apple, real-heads, real-hull) share.

They read all-MiniLM-L6-v2 (the `real` extra), or the BERT-family encoder --ckpt names; run() in
qkv.lessons.run loads it for every lesson whose NEEDS_MODEL is "minilm".
"""

from __future__ import annotations

MINILM_NAME = "all-MiniLM-L6-v2"


def model_name(model) -> str:
    """How the texts name the model: all-MiniLM-L6-v2 for the `real` extra, else what it was loaded
    from ("" when that is unknown: a model built in memory)."""
    source = model.loaded_from or {}
    name = str(source.get("name", ""))
    return MINILM_NAME if name == "minilm" else name
