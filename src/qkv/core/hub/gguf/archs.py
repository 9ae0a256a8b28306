"""How each GGUF architecture becomes a Hugging Face layout that a hub adapter already reads.

A GGUF file names its family in `general.architecture` and keeps its config as metadata under that
name ("llama.embedding_length"), its tensors under llama.cpp's names ("blk.3.attn_q.weight"). An
`Arch` says, for one such architecture, which config.json the metadata amounts to (then the family's
adapter checks every field, as for a directory) and which Hugging Face tensor each GGUF tensor is;
the weight map, the shape checks and the model are the adapter's and hub/read.py's, unchanged.

    llama    (Llama, Mistral, SmolLM: llama.cpp converts them all to "llama")  q, k rows reordered
    qwen2    biases on q, k and v                                              as stored
    qwen3    an RMSNorm over each head's q and k                               as stored

llama.cpp's converter reorders the rows of W_Q and W_K of a "llama" file (`permute_qk`): within
each head, Hugging Face's rotate_half layout keeps the first halves of the rotated pairs in rows
0..d/2-1 and the second halves in d/2..d-1; llama.cpp interleaves them (row 2j the first half of
pair j, row 2j+1 its second half). tensors.py puts them back. A new family (gemma2, phi3, ...) is an
entry in ARCHS, with the adapter of its Hugging Face model_type.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from qkv.core.io.refusal import Refusal

# llama.cpp's tensor names -> Hugging Face's (LlamaForCausalLM's and its kin), {i} the layer
LLAMA_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
    "blk.{i}.attn_norm.weight": "model.layers.{i}.input_layernorm.weight",
    "blk.{i}.ffn_norm.weight": "model.layers.{i}.post_attention_layernorm.weight",
    "blk.{i}.ffn_gate.{p}": "model.layers.{i}.mlp.gate_proj.{p}",
    "blk.{i}.ffn_up.{p}": "model.layers.{i}.mlp.up_proj.{p}",
    "blk.{i}.ffn_down.{p}": "model.layers.{i}.mlp.down_proj.{p}",
    "blk.{i}.attn_q.{p}": "model.layers.{i}.self_attn.q_proj.{p}",
    "blk.{i}.attn_k.{p}": "model.layers.{i}.self_attn.k_proj.{p}",
    "blk.{i}.attn_v.{p}": "model.layers.{i}.self_attn.v_proj.{p}",
    "blk.{i}.attn_output.{p}": "model.layers.{i}.self_attn.o_proj.{p}",
    "blk.{i}.attn_q_norm.weight": "model.layers.{i}.self_attn.q_norm.weight",
    "blk.{i}.attn_k_norm.weight": "model.layers.{i}.self_attn.k_norm.weight",
}

# config.json's field <- the metadata key after "{arch}." (fields with no key keep the adapter's default)
LLAMA_CONFIG = {
    "max_position_embeddings": "context_length",
    "hidden_size": "embedding_length",
    "intermediate_size": "feed_forward_length",
    "num_hidden_layers": "block_count",
    "num_attention_heads": "attention.head_count",
    "num_key_value_heads": "attention.head_count_kv",
    "head_dim": "attention.key_length",
    "rms_norm_eps": "attention.layer_norm_rms_epsilon",
    "rope_theta": "rope.freq_base",
}


@dataclass(frozen=True)
class Arch:
    """One GGUF architecture: the Hugging Face model_type its adapter reads, its config keys, its tensor
    names, whether W_Q's and W_K's rows are in llama.cpp's order, and anything more its config needs
    (`extra`: (metadata, tensor names) -> config.json fields)."""

    model_type: str
    config: dict = field(default_factory=lambda: dict(LLAMA_CONFIG))
    names: dict = field(default_factory=lambda: dict(LLAMA_NAMES))
    permute_qk: bool = False
    extra: Callable[[dict, set], dict] | None = None


def _llama_extra(metadata: dict, names: set) -> dict:
    """Llama's biases, which its config states and its GGUF file only shows by the tensors it has."""
    return {"attention_bias": "blk.0.attn_q.bias" in names, "mlp_bias": "blk.0.ffn_up.bias" in names}


ARCHS = {
    "llama": Arch("llama", permute_qk=True, extra=_llama_extra),
    "qwen2": Arch("qwen2"),
    "qwen3": Arch("qwen3"),
}


def arch_of(header) -> tuple[str, Arch]:
    """(general.architecture, its Arch), or a refusal naming it and those qkv reads."""
    name = header.get("general.architecture")
    if name not in ARCHS:
        raise Refusal.of("gguf.architecture", path=header.path, got=repr(name), supported=list(ARCHS))
    return name, ARCHS[name]


def hf_config(header) -> dict:
    """The config.json the metadata amounts to: every field the Arch maps, tie_word_embeddings when the
    file has no output.weight (llama.cpp stores the unembedding only when it is not W_E), vocab_size
    from the tokens, RoPE scaling as the file names it (the adapter refuses a kind qkv does not build)."""
    name, arch = arch_of(header)
    md = header.metadata
    hc: dict = {"model_type": arch.model_type}
    for ours, key in arch.config.items():
        if f"{name}.{key}" in md:
            hc[ours] = md[f"{name}.{key}"]
    value = md.get(f"{name}.attention.value_length")
    if value is not None and value != hc.get("head_dim", value):
        raise Refusal.of("gguf.value_length", path=header.path, key=hc.get("head_dim"), value=value)
    rotary = md.get(f"{name}.rope.dimension_count")
    d_head = hc.get("head_dim") or _ratio(hc.get("hidden_size"), hc.get("num_attention_heads"))
    if isinstance(rotary, int) and d_head and rotary != d_head:  # RoPE on part of each head: refused by the adapter
        hc["partial_rotary_factor"] = rotary / d_head
    tokens = md.get("tokenizer.ggml.tokens")
    hc["vocab_size"] = md.get(f"{name}.vocab_size", len(tokens) if isinstance(tokens, list) else None)
    hc["tie_word_embeddings"] = "output.weight" not in header.tensors
    scaling = md.get(f"{name}.rope.scaling.type")
    if scaling not in (None, "none"):
        hc["rope_scaling"] = {"rope_type": scaling}
    if arch.extra is not None:
        hc.update(arch.extra(md, set(header.tensors)))
    return hc


def _ratio(width, heads):
    ok = all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (width, heads))
    return width // heads if ok else None


def _pattern(template: str) -> re.Pattern:
    return re.compile(re.escape(template).replace(r"\{i\}", r"(?P<i>\d+)").replace(r"\{p\}", r"(?P<p>weight|bias)"))


def hf_names(header) -> dict[str, str]:
    """Hugging Face name -> GGUF name of every tensor the Arch knows; a tensor it does not know keeps
    its GGUF name (and is refused by name as a tensor qkv does not use)."""
    _, arch = arch_of(header)
    patterns = [(_pattern(gguf), hf) for gguf, hf in arch.names.items()]
    out = {}
    for name in header.tensors:
        for pattern, hf in patterns:
            m = pattern.fullmatch(name)
            if m:
                out[hf.format(**m.groupdict())] = name
                break
        else:
            out[name] = name
    return out


def gguf_name(header, hf: str) -> str:
    """The GGUF name of Hugging Face tensor `hf` (as the Arch names it; `hf` itself if it has none)."""
    _, arch = arch_of(header)
    for gguf, template in arch.names.items():
        m = _pattern(template).fullmatch(hf)
        if m:
            return gguf.format(**m.groupdict())
    return hf
