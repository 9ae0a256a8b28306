"""Phi-3 in Hugging Face's layout (model_type phi3) as a qkv GPT: the Llama family's decoder (RMSNorm,
SwiGLU, RoPE in halves, grouped-query attention, no biases) with its matrices fused in storage.

    qkv_proj       q's, k's and v's rows in one tensor: the layout of qkv's own W_QKV, read as it is
    gate_up_proj   the gate's rows, then the up projection's: split in two (read.Rows) into
                   fc_gate and fc_in
    partial RoPE   partial_rotary_factor (Phi-4-mini: 0.75) rotates each head's first dimensions only
    sliding_window as Mistral: each query reads its own and the `sliding_window` - 1 keys before it,
                   in every layer (ModelConfig.sliding_window)
    LongRoPE       the long-context models' RoPE ("longrope", which older files call "su" or "yarn":
                   Phi-3-128k, Phi-3.5, Phi-4-mini): each frequency divided by its own short_factor,
                   cos and sin times attention_factor (by default sqrt(1 + ln(s) / ln(original)), s the
                   context's stretch max_position_embeddings / original_max_position_embeddings);
                   read for texts up to original_max_position_embeddings (n_ctx), where transformers
                   uses the short factors too (beyond it, the long_factor ones: not built)
"""

from __future__ import annotations

import math

from qkv.core.hub.adapter import Adapter
from qkv.core.hub.adapters.llama import read_tokenizer
from qkv.core.hub.adapters.neox import rope_theta, rotary
from qkv.core.hub.fields import (
    BOOL,
    EPSILON,
    KV_HEADS,
    OBJECT_OR_NULL,
    PROBABILITY,
    SIZES,
    checked,
    integer,
    number,
    one_of,
    or_null,
    wrong,
)
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.spec.config import ModelConfig

# what transformers leaves out of config.json when a value is its default (Phi3Config's defaults)
_DEFAULTS = dict(
    num_key_value_heads=None,
    hidden_act="silu",
    rms_norm_eps=1e-5,
    tie_word_embeddings=False,
    resid_pdrop=0.0,
    embd_pdrop=0.0,
    attention_dropout=0.0,
    rope_theta=10000.0,
    rope_scaling=None,
    rope_parameters=None,
    partial_rotary_factor=1.0,
    sliding_window=None,
    original_max_position_embeddings=4096,
)
_FIELDS = {
    **SIZES,
    "num_key_value_heads": KV_HEADS,
    "hidden_act": one_of("silu"),
    "rms_norm_eps": EPSILON,
    "tie_word_embeddings": BOOL,
    "resid_pdrop": PROBABILITY,
    "embd_pdrop": PROBABILITY,
    "attention_dropout": PROBABILITY,
    "rope_theta": number(1, "1e12"),
    "rope_scaling": OBJECT_OR_NULL,
    "rope_parameters": OBJECT_OR_NULL,
    "partial_rotary_factor": number(0, "1"),
    "sliding_window": or_null(integer(1, 10_000_000)),
    "original_max_position_embeddings": integer(1, 10_000_000),
}
_LONGROPE = ("longrope", "su", "yarn")  # transformers reads Phi-3's "su" and "yarn" as "longrope"


def longrope(hc: dict, params: dict, pairs: int) -> tuple[list[float], float, int]:
    """(short factors, attention factor, the original context) of Phi-3's LongRoPE, each checked: the
    frequencies qkv builds for texts up to the original context, as transformers computes them there."""
    original = params.get("original_max_position_embeddings", hc["original_max_position_embeddings"])
    ok, wants = integer(1, 10_000_000)
    if not ok(original):
        raise wrong("original_max_position_embeddings", wants, original)
    short = params.get("short_factor")
    if not (isinstance(short, list) and len(short) == pairs and all(number(1e-6, "1e9")[0](f) for f in short)):
        raise wrong("short_factor", phrase("neox.wants_factors", n=pairs), short)
    stretch = params.get("factor") or hc["max_position_embeddings"] / original
    attention = params.get("attention_factor")
    if attention is None:  # the LongRoPE paper's, as transformers sets it
        attention = math.sqrt(1 + math.log(stretch) / math.log(original)) if stretch > 1 else 1.0
    if not number(1e-3, "100")[0](attention):
        raise wrong("attention_factor", number(1e-3, "100")[1], attention)
    return [float(f) for f in short], float(attention), original


