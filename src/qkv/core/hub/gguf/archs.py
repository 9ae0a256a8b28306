"""How each GGUF architecture becomes a Hugging Face layout that a hub adapter already reads.

A GGUF file names its family in `general.architecture` and keeps its config as metadata under that
name ("llama.embedding_length"), its tensors under llama.cpp's names ("blk.3.attn_q.weight"). An
`Arch` says, for one such architecture, which config.json the metadata amounts to (then the family's
adapter checks every field, as for a directory) and which Hugging Face tensor each GGUF tensor is;
the weight map, the shape checks and the model are the adapter's and hub/read.py's, unchanged.

    llama    (Llama, Mistral, SmolLM: llama.cpp converts them all to "llama")  q, k rows reordered
    qwen2    biases on q, k and v                                              as stored
    qwen3    an RMSNorm over each head's q and k                               as stored
    phi3     fused qkv_proj and gate_up_proj                                   as stored
    gemma2   (model_type gemma2) and gemma3 (gemma3_text)                      norms stored 1 + w
    gpt2     Conv1D matrices                                                   stored transposed
    gptneox  (gpt_neox) query_key_value                                        q, k, v regrouped
    olmo2    q and k norms over the whole projection                           as stored

The tables (names, config keys) are in families.py; what the converter did to a tensor and how it is
undone (layouts.py) is each Arch's `layout`. A new family is an entry in ARCHS, with the adapter of
its Hugging Face model_type.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from qkv.core.hub.gguf import families as f
from qkv.core.hub.gguf import layouts
from qkv.core.hub.gguf.families import LLAMA_CONFIG, LLAMA_NAMES
from qkv.core.hub.gguf.layouts import Layout
from qkv.core.io.refusal import Refusal
from qkv.core.spec.config import ModelConfig


@dataclass(frozen=True)
class Arch:
    """One GGUF architecture: the Hugging Face model_type its adapter reads, its config keys, its tensor
    names, what llama.cpp's converter did to its tensors (`layout`: (Hugging Face name, config) ->
    layouts.Layout) and anything more its config needs (`extra`: (metadata, tensor names) -> fields)."""

    model_type: str
    config: dict = field(default_factory=lambda: dict(LLAMA_CONFIG))
    names: dict = field(default_factory=lambda: dict(LLAMA_NAMES))
    layout: Callable[[str, ModelConfig], Layout] | None = None
    extra: Callable[[dict, set], dict] | None = None


def _llama_extra(metadata: dict, names: set) -> dict:
    """Llama's biases, which its config states and its GGUF file only shows by the tensors it has."""
    return {"attention_bias": "blk.0.attn_q.bias" in names, "mlp_bias": "blk.0.ffn_up.bias" in names}


ARCHS = {
    "llama": Arch("llama", layout=layouts.llama, extra=_llama_extra),
    "qwen2": Arch("qwen2"),
    "qwen3": Arch("qwen3"),
    "phi3": Arch("phi3", f.PHI3_CONFIG, f.PHI3_NAMES, extra=f.phi3_extra),
    "gemma2": Arch("gemma2", f.GEMMA_CONFIG, f.GEMMA_NAMES, layouts.gemma, f.gemma_extra("gemma2")),
    "gemma3": Arch("gemma3_text", f.GEMMA_CONFIG, f.GEMMA_NAMES, layouts.gemma, f.gemma_extra("gemma3")),
    "gpt2": Arch("gpt2", f.GPT2_CONFIG, f.GPT2_NAMES, layouts.gpt2),
    "gptneox": Arch("gpt_neox", f.NEOX_CONFIG, f.NEOX_NAMES, layouts.gptneox, f.neox_extra),
    "olmo2": Arch("olmo2", names=f.OLMO2_NAMES),
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
    if any(t.startswith("rope_factors_") for t in header.tensors):  # LongRoPE (Phi-3-128k, Phi-3.5): not read
        raise Refusal.of("gguf.rope_factors", path=header.path)
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
        factor = md.get(f"{name}.rope.scaling.factor")
        hc["rope_scaling"] = {"rope_type": scaling, **({"factor": factor} if factor is not None else {})}
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
