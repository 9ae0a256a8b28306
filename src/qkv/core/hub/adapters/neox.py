"""GPT-NeoX and Pythia in Hugging Face's layout (model_type gpt_neox) as a qkv GPT.

What sets the family apart, each a ModelConfig switch of qkv's GPT:

    parallel blocks    x = x + Attn(LN1(x)) + MLP(LN2(x)) with use_parallel_residual (Pythia, the default;
                       parallel_attn_mlp), the sequential pre-norm block without it
    partial RoPE       only the first rotary_pct * d_head dimensions of each head rotate (Pythia: 0.25),
                       in halves, at frequencies rotary_emb_base^(-2i / rotary_dim) (rotary_dim)
    LayerNorm, GELU    LayerNorms with biases, a plain MLP with biases, biases on q, k, v and W_O
    embed_out          an unembedding of its own, without bias (tied only if tie_word_embeddings)

Its query_key_value weight is stored head by head: rows [h][q, k, v][d_head] (transformers views the
product as (B, T, n_heads, 3 d_head) and cuts each head's row in three). qkv's W_QKV holds all of q's
heads first, then k's, then v's, so the weight map regroups the rows (read.Rows).
transformers 5 writes rotary_pct and rotary_emb_base into rope_parameters (partial_rotary_factor,
rope_theta); older files keep them as fields of their own. Both are read, rope_parameters first.
"""

from __future__ import annotations

from qkv.core.hub.adapter import Adapter
from qkv.core.hub.adapters.llama import read_tokenizer
from qkv.core.hub.fields import (
    BOOL,
    EPSILON,
    OBJECT_OR_NULL,
    PROBABILITY,
    SIZES,
    checked,
    exactly,
    is_number,
    number,
    one_of,
    wrong,
)
from qkv.core.io.refusal import phrase
from qkv.core.spec.config import Activation, ModelConfig

# what transformers leaves out of config.json when a value is its default (GPTNeoXConfig's defaults)
_DEFAULTS = dict(
    hidden_act="gelu",
    layer_norm_eps=1e-5,
    tie_word_embeddings=False,
    use_parallel_residual=True,
    attention_bias=True,
    attention_dropout=0.0,
    hidden_dropout=0.0,
    rotary_pct=0.25,
    rotary_emb_base=10000.0,
    rope_scaling=None,
    rope_parameters=None,
)
# transformers' names; gelu_new, gelu_fast (GPT-NeoX-20B's) and gelu_pytorch_tanh: one formula, GELU's tanh form
ACTIVATIONS: dict[str, Activation] = {"gelu": "gelu", "relu": "relu"}
ACTIVATIONS.update(dict.fromkeys(("gelu_new", "gelu_fast", "gelu_pytorch_tanh"), "gelu_tanh"))
_POSITIVE = number(1, "1e12")
_FIELDS = {
    **SIZES,
    "hidden_act": one_of(*ACTIVATIONS),
    "layer_norm_eps": EPSILON,
    "tie_word_embeddings": BOOL,
    "use_parallel_residual": BOOL,
    "attention_bias": exactly(True, phrase("neox.wants_attention_bias")),
    "attention_dropout": PROBABILITY,
    "hidden_dropout": PROBABILITY,
    "rotary_pct": number(0, "1"),
    "rotary_emb_base": _POSITIVE,
    "rope_scaling": OBJECT_OR_NULL,
    "rope_parameters": OBJECT_OR_NULL,
}


def rotary(params: dict, fraction_field: str, fraction, d_head: int) -> int:
    """The dimensions of each head RoPE rotates: int(d_head * fraction), as transformers counts them;
    refused unless an even number from 2 to d_head (GPT-NeoX's rotary_pct, Phi-3's partial_rotary_factor)."""
    fraction = params.get("partial_rotary_factor", fraction)
    dims = int(d_head * fraction) if is_number(fraction) and 0 < fraction <= 1 else 0
    if dims < 2 or dims % 2:
        raise wrong(fraction_field, phrase("neox.wants_rotary_pairs", d_head=d_head), fraction)
    return dims