def phi3_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a config.json of model_type phi3, every field checked."""
    hc = checked(hc, _FIELDS, _DEFAULTS, divisible=("hidden_size", "num_attention_heads"))
    heads, width = hc["num_attention_heads"], hc["hidden_size"]
    kv = hc["num_key_value_heads"] or heads
    if heads % kv:
        raise Refusal.of("hub.heads_not_multiple", heads=heads, kv=kv)
    params = hc["rope_scaling"] or hc["rope_parameters"] or {}  # transformers: rope_scaling wins
    kind = params.get("rope_type", params.get("type", "default"))
    if kind != "default" and kind not in _LONGROPE:
        raise wrong("rope_type", phrase("hub.wants_rope_type", choices=["default", "longrope"]), kind)
    d_head = width // heads
    rotary_dim = rotary(params, "partial_rotary_factor", hc["partial_rotary_factor"], d_head)
    n_ctx, window, factors, attention = hc["max_position_embeddings"], hc["sliding_window"], None, 1.0
    if kind in _LONGROPE:  # beyond the original context transformers switches to the long factors
        factors, attention, original = longrope(hc, params, rotary_dim // 2)
        n_ctx = min(n_ctx, original)
    if window is not None and window >= n_ctx:  # a window as long as the context hides nothing
        window = None
    return ModelConfig(
        sliding_window=window,
        d_vocab=hc["vocab_size"],
        n_ctx=n_ctx,
        d_model=width,
        n_heads=heads,
        n_kv_heads=kv,
        n_layers=hc["num_hidden_layers"],
        d_mlp=hc["intermediate_size"],
        pos="rope",
        rope_layout="halves",
        rope_base=rope_theta(params, hc["rope_theta"]),
        rotary_dim=rotary_dim,
        rope_factors=factors,
        rope_attention_factor=attention,
        norm="rms",
        mlp="gated",
        activation="silu",
        bias=False,
        unembed_bias=False,
        tie_embeddings=hc["tie_word_embeddings"],
        dropout_embed=hc["embd_pdrop"],
        dropout_resid=hc["resid_pdrop"],
        dropout_attn=hc["attention_dropout"],
        ln_eps=hc["rms_norm_eps"],
    )


def weight_map(cfg: ModelConfig, names) -> dict:
    """qkv name -> (how, stored names[, rows]), each found by its name in Phi3Model (with or without
    Phi3ForCausalLM's "model." prefix); the unembedding is hub/read.unembedding's."""
    prefixes = ("model.", "")
    one = lambda name: names.one(name, prefixes)
    plan = {"embed.weight": one("embed_tokens.weight"), "ln_final.weight": one("norm.weight")}
    d_mlp = cfg.d_mlp
    for i in range(cfg.n_layers):
        q, h = f"blocks.{i}.", f"layers.{i}."
        plan[q + "ln1.weight"] = one(h + "input_layernorm.weight")
        plan[q + "attn.W_QKV.weight"] = one(h + "self_attn.qkv_proj.weight")  # [W_Q; W_K; W_V], as qkv's
        plan[q + "attn.W_O.weight"] = one(h + "self_attn.o_proj.weight")
        plan[q + "ln2.weight"] = one(h + "post_attention_layernorm.weight")
        gate_up = h + "mlp.gate_up_proj.weight"  # [W_gate; W_up]: 2 d_mlp rows
        plan[q + "mlp.fc_gate.weight"] = names.rows(gate_up, prefixes, 2 * d_mlp, [(0, d_mlp)])
        plan[q + "mlp.fc_in.weight"] = names.rows(gate_up, prefixes, 2 * d_mlp, [(d_mlp, 2 * d_mlp)])
        plan[q + "mlp.fc_out.weight"] = one(h + "mlp.down_proj.weight")
    return plan


ADAPTER = Adapter(
    titles=("Phi-3",),
    model_types=("phi3",),
    config=phi3_config,
    weights=weight_map,
    tokenizer=read_tokenizer,  # tokenizer.json: SentencePiece's pieces (Phi-3) or byte-level BPE (Phi-4-mini)
    tokenizer_files=("tokenizer.json", "tokenizer_config.json"),
    ignored=r"(^|\.)rotary_emb\.inv_freq$",
    order=4,
)
