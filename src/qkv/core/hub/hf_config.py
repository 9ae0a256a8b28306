"""What a Hugging Face config.json may say, field by field, and the qkv ModelConfig it becomes.

Every field qkv reads has a check and the words that say what it must be; a config that fails one
is a ValueError naming the field, its value and what it must be (`field 'n_layer' must be an integer
from 1 to 1,024; got 5000`). The ranges are ModelConfig's, named by the Hugging Face field's own name.
The defaults are the values transformers leaves out of config.json.
"""

from __future__ import annotations

import math
import types

from qkv.core.hub.gpt2 import ACT_FROM_HF, config_from_hf
from qkv.core.spec.config import ModelConfig

# what transformers leaves out of config.json when a value is its default
_GPT2_DEFAULTS = dict(
    vocab_size=50257,
    n_positions=1024,
    n_embd=768,
    n_layer=12,
    n_head=12,
    n_inner=None,
    activation_function="gelu_new",
    resid_pdrop=0.1,
    embd_pdrop=0.1,
    attn_pdrop=0.1,
    layer_norm_epsilon=1e-5,
    scale_attn_weights=True,
    scale_attn_by_inverse_layer_idx=False,
    tie_word_embeddings=True,
)
_BERT_DEFAULTS = dict(
    vocab_size=30522,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    hidden_act="gelu",
    hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1,
    max_position_embeddings=512,
    type_vocab_size=2,
    layer_norm_eps=1e-12,
    position_embedding_type="absolute",
    is_decoder=False,
)
_BERT_ACT = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "relu": "relu"}


# Every field qkv reads, and what it must be: (check, what the message says it must be). The ranges are
# ModelConfig's: a field out of one is named here by its own name, not by the ModelConfig field it becomes.
def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:  # finite: Python's json reads NaN and Infinity
    return _is_int(v) or isinstance(v, float) and math.isfinite(v)


def _integer(low: int, high: int):
    return lambda v: _is_int(v) and low <= v <= high, f"an integer from {low:,} to {high:,}"


def _one_of(*choices: str):
    return lambda v: isinstance(v, str) and v in choices, "one of " + ", ".join(choices)


def _or_null(check):
    ok, wants = check
    return lambda v: v is None or ok(v), f"{wants}, or null"


_PROBABILITY = (lambda v: _is_number(v) and 0 <= v < 1, "a number in [0, 1)")
_EPSILON = (lambda v: _is_number(v) and 0 <= v <= 1, "a number in [0, 1]")
_BOOL = (lambda v: isinstance(v, bool), "true or false")
_COMMON_FIELDS = {
    "model_type": (lambda v: v is None or isinstance(v, str), "a string"),
    "architectures": (
        lambda v: v is None or isinstance(v, list) and all(isinstance(a, str) for a in v),
        "a list of class names (strings)",
    ),
}
_GPT2_FIELDS = {
    "vocab_size": _integer(1, 10_000_000),
    "n_positions": _integer(1, 1_000_000),
    "n_embd": _integer(1, 65536),
    "n_layer": _integer(1, 1024),
    "n_head": _integer(1, 4096),
    "n_inner": _or_null(_integer(1, 1 << 20)),  # null: 4 * n_embd
    "activation_function": _one_of(*ACT_FROM_HF),
    "resid_pdrop": _PROBABILITY,
    "embd_pdrop": _PROBABILITY,
    "attn_pdrop": _PROBABILITY,
    "layer_norm_epsilon": _EPSILON,
    "scale_attn_weights": _BOOL,
    "scale_attn_by_inverse_layer_idx": _BOOL,
    "tie_word_embeddings": _BOOL,
}
_BERT_FIELDS = {
    "vocab_size": _integer(1, 10_000_000),
    "hidden_size": _integer(1, 65536),
    "num_hidden_layers": _integer(1, 1024),
    "num_attention_heads": _integer(1, 4096),
    "intermediate_size": _integer(1, 1 << 20),
    "hidden_act": _one_of(*_BERT_ACT),
    "hidden_dropout_prob": _PROBABILITY,
    "attention_probs_dropout_prob": _PROBABILITY,
    "max_position_embeddings": _integer(1, 1_000_000),
    "type_vocab_size": _integer(1, 1024),  # transformers' BertModel looks up token type 0 whatever the input
    "layer_norm_eps": _EPSILON,
    "position_embedding_type": _one_of("absolute"),
    "is_decoder": (lambda v: v is False, "false (a BERT decoder masks the future; qkv's Encoder does not)"),
}


def _checked(hc: dict, fields: dict, defaults: dict | None = None, divisible: tuple[str, str] | None = None) -> dict:
    """hc with the defaults transformers leaves out filled in, every field of `fields` checked: a
    ValueError naming the first wrong field (and `divisible`: width, heads, when heads do not divide it)."""
    hc = {**(defaults or {}), **hc}
    for name, (ok, wants) in fields.items():
        if name not in hc:  # no default either: a field every config of the family writes
            raise ValueError(f"field {name!r} is missing (it must be {wants})")
        if not ok(hc.get(name)):
            shown = repr(hc.get(name))
            raise ValueError(f"field {name!r} must be {wants}; got {shown if len(shown) <= 40 else shown[:37] + '...'}")
    if divisible:
        width, heads = divisible
        if hc[width] % hc[heads]:
            raise ValueError(f"field {width!r} ({hc[width]}) is not divisible by {heads!r} ({hc[heads]})")
    return hc


def max_seq_length(conf: dict, n_ctx: int) -> int:
    """sentence_bert_config.json's max_seq_length: where a sentence-transformers model cuts its inputs,
    at most n_ctx (max_position_embeddings), since a longer input does not fit the model."""
    return _checked(conf, {"max_seq_length": _integer(1, n_ctx)})["max_seq_length"]


def check_common(hc: dict) -> None:
    """The fields every family's config may hold (model_type, architectures), checked."""
    _checked(hc, _COMMON_FIELDS, {"model_type": None, "architectures": None})  # either may be left out


def gpt2_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a transformers GPT2Config (as a dict), every field checked."""
    return config_from_hf(types.SimpleNamespace(**_checked(hc, _GPT2_FIELDS, _GPT2_DEFAULTS, ("n_embd", "n_head"))))


def bert_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a transformers BertConfig (as a dict), every field checked."""
    hc = _checked(hc, _BERT_FIELDS, _BERT_DEFAULTS, ("hidden_size", "num_attention_heads"))
    return ModelConfig(
        arch="bert",
        d_vocab=hc["vocab_size"],
        n_ctx=hc["max_position_embeddings"],
        d_model=hc["hidden_size"],
        n_heads=hc["num_attention_heads"],
        n_layers=hc["num_hidden_layers"],
        d_mlp=hc["intermediate_size"],
        pos="learned",
        norm="post",
        causal=False,
        n_token_types=hc["type_vocab_size"],
        dropout_embed=hc["hidden_dropout_prob"],
        dropout_resid=hc["hidden_dropout_prob"],
        dropout_attn=hc["attention_probs_dropout_prob"],
        bias=True,
        unembed_bias=False,
        activation=_BERT_ACT[hc["hidden_act"]],
        ln_eps=hc["layer_norm_eps"],
    )
