"""The Llama family in Hugging Face's layout (model_type llama, mistral, qwen2, qwen3) as a qkv GPT.

They are one decoder with a few switches, each a ModelConfig field of qkv's GPT:

    every one     RMSNorm before each sub-layer (norm="rms"), SwiGLU (mlp="gated", silu), RoPE on
                  halves of each head (rope_layout="halves", rope_theta), grouped-query attention
                  (num_key_value_heads), head_dim of its own, no biases, tied or untied lm_head
    llama         attention_bias and mlp_bias (both or neither), Llama 3's RoPE scaling
    mistral       a sliding window: each query reads its own and the `sliding_window` - 1 keys before
                  it, in every layer (ModelConfig.sliding_window)
    qwen2         biases on q, k and v only (qkv_bias); with use_sliding_window a text is at most
                  `sliding_window` tokens (its windows, on some layers only, are not built)
    qwen3         an RMSNorm over each head's q and k (qk_norm), attention_bias

`llama_config` reads config.json (every field checked, by its own name), `weight_map` says which
stored tensors make each qkv parameter, and `read_tokenizer` reads tokenizer.json (byte-level BPE or
SentencePiece's pieces); hub/read.py reads the files.
"""

from __future__ import annotations

from pathlib import Path

from qkv.core.hub.adapter import Adapter
from qkv.core.hub.fields import (
    BOOL,
    EPSILON,
    KV_HEADS,
    OBJECT_OR_NULL,
    PROBABILITY,
    SIZES,
    checked,
    exactly,
    integer,
    is_number,
    number,
    one_of,
    or_null,
    wrong,
)
from qkv.core.io.files import read_json_object
from qkv.core.io.refusal import Refusal, phrase
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
_POSITIVE = number(1, "1e12")
_FIELDS = {
    **SIZES,
    "num_key_value_heads": KV_HEADS,
    "head_dim": or_null(integer(1, 65536)),
    "hidden_act": one_of("silu"),
    "rms_norm_eps": EPSILON,
    "tie_word_embeddings": BOOL,
    "attention_bias": BOOL,
    "mlp_bias": BOOL,
    "attention_dropout": PROBABILITY,
    "pretraining_tp": exactly(1, phrase("hub.wants_no_tensor_parallel")),
    "rope_theta": _POSITIVE,
    "rope_scaling": OBJECT_OR_NULL,
    "rope_parameters": OBJECT_OR_NULL,
    "sliding_window": or_null(integer(1, 10_000_000)),
    "use_sliding_window": BOOL,
    "partial_rotary_factor": exactly(1, phrase("hub.wants_full_rotary")),
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
        raise wrong("rope_theta", _POSITIVE[1], theta)
    if kind == "default":
        return float(theta), None
    if kind != "llama3":
        raise wrong("rope_type", phrase("hub.wants_rope_type", choices=["default", "llama3"]), kind)
    missing = [k for k in ROPE_SCALING_FIELDS if not is_number(params.get(k))]
    if missing:
        raise Refusal.of("hub.llama3_scaling", name=missing[0])
    return float(theta), {k: float(params[k]) for k in ROPE_SCALING_FIELDS}


def llama_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a config.json of model_type llama, mistral, qwen2 or qwen3, every field checked."""
    kind = hc.get("model_type")
    hc = checked(hc, _FIELDS, _DEFAULTS)
    heads, width = hc["num_attention_heads"], hc["hidden_size"]
    if hc["head_dim"] is None and width % heads:
        raise Refusal.of("hub.not_divisible", width="'hidden_size'", w=width, heads="'num_attention_heads'", h=heads)
    kv = hc["num_key_value_heads"] or heads
    if heads % kv:
        raise Refusal.of("hub.heads_not_multiple", heads=heads, kv=kv)
    theta, scaling = _rope(hc)
    bias, qkv_bias = hc["attention_bias"], hc["attention_bias"]
    if kind == "llama" and hc["mlp_bias"] != bias:  # qkv's `bias` is W_O's and the MLP's together
        raise Refusal.of("hub.llama_biases")
    if kind == "qwen2":
        bias, qkv_bias = False, True  # Qwen2: q, k and v have biases, o_proj and the MLP none
    if kind == "qwen3" and bias:
        raise Refusal.of("hub.qwen3_bias")
    n_ctx = hc["max_position_embeddings"]
    window = hc["sliding_window"] if kind == "mistral" else None  # every layer reads that many keys at most
    if window is not None and window >= n_ctx:  # a window as long as the context hides nothing
        window = None
    if kind == "qwen2" and hc["use_sliding_window"] and hc["sliding_window"] is not None:
        # Qwen2 slides only on the layers from max_window_layers on: not built; a text is at most the window
        n_ctx = min(n_ctx, hc["sliding_window"])
    return ModelConfig(
        sliding_window=window,
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


def weight_map(cfg: ModelConfig, names) -> dict:
    """qkv name -> (how, stored names), each found by its name in LlamaModel (with or without
    LlamaForCausalLM's "model." prefix); the unembedding is hub/read.unembedding's."""
    one = lambda name: names.one(name, ("model.", ""))
    take = lambda name: names.take(name, ("model.", ""))
    plan = {"embed.weight": one("embed_tokens.weight"), "ln_final.weight": one("norm.weight")}
    parts = ("weight", "bias") if cfg.qkv_bias else ("weight",)
    mlp = (("fc_gate", "gate_proj"), ("fc_in", "up_proj"), ("fc_out", "down_proj"))
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
        for ours, theirs in mlp:
            plan[q + f"mlp.{ours}.weight"] = one(h + f"mlp.{theirs}.weight")
        if cfg.bias:
            plan[q + "attn.W_O.bias"] = one(h + "self_attn.o_proj.bias")
            for ours, theirs in mlp:
                plan[q + f"mlp.{ours}.bias"] = one(h + f"mlp.{theirs}.bias")
    return plan


def read_tokenizer(d: Path, cfg: ModelConfig):
    """A Llama-family tokenizer.json: byte-level BPE (Llama 3, Qwen, SmolLM2) or SentencePiece's pieces
    as transformers converts them (Llama 2, Mistral, Gemma: ▁ for a space, <0xE5> for a byte), chosen
    by its layout (tokenizers/layout.py); any other layout is refused in one line naming the file."""
    from qkv.core.text.tokenizers.base import read_tokenizer_json
    from qkv.core.text.tokenizers.hf_config import as_transformers_reads
    from qkv.core.text.tokenizers.layout import from_hf

    if not (d / "tokenizer.json").exists():
        raise Refusal.of("hub.no_tokenizer_json", path=d)
    hf = read_tokenizer_json(d / "tokenizer.json")
    if (d / "tokenizer_config.json").exists():  # its class's pipeline, as transformers reads it (hf_config.py)
        as_transformers_reads(hf, read_json_object(d / "tokenizer_config.json"))
    try:
        return from_hf(hf)
    except Refusal as e:
        raise Refusal.of("hub.in_file", path=d / "tokenizer.json", error=e) from None


ADAPTER = Adapter(
    titles=("Llama", "Mistral", "Qwen2", "Qwen3"),
    model_types=MODEL_TYPES,
    config=llama_config,
    weights=weight_map,
    tokenizer=read_tokenizer,
    tokenizer_files=("tokenizer.json", "tokenizer_config.json"),
    ignored=r"(^|\.)rotary_emb\.inv_freq$",  # RoPE's frequencies, which some Llama 2 files store and qkv computes
    order=1,
)
