"""What a GGUF file holds, from its header alone (no tensor is read): what `qkv info FILE.gguf` says.

summary(read_header(path)) -> {"architecture": "llama", "name": ..., "parameters": 134515008,
    "file_bytes": ..., "types": {"Q4_1": 210, "F32": 61, "Q8_0": 1}, "tokenizer": "gpt2",
    "vocab": 49152, "chat_template": True, "config": {"context_length": 8192, ...}}
"""

from __future__ import annotations

import math
from collections import Counter

from qkv.core.hub.gguf.header import Header

CONFIG_KEYS = (
    "context_length",
    "embedding_length",
    "block_count",
    "feed_forward_length",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.key_length",
    "rope.freq_base",
    "attention.layer_norm_rms_epsilon",
)


def summary(header: Header) -> dict:
    """The file's architecture, name, numbers stored, size, tensor types (type -> how many tensors),
    tokenizer kind and vocabulary, whether it has a chat template, and its `{arch}.*` sizes."""
    arch = header.get("general.architecture")
    tokens = header.get("tokenizer.ggml.tokens")
    types = Counter(t.type_name for t in header.tensors.values())
    return {
        "architecture": arch,
        "name": header.get("general.name"),
        "parameters": sum(math.prod(t.dims) for t in header.tensors.values()),
        "file_bytes": header.file_size,
        "types": dict(types.most_common()),
        "tokenizer": header.get("tokenizer.ggml.model"),
        "vocab": len(tokens) if isinstance(tokens, list) else None,
        "chat_template": isinstance(header.get("tokenizer.chat_template"), str),
        "config": {k: header.get(f"{arch}.{k}") for k in CONFIG_KEYS if f"{arch}.{k}" in header.metadata},
    }
