"""Gemma 2 and Gemma 3's text model in Hugging Face's layout (model_type gemma2, gemma3_text) as a qkv GPT.

Both are a Llama-family decoder (RoPE on halves, grouped-query attention, a gated MLP, RMSNorm) with
Gemma's own parts, each a switch of qkv's GPT (ModelConfig's `# Gemma / OLMo-2` fields):

    every one   GeGLU (mlp="gated", activation "gelu_tanh"); RMSNorm before and after each sub-layer
                (norm_placement="sandwich": input_layernorm, post_attention_layernorm,
                pre_feedforward_layernorm, post_feedforward_layernorm); embeddings times sqrt(d_model)
                (embed_scale); scores scaled by query_pre_attn_scalar^-0.5 (attn_scale); sliding-window
                layers among global ones (sliding_window, layer_types); head_dim of its own; tied embeddings
    gemma2      attention scores and final logits soft-capped (attn_logit_softcapping 50,
                final_logit_softcapping 30); every other layer slides, the first one first
    gemma3_text an RMSNorm over each head's q and k (qk_norm); two RoPE bases, rope_local_base_freq
                (10,000) on sliding layers and rope_theta (1,000,000) on global ones, which alone take
                rope_scaling's linear factor; five sliding layers to one global (sliding_window_pattern 6)

Gemma's RMSNorm multiplies by (1 + weight), its stored weights being offsets from 1. qkv's RMSNorm
multiplies by its weight, so the 1 is added as the weights are read (weight map "+1"): one RMSNorm for
every family, trained and shown the same way, and in float32 the very numbers Gemma computes (1 + w in
float32). In bfloat16 the sum is rounded once to bfloat16, where Gemma keeps it in float32: a rounding
of the size of bfloat16's own.

Gemma 3 with images (model_type gemma3, Gemma3ForConditionalGeneration) is refused: its text model is
read from a directory of model_type gemma3_text.
"""

from __future__ import annotations

from qkv.core.hub.adapter import Adapter
from qkv.core.hub.adapters.llama import read_tokenizer
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
)
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.spec.config import ModelConfig

MODEL_TYPES = ("gemma2", "gemma3_text")
_POSITIVE = number(1, "1e12")
_CAP = or_null(number(1e-6, "1e12"))
_DEFAULTS = dict(  # transformers' defaults for what a config.json may leave out (gemma2; gemma3_text in _GEMMA3)
    num_key_value_heads=None,
    head_dim=256,
    hidden_activation="gelu_pytorch_tanh",
    rms_norm_eps=1e-6,
    tie_word_embeddings=True,
    attention_bias=False,
    attention_dropout=0.0,
    query_pre_attn_scalar=256,
    sliding_window=4096,
    layer_types=None,
    final_logit_softcapping=30.0,
    attn_logit_softcapping=50.0,
    use_bidirectional_attention=None,
    rope_parameters=None,
    rope_scaling=None,
    rope_theta=10000.0,
    rope_local_base_freq=10000.0,
    sliding_window_pattern=2,
)
_GEMMA3 = dict(
    final_logit_softcapping=None, attn_logit_softcapping=None, rope_theta=1_000_000.0, sliding_window_pattern=6
)
_FIELDS = {
    **SIZES,
    "num_key_value_heads": KV_HEADS,
    "head_dim": integer(1, 65536),
    "hidden_activation": one_of("gelu_pytorch_tanh"),
    "rms_norm_eps": EPSILON,
    "tie_word_embeddings": BOOL,
    "attention_bias": (lambda v: v is False, phrase("gemma.wants_no_bias")),
    "attention_dropout": PROBABILITY,
    "query_pre_attn_scalar": number(1e-6, "1e12"),
    "sliding_window": or_null(integer(1, 10_000_000)),
    "layer_types": (
        lambda v: v is None or isinstance(v, list) and all(t in ("sliding_attention", "full_attention") for t in v),
        phrase("gemma.wants_layer_types"),
    ),
    "final_logit_softcapping": _CAP,
    "attn_logit_softcapping": _CAP,
    "use_bidirectional_attention": (lambda v: not v, phrase("gemma.wants_causal")),
    "rope_parameters": OBJECT_OR_NULL,
    "rope_scaling": OBJECT_OR_NULL,
    "rope_theta": _POSITIVE,
    "rope_local_base_freq": _POSITIVE,
    "sliding_window_pattern": integer(1, 1024),
}


def _layer_letters(hc: dict) -> str:
    """layer_types as qkv writes them ("l" sliding, "g" global), cut to the shortest pattern that repeats:
    from the list, or (older configs) every sliding_window_pattern-th layer global."""
    n = hc["num_hidden_layers"]
    if hc["layer_types"] is not None:
        if len(hc["layer_types"]) != n:
            raise Refusal.of("gemma.layer_types_count", got=len(hc["layer_types"]), n=n)
        letters = "".join("l" if t == "sliding_attention" else "g" for t in hc["layer_types"])
    else:
        every = hc["sliding_window_pattern"]
        letters = "".join("g" if (i + 1) % every == 0 else "l" for i in range(n))
    period = next(p for p in range(1, n + 1) if all(letters[i] == letters[i % p] for i in range(n)))
    return letters[:period]