def rope_theta(params: dict, theta) -> float:
    """RoPE's base: rope_parameters' rope_theta, else the family's own field (`theta`)."""
    theta = params.get("rope_theta", theta)
    if not _POSITIVE[0](theta):
        raise wrong("rope_theta", _POSITIVE[1], theta)
    return float(theta)


def neox_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a config.json of model_type gpt_neox, every field checked."""
    hc = checked(hc, _FIELDS, _DEFAULTS, divisible=("hidden_size", "num_attention_heads"))
    heads, width = hc["num_attention_heads"], hc["hidden_size"]
    params = hc["rope_scaling"] or hc["rope_parameters"] or {}  # transformers: rope_scaling wins
    kind = params.get("rope_type", params.get("type", "default"))
    if kind != "default":
        raise wrong("rope_type", phrase("hub.wants_rope_type", choices=["default"]), kind)
    return ModelConfig(
        d_vocab=hc["vocab_size"],
        n_ctx=hc["max_position_embeddings"],
        d_model=width,
        n_heads=heads,
        n_layers=hc["num_hidden_layers"],
        d_mlp=hc["intermediate_size"],
        pos="rope",
        rope_layout="halves",
        rope_base=rope_theta(params, hc["rotary_emb_base"]),
        rotary_dim=rotary(params, "rotary_pct", hc["rotary_pct"], width // heads),
        parallel_attn_mlp=hc["use_parallel_residual"],
        norm="pre",
        mlp="plain",
        activation=ACTIVATIONS[hc["hidden_act"]],
        bias=True,
        unembed_bias=False,
        tie_embeddings=hc["tie_word_embeddings"],
        dropout_embed=hc["hidden_dropout"],
        dropout_resid=hc["hidden_dropout"],
        dropout_attn=hc["attention_dropout"],
        ln_eps=hc["layer_norm_eps"],
    )


def per_head_rows(n_heads: int, d_head: int) -> list[tuple[int, int]]:
    """query_key_value's rows [h][q, k, v][d_head] as W_QKV wants them: q of every head, then k, then v."""
    width = 3 * d_head  # one head's q, k and v rows
    return [(h * width + j * d_head, h * width + (j + 1) * d_head) for j in range(3) for h in range(n_heads)]


def weight_map(cfg: ModelConfig, names) -> dict:
    """qkv name -> (how, stored names[, rows]), each found by its name in GPTNeoXModel (with or without
    GPTNeoXForCausalLM's "gpt_neox." prefix); the unembedding is hub/read.unembedding's."""
    prefixes = ("gpt_neox.", "")
    one = lambda name: names.one(name, prefixes)
    plan = {"embed.weight": one("embed_in.weight")}
    regroup = per_head_rows(cfg.n_heads, cfg.d_head)
    for i in range(cfg.n_layers):
        q, h = f"blocks.{i}.", f"layers.{i}."
        for part in ("weight", "bias"):
            plan[q + f"ln1.{part}"] = one(h + f"input_layernorm.{part}")
            qkv = h + f"attention.query_key_value.{part}"
            plan[q + f"attn.W_QKV.{part}"] = names.rows(qkv, prefixes, 3 * cfg.n_heads * cfg.d_head, regroup)
            plan[q + f"attn.W_O.{part}"] = one(h + f"attention.dense.{part}")
            plan[q + f"ln2.{part}"] = one(h + f"post_attention_layernorm.{part}")
            plan[q + f"mlp.fc_in.{part}"] = one(h + f"mlp.dense_h_to_4h.{part}")
            plan[q + f"mlp.fc_out.{part}"] = one(h + f"mlp.dense_4h_to_h.{part}")
    for part in ("weight", "bias"):
        plan[f"ln_final.{part}"] = one(f"final_layer_norm.{part}")
    return plan


ADAPTER = Adapter(
    titles=("GPT-NeoX", "Pythia"),
    model_types=("gpt_neox",),
    config=neox_config,
    weights=weight_map,
    tokenizer=read_tokenizer,  # tokenizer.json: byte-level BPE
    tokenizer_files=("tokenizer.json", "tokenizer_config.json"),
    # the causal mask and RoPE's frequencies, which older files store as buffers and qkv computes
    ignored=r"(^|\.)attention\.(bias|masked_bias|rotary_emb\.inv_freq)$",
    order=3,
    head="embed_out.weight",
)
