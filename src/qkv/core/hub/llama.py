"""The Llama family in Hugging Face's layout (model_type llama, mistral, qwen2, qwen3) as a qkv GPT.

They are one decoder with a few switches, each a ModelConfig field of qkv's GPT:

    every one     RMSNorm before each sub-layer (norm="rms"), SwiGLU (mlp="gated", silu), RoPE on
                  halves of each head (rope_layout="halves", rope_theta), grouped-query attention
                  (num_key_value_heads), head_dim of its own, no biases, tied or untied lm_head
    llama         attention_bias and mlp_bias (both or neither), Llama 3's RoPE scaling
    mistral       a sliding window: a text is at most `sliding_window` tokens, within which the
                  window hides nothing (n_ctx = min(max_position_embeddings, sliding_window))
    qwen2         biases on q, k and v only (qkv_bias), a sliding window only if use_sliding_window
    qwen3         an RMSNorm over each head's q and k (qk_norm), attention_bias

`llama_config` reads config.json (every field checked, by its own name) and `weight_plan` says which
stored tensors make each qkv parameter; models.pretrained reads the files.
"""

from __future__ import annotations

from qkv.core.hub.hf_config import _BOOL, _EPSILON, _PROBABILITY, _checked, _integer, _is_number, _one_of, _or_null
from qkv.core.spec.config import ROPE_SCALING_FIELDS, ModelConfig

MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3")

# what transformers leaves out of config.json when a value is its default (its config classes' defaults)
_DEFAULTS = dict(
    hidden_act="silu",
    num_key_value_heads=None,
    head_dim=None,
    rms_norm_eps=1e-6,
    tie_word_embeddings=False,
    attention_bias=False,
    mlp_bias=False,
    attention_dropout=0.0,
    pretraining_tp=1,
    rope_theta=10000.0,
    rope_scaling=None,
    rope_parameters=None,
    sliding_window=None,
    use_sliding_window=False,
    partial_rotary_factor=1.0,
)
_POSITIVE = (lambda v: _is_number(v) and 1 <= v <= 1e12, "a number from 1 to 1e12")
_FIELDS = {
    "vocab_size": _integer(1, 10_000_000),
    "hidden_size": _integer(1, 65536),
    "intermediate_size": _integer(1, 1 << 20),
    "num_hidden_layers": _integer(1, 1024),
    "num_attention_heads": _integer(1, 4096),
    "num_key_value_heads": _or_null(_integer(1, 4096)),
    "head_dim": _or_null(_integer(1, 65536)),
    "hidden_act": _one_of("silu"),
    "max_position_embeddings": _integer(1, 10_000_000),
    "rms_norm_eps": _EPSILON,
    "tie_word_embeddings": _BOOL,
    "attention_bias": _BOOL,
    "mlp_bias": _BOOL,
    "attention_dropout": _PROBABILITY,
    "pretraining_tp": (lambda v: v == 1, "1 (weights split for tensor parallelism are not read)"),
    "rope_theta": _POSITIVE,
    "rope_scaling": (lambda v: v is None or isinstance(v, dict), "an object, or null"),
    "rope_parameters": (lambda v: v is None or isinstance(v, dict), "an object, or null"),
    "sliding_window": _or_null(_integer(1, 10_000_000)),
    "use_sliding_window": _BOOL,
    "partial_rotary_factor": (lambda v: v == 1, "1 (RoPE on part of each head is not built)"),
}


def _rope(hc: dict) -> tuple[float, dict | None]:
    """(rope_theta, Llama 3's scaling or None) from rope_parameters (transformers 5) or the older
    rope_theta and rope_scaling; where both are written, rope_scaling wins, as in transformers. A RoPE
    type qkv does not build is refused by name."""
    written = hc["rope_parameters"] or {}
    params = {**written, **hc["rope_scaling"]} if hc["rope_scaling"] else written
    kind = params.get("rope_type", params.get("type", "default"))
    theta = params.get("rope_theta", hc["rope_theta"])
    if not _POSITIVE[0](theta):
        raise ValueError(f"field 'rope_theta' must be {_POSITIVE[1]}; got {theta!r}")
    if kind == "default":
        return float(theta), None
    if kind != "llama3":
        raise ValueError(f"field 'rope_type' must be one of default, llama3 (the RoPE types qkv builds); got {kind!r}")
    missing = [k for k in ROPE_SCALING_FIELDS if not _is_number(params.get(k))]
    if missing:
        raise ValueError(f"field 'rope_scaling' of type llama3 must give {missing[0]} as a number")
    return float(theta), {k: float(params[k]) for k in ROPE_SCALING_FIELDS}