def _ropes(hc: dict, kind: str) -> tuple[float, float, float]:
    """(global base, local base, global linear factor) from rope_parameters (transformers 5: one object, or
    Gemma 3's one per layer type) or the older rope_theta, rope_local_base_freq and rope_scaling."""
    params = hc["rope_parameters"] or {}
    if kind == "gemma3_text" and ("full_attention" in params or "sliding_attention" in params):
        full, local = params.get("full_attention") or {}, params.get("sliding_attention") or {}
    else:
        full, local = dict(params), {}
        if kind == "gemma3_text" and hc["rope_scaling"]:
            full.update(hc["rope_scaling"])
    theta = full.get("rope_theta", hc["rope_theta"])
    local_theta = local.get("rope_theta", hc["rope_local_base_freq"] if kind == "gemma3_text" else theta)
    for name, value in (("rope_theta", theta), ("rope_local_base_freq", local_theta)):
        if not _POSITIVE[0](value):
            raise Refusal.of("hub.field_wrong", name=repr(name), wants=_POSITIVE[1], got=repr(value))
    factor = 1.0
    for where, p in (("full_attention", full), ("sliding_attention", local)):
        kind_of = p.get("rope_type", p.get("type", "default"))
        if kind_of == "linear" and where == "full_attention" and _POSITIVE[0](p.get("factor")):
            factor = float(p["factor"])
        elif kind_of != "default":
            raise Refusal.of("gemma.rope_type", where=where, kind=repr(kind_of))
    return float(theta), float(local_theta), factor


def gemma_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a config.json of model_type gemma2 or gemma3_text, every field checked."""
    kind = str(hc.get("model_type"))
    if kind == "gemma3":
        raise Refusal.of("gemma.multimodal", architectures=", ".join(hc.get("architectures") or ["Gemma3"]))
    hc = checked(hc, _FIELDS, {**_DEFAULTS, **(_GEMMA3 if kind == "gemma3_text" else {})})
    heads = hc["num_attention_heads"]
    kv = hc["num_key_value_heads"] or heads
    if heads % kv:
        raise Refusal.of("hub.heads_not_multiple", heads=heads, kv=kv)
    theta, local_theta, factor = _ropes(hc, kind)
    letters = _layer_letters(hc)
    window = hc["sliding_window"] if "l" in letters else None
    if "l" in letters and window is None:
        raise Refusal.of("gemma.no_window")
    return ModelConfig(
        d_vocab=hc["vocab_size"],
        n_ctx=hc["max_position_embeddings"],
        d_model=hc["hidden_size"],
        n_heads=heads,
        n_kv_heads=kv,
        d_head=hc["head_dim"],
        n_layers=hc["num_hidden_layers"],
        d_mlp=hc["intermediate_size"],
        pos="rope",
        rope_layout="halves",
        rope_base=theta,
        norm="rms",
        mlp="gated",
        activation="gelu_tanh",
        bias=False,
        qk_norm=kind == "gemma3_text",
        unembed_bias=False,
        tie_embeddings=hc["tie_word_embeddings"],
        embed_scale=True,
        dropout_attn=hc["attention_dropout"],
        ln_eps=hc["rms_norm_eps"],
        norm_placement="sandwich",
        attn_scale=float(hc["query_pre_attn_scalar"]) ** 0.5,
        attn_scores_soft_cap=hc["attn_logit_softcapping"],
        output_logits_soft_cap=hc["final_logit_softcapping"],
        sliding_window=window,
        layer_types=letters if window is not None else None,
        rope_base_local=local_theta if local_theta != theta and window is not None else None,
        rope_linear_factor=factor,
    )


def weight_map(cfg: ModelConfig, names) -> dict:
    """qkv name -> (how, stored names), as Gemma2Model / Gemma3TextModel name them (with or without the
    ForCausalLM's "model." prefix); every RMSNorm's weight plus 1 ("+1": Gemma's norm scales by 1 + w)."""
    one = lambda name: names.one(name, ("model.", ""))
    norm = lambda name: ("+1", [names.take(name, ("model.", ""))])
    take = lambda name: names.take(name, ("model.", ""))
    plan = {"embed.weight": one("embed_tokens.weight"), "ln_final.weight": norm("norm.weight")}
    norms = (
        ("ln1", "input_layernorm"),
        ("ln1_post", "post_attention_layernorm"),
        ("ln2", "pre_feedforward_layernorm"),
        ("ln2_post", "post_feedforward_layernorm"),
    )
    mlp = (("fc_gate", "gate_proj"), ("fc_in", "up_proj"), ("fc_out", "down_proj"))
    for i in range(cfg.n_layers):
        q, h = f"blocks.{i}.", f"layers.{i}."
        for ours, theirs in norms:
            plan[q + f"{ours}.weight"] = norm(h + f"{theirs}.weight")
        # W_QKV = [W_Q; W_K; W_V]: q's rows, then k's and v's (n_kv_heads each)
        plan[q + "attn.W_QKV.weight"] = ("cat", [take(h + f"self_attn.{m}_proj.weight") for m in "qkv"])
        plan[q + "attn.W_O.weight"] = one(h + "self_attn.o_proj.weight")
        if cfg.qk_norm:
            plan[q + "attn.q_norm.weight"] = norm(h + "self_attn.q_norm.weight")
            plan[q + "attn.k_norm.weight"] = norm(h + "self_attn.k_norm.weight")
        for ours, theirs in mlp:
            plan[q + f"mlp.{ours}.weight"] = one(h + f"mlp.{theirs}.weight")
    return plan


ADAPTER = Adapter(
    titles=("Gemma 2", "Gemma 3"),
    model_types=MODEL_TYPES,
    config=gemma_config,
    weights=weight_map,
    tokenizer=read_tokenizer,
    tokenizer_files=("tokenizer.json", "tokenizer_config.json"),
    ignored=r"(^|\.)rotary_emb\.\w*inv_freq$",
    order=1,
    refused=("gemma3",),
)
