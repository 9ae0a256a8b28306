"""llama.cpp's tensor names and metadata keys of each GGUF architecture, as the Hugging Face names and
config.json fields of the family's adapter (archs.py puts them in ARCHS).

    llama    (Llama, Mistral, SmolLM) and qwen2, qwen3: LLAMA_NAMES, LLAMA_CONFIG

    phi3     attn_qkv (q's, k's, v's rows) and ffn_up (the gate's rows, then up's) fused, as Phi3 has them;
             LongRoPE's factors (rope_factors_long / _short tensors) are not read (refused as unused)
    gemma2   four RMSNorms a layer, soft caps, sliding windows on every other layer; norms stored 1 + w
    gemma3   gemma2's layout (no soft caps) with per-head q and k norms; llama.cpp slides five layers in six
    gpt2     learned positions, LayerNorms with biases, Conv1D matrices stored transposed
    gptneox  Pythia: attn_qkv q's heads, then k's, then v's; parallel attention and MLP
    olmo2    norms after each sub-layer only, RMSNorms over the whole q and k projections

llama.cpp scales Gemma's attention scores by head_dim^-0.5, but the 27B models' by (d_model / n_heads)^-0.5
(it knows them by their layer count: Gemma 2 27B 46 layers, Gemma 3 27B 62), as their configs'
query_pre_attn_scalar says; the metadata keeps no such key, so the same rule is applied here.
"""

from __future__ import annotations

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


PHI3_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
    "blk.{i}.attn_norm.weight": "model.layers.{i}.input_layernorm.weight",
    "blk.{i}.attn_qkv.weight": "model.layers.{i}.self_attn.qkv_proj.weight",
    "blk.{i}.attn_output.weight": "model.layers.{i}.self_attn.o_proj.weight",
    "blk.{i}.ffn_norm.weight": "model.layers.{i}.post_attention_layernorm.weight",
    "blk.{i}.ffn_up.weight": "model.layers.{i}.mlp.gate_up_proj.weight",
    "blk.{i}.ffn_down.weight": "model.layers.{i}.mlp.down_proj.weight",
}

GEMMA_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
    "blk.{i}.attn_norm.weight": "model.layers.{i}.input_layernorm.weight",
    "blk.{i}.post_attention_norm.weight": "model.layers.{i}.post_attention_layernorm.weight",
    "blk.{i}.ffn_norm.weight": "model.layers.{i}.pre_feedforward_layernorm.weight",
    "blk.{i}.post_ffw_norm.weight": "model.layers.{i}.post_feedforward_layernorm.weight",
    "blk.{i}.attn_q.weight": "model.layers.{i}.self_attn.q_proj.weight",
    "blk.{i}.attn_k.weight": "model.layers.{i}.self_attn.k_proj.weight",
    "blk.{i}.attn_v.weight": "model.layers.{i}.self_attn.v_proj.weight",
    "blk.{i}.attn_output.weight": "model.layers.{i}.self_attn.o_proj.weight",
    "blk.{i}.attn_q_norm.weight": "model.layers.{i}.self_attn.q_norm.weight",
    "blk.{i}.attn_k_norm.weight": "model.layers.{i}.self_attn.k_norm.weight",
    "blk.{i}.ffn_gate.weight": "model.layers.{i}.mlp.gate_proj.weight",
    "blk.{i}.ffn_up.weight": "model.layers.{i}.mlp.up_proj.weight",
    "blk.{i}.ffn_down.weight": "model.layers.{i}.mlp.down_proj.weight",
}

OLMO2_NAMES = {g: h for g, h in GEMMA_NAMES.items() if "attn_norm" not in g and "ffn_norm" not in g}

GPT2_NAMES = {
    "token_embd.weight": "transformer.wte.weight",
    "position_embd.weight": "transformer.wpe.weight",
    "output_norm.{p}": "transformer.ln_f.{p}",
    "output.weight": "lm_head.weight",
    "blk.{i}.attn_norm.{p}": "transformer.h.{i}.ln_1.{p}",
    "blk.{i}.attn_qkv.{p}": "transformer.h.{i}.attn.c_attn.{p}",
    "blk.{i}.attn_output.{p}": "transformer.h.{i}.attn.c_proj.{p}",
    "blk.{i}.ffn_norm.{p}": "transformer.h.{i}.ln_2.{p}",
    "blk.{i}.ffn_up.{p}": "transformer.h.{i}.mlp.c_fc.{p}",
    "blk.{i}.ffn_down.{p}": "transformer.h.{i}.mlp.c_proj.{p}",
}