def llama_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a config.json of model_type llama, mistral, qwen2 or qwen3, every field checked."""
    kind = hc.get("model_type")
    hc = _checked(hc, _FIELDS, _DEFAULTS)
    heads, width = hc["num_attention_heads"], hc["hidden_size"]
    if hc["head_dim"] is None and width % heads:
        raise ValueError(f"field 'hidden_size' ({width}) is not divisible by 'num_attention_heads' ({heads})")
    kv = hc["num_key_value_heads"] or heads
    if heads % kv:
        raise ValueError(f"field 'num_attention_heads' ({heads}) is not a multiple of 'num_key_value_heads' ({kv})")
    theta, scaling = _rope(hc)
    bias, qkv_bias = hc["attention_bias"], hc["attention_bias"]
    if kind == "llama" and hc["mlp_bias"] != bias:  # qkv's `bias` is W_O's and the MLP's together
        raise ValueError("fields 'attention_bias' and 'mlp_bias' must be equal (qkv has one switch for both)")
    if kind == "qwen2":
        bias, qkv_bias = False, True  # Qwen2: q, k and v have biases, o_proj and the MLP none
    if kind == "qwen3" and bias:
        raise ValueError("field 'attention_bias' must be false (a Qwen3 with attention biases is not built)")
    n_ctx = hc["max_position_embeddings"]
    window = hc["sliding_window"] if kind == "mistral" or hc["use_sliding_window"] else None
    if window is not None:  # within the window a sliding mask hides nothing; a longer text is refused
        n_ctx = min(n_ctx, window)
    return ModelConfig(
        d_vocab=hc["vocab_size"],
        n_ctx=n_ctx,
        d_model=width,
        n_heads=heads,
        n_kv_heads=kv,
        d_head=hc["head_dim"] or width // heads,
        n_layers=hc["num_hidden_layers"],
        d_mlp=hc["intermediate_size"],
        pos="rope",
        rope_layout="halves",
        rope_base=theta,
        rope_scaling=scaling,
        norm="rms",
        mlp="gated",
        activation="silu",
        bias=bias,
        qkv_bias=qkv_bias,
        qk_norm=kind == "qwen3",
        unembed_bias=False,
        tie_embeddings=hc["tie_word_embeddings"],
        dropout_attn=hc["attention_dropout"],
        ln_eps=hc["rms_norm_eps"],
    )


def weight_plan(cfg: ModelConfig, take) -> dict:
    """qkv name -> (how, stored names) for models.pretrained._load_weights; take(name) finds a stored
    tensor by its name in LlamaModel (with or without LlamaForCausalLM's "model." prefix)."""
    one = lambda name: ("", [take(name)])
    plan = {"embed.weight": one("embed_tokens.weight"), "ln_final.weight": one("norm.weight")}
    parts = ("weight", "bias") if cfg.qkv_bias else ("weight",)
    for i in range(cfg.n_layers):
        q, h = f"blocks.{i}.", f"layers.{i}."
        plan[q + "ln1.weight"] = one(h + "input_layernorm.weight")
        for part in parts:  # W_QKV = [W_Q; W_K; W_V]: q's rows, then k's and v's (n_kv_heads each)
            plan[q + f"attn.W_QKV.{part}"] = ("cat", [take(h + f"self_attn.{m}_proj.{part}") for m in "qkv"])
        plan[q + "attn.W_O.weight"] = one(h + "self_attn.o_proj.weight")
        if cfg.qk_norm:
            plan[q + "attn.q_norm.weight"] = one(h + "self_attn.q_norm.weight")
            plan[q + "attn.k_norm.weight"] = one(h + "self_attn.k_norm.weight")
        plan[q + "ln2.weight"] = one(h + "post_attention_layernorm.weight")
        for ours, theirs in (("fc_gate", "gate_proj"), ("fc_in", "up_proj"), ("fc_out", "down_proj")):
            plan[q + f"mlp.{ours}.weight"] = one(h + f"mlp.{theirs}.weight")
        if cfg.bias:
            plan[q + "attn.W_O.bias"] = one(h + "self_attn.o_proj.bias")
            for ours, theirs in (("fc_gate", "gate_proj"), ("fc_in", "up_proj"), ("fc_out", "down_proj")):
                plan[q + f"mlp.{ours}.bias"] = one(h + f"mlp.{theirs}.bias")
    return plan
