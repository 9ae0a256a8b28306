"""OLMo-2 in Hugging Face's layout (model_type olmo2) as a qkv GPT.

OLMo-2 is a Llama-family decoder (RoPE on halves, SwiGLU, RMSNorm, grouped-query attention, untied
embeddings) whose norms sit after each sub-layer, on what it adds to the residual stream, and
nowhere before (norm_placement="output"):

    x = x + LN1_post(Attn(x))        post_attention_layernorm
    x = x + LN2_post(MLP(x))         post_feedforward_layernorm

and whose q and k each pass an RMSNorm over the whole projection, n_heads * d_head (k: n_kv_heads *
d_head) wide, before they are split into heads (qk_norm, qk_norm_width="all"; Qwen3's norms are per
head). The rest of config.json reads as Llama's (adapters/llama.py). OLMo-2's RMSNorm rounds after
the weight multiplies (Llama's before): the same numbers in float32, one rounding apart in bfloat16.
"""

from __future__ import annotations

import dataclasses

from qkv.core.hub.adapter import Adapter
from qkv.core.hub.adapters.llama import llama_config, read_tokenizer
from qkv.core.io.refusal import Refusal
from qkv.core.spec.config import ModelConfig


def olmo2_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a config.json of model_type olmo2, every field checked (Llama's fields)."""
    if hc.get("attention_bias"):  # q, k, v and o biases without MLP biases: qkv's one switch has both
        raise Refusal.of("gemma.olmo2_bias")
    cfg = llama_config({**hc, "model_type": "llama"})
    return dataclasses.replace(cfg, norm_placement="output", qk_norm=True, qk_norm_width="all")


def weight_map(cfg: ModelConfig, names) -> dict:
    """qkv name -> (how, stored names), as Olmo2Model names them (with or without Olmo2ForCausalLM's "model.")."""
    one = lambda name: names.one(name, ("model.", ""))
    take = lambda name: names.take(name, ("model.", ""))
    plan = {"embed.weight": one("embed_tokens.weight"), "ln_final.weight": one("norm.weight")}
    mlp = (("fc_gate", "gate_proj"), ("fc_in", "up_proj"), ("fc_out", "down_proj"))
    for i in range(cfg.n_layers):
        q, h = f"blocks.{i}.", f"layers.{i}."
        plan[q + "ln1_post.weight"] = one(h + "post_attention_layernorm.weight")
        plan[q + "ln2_post.weight"] = one(h + "post_feedforward_layernorm.weight")
        # W_QKV = [W_Q; W_K; W_V]: q's rows, then k's and v's (n_kv_heads each)
        plan[q + "attn.W_QKV.weight"] = ("cat", [take(h + f"self_attn.{m}_proj.weight") for m in "qkv"])
        plan[q + "attn.W_O.weight"] = one(h + "self_attn.o_proj.weight")
        plan[q + "attn.q_norm.weight"] = one(h + "self_attn.q_norm.weight")  # (n_heads * d_head,)
        plan[q + "attn.k_norm.weight"] = one(h + "self_attn.k_norm.weight")  # (n_kv_heads * d_head,)
        for ours, theirs in mlp:
            plan[q + f"mlp.{ours}.weight"] = one(h + f"mlp.{theirs}.weight")
    return plan


ADAPTER = Adapter(
    titles=("OLMo-2",),
    model_types=("olmo2",),
    config=olmo2_config,
    weights=weight_map,
    tokenizer=read_tokenizer,
    tokenizer_files=("tokenizer.json", "tokenizer_config.json"),
    ignored=r"(^|\.)rotary_emb\.inv_freq$",
    order=1,
)