NEOX_NAMES = {
    "token_embd.weight": "gpt_neox.embed_in.weight",
    "output_norm.{p}": "gpt_neox.final_layer_norm.{p}",
    "output.weight": "embed_out.weight",
    "blk.{i}.attn_norm.{p}": "gpt_neox.layers.{i}.input_layernorm.{p}",
    "blk.{i}.attn_qkv.{p}": "gpt_neox.layers.{i}.attention.query_key_value.{p}",
    "blk.{i}.attn_output.{p}": "gpt_neox.layers.{i}.attention.dense.{p}",
    "blk.{i}.ffn_norm.{p}": "gpt_neox.layers.{i}.post_attention_layernorm.{p}",
    "blk.{i}.ffn_up.{p}": "gpt_neox.layers.{i}.mlp.dense_h_to_4h.{p}",
    "blk.{i}.ffn_down.{p}": "gpt_neox.layers.{i}.mlp.dense_4h_to_h.{p}",
}

GPT2_CONFIG = {
    "n_positions": "context_length",
    "n_embd": "embedding_length",
    "n_inner": "feed_forward_length",
    "n_layer": "block_count",
    "n_head": "attention.head_count",
    "layer_norm_epsilon": "attention.layer_norm_epsilon",
}

NEOX_CONFIG = {
    "max_position_embeddings": "context_length",
    "hidden_size": "embedding_length",
    "intermediate_size": "feed_forward_length",
    "num_hidden_layers": "block_count",
    "num_attention_heads": "attention.head_count",
    "layer_norm_eps": "attention.layer_norm_epsilon",
    "use_parallel_residual": "use_parallel_residual",
    "rotary_emb_base": "rope.freq_base",
}

GEMMA_CONFIG = {
    **LLAMA_CONFIG,
    "sliding_window": "attention.sliding_window",
    "attn_logit_softcapping": "attn_logit_softcapping",
    "final_logit_softcapping": "final_logit_softcapping",
}

PHI3_CONFIG = {
    **LLAMA_CONFIG,
    "original_max_position_embeddings": "rope.scaling.original_context_length",
    "sliding_window": "attention.sliding_window",
}

_LARGEST = {"gemma2": 46, "gemma3": 62}  # the 27B models' layers, which llama.cpp scales by d_model / n_heads


def gemma_extra(arch: str):
    """Gemma's config beyond the metadata keys: query_pre_attn_scalar as llama.cpp computes the scale,
    and Gemma 2's soft caps off when the file has none (transformers' defaults are on)."""

    def extra(md: dict, names: set) -> dict:
        layers, heads = md.get(f"{arch}.block_count"), md.get(f"{arch}.attention.head_count")
        d_head, width = md.get(f"{arch}.attention.key_length"), md.get(f"{arch}.embedding_length")
        scalar = d_head
        if layers == _LARGEST[arch] and isinstance(width, int) and isinstance(heads, int) and heads > 0:
            scalar = width // heads
        out: dict = {"query_pre_attn_scalar": scalar} if scalar is not None else {}
        for cap in ("attn_logit_softcapping", "final_logit_softcapping"):
            if arch == "gemma2" and f"{arch}.{cap}" not in md:
                out[cap] = None
        return out

    return extra


def phi3_extra(md: dict, names: set) -> dict:
    """Phi-3's sliding window: llama.cpp writes 0 for none (Phi-4-mini)."""
    return {"sliding_window": None} if md.get("phi3.attention.sliding_window") == 0 else {}


def neox_extra(md: dict, names: set) -> dict:
    """GPT-NeoX's rotary_pct: the rotated dimensions of a head over d_head (the adapter's default, 0.25,
    is Pythia's, not the file's)."""
    rotary, width = md.get("gptneox.rope.dimension_count"), md.get("gptneox.embedding_length")
    heads = md.get("gptneox.attention.head_count")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (rotary, width, heads)):
        return {}  # the adapter refuses what is missing or wrong, by its own field
    assert isinstance(rotary, int) and isinstance(width, int) and isinstance(heads, int)
    return {"rotary_pct": rotary / (width // heads)} if width >= heads else {}
