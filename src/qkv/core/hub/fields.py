"""What a Hugging Face config.json may say, field by field: the checks every family's adapter uses.

A check is a pair (ok, wants): ok(value) says whether the value will do, `wants` is the catalogued
phrase (area "hub") that says what it must be. `checked(hc, fields, defaults)` fills in what
transformers leaves out of config.json (the family's defaults), then checks every field of `fields` by
its own name: a config that fails one is a refusal naming the field, its value and what it must be
(`field 'n_layer' must be an integer from 1 to 1,024; got 5000`). The ranges each family gives are
ModelConfig's, named by the Hugging Face field.
"""

from __future__ import annotations

import math

from qkv.core.io.refusal import Refusal, phrase


def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v) -> bool:  # finite: Python's json reads NaN and Infinity
    return is_int(v) or isinstance(v, float) and math.isfinite(v)


def integer(low: int, high: int):
    return lambda v: is_int(v) and low <= v <= high, phrase("hub.wants_integer", low=f"{low:,}", high=f"{high:,}")


def one_of(*choices: str):
    return lambda v: isinstance(v, str) and v in choices, phrase("hub.wants_one_of", choices=list(choices))


def or_null(check):
    ok, wants = check
    return lambda v: v is None or ok(v), phrase("hub.wants_or_null", wants=wants)


def number(low: float, high: str):
    """A finite number from low to high (high as the message writes it: "1e12")."""
    return lambda v: is_number(v) and low <= v <= float(high), phrase("hub.wants_number", low=low, high=high)


def exactly(value, wants):
    """This value and no other; `wants` is the phrase that says it (and why)."""
    return lambda v: v == value, wants


PROBABILITY = (lambda v: is_number(v) and 0 <= v < 1, phrase("hub.wants_probability"))
EPSILON = (lambda v: is_number(v) and 0 <= v <= 1, phrase("hub.wants_epsilon"))
BOOL = (lambda v: isinstance(v, bool), phrase("hub.wants_bool"))
OBJECT_OR_NULL = (lambda v: v is None or isinstance(v, dict), phrase("hub.wants_object_or_null"))
SIZES = {  # the widths and counts every family but GPT-2 names alike in config.json (ModelConfig's ranges)
    "vocab_size": integer(1, 10_000_000),
    "hidden_size": integer(1, 65536),
    "intermediate_size": integer(1, 1 << 20),
    "num_hidden_layers": integer(1, 1024),
    "num_attention_heads": integer(1, 4096),
    "max_position_embeddings": integer(1, 10_000_000),
}
KV_HEADS = or_null(integer(1, 4096))  # num_key_value_heads: None (as many as the query heads) or a count
COMMON = {  # the fields every family's config may hold; either may be left out
    "model_type": (lambda v: v is None or isinstance(v, str), phrase("hub.wants_string")),
    "architectures": (
        lambda v: v is None or isinstance(v, list) and all(isinstance(a, str) for a in v),
        phrase("hub.wants_class_names"),
    ),
}


def shown(value) -> str:
    """A value as a refusal shows it: its repr, cut at 40 characters."""
    said = repr(value)
    return said if len(said) <= 40 else said[:37] + "..."


def wrong(name: str, wants, value) -> Refusal:
    """The refusal of field `name`, whose `value` is not what it must be."""
    return Refusal.of("hub.field_wrong", name=repr(name), wants=wants, got=shown(value))


def checked(hc: dict, fields: dict, defaults: dict | None = None, divisible: tuple[str, str] | None = None) -> dict:
    """hc with the defaults transformers leaves out filled in, every field of `fields` checked: a
    refusal naming the first wrong field (and `divisible`: width, heads, when heads do not divide it)."""
    hc = {**(defaults or {}), **hc}
    for name, (ok, wants) in fields.items():
        if name not in hc:  # no default either: a field every config of the family writes
            raise Refusal.of("hub.field_missing", name=repr(name), wants=wants)
        if not ok(hc.get(name)):
            raise wrong(name, wants, hc.get(name))
    if divisible:
        width, heads = divisible
        if hc[width] % hc[heads]:
            raise Refusal.of("hub.not_divisible", width=repr(width), w=hc[width], heads=repr(heads), h=hc[heads])
    return hc


def check_common(hc: dict) -> None:
    """The fields every family's config may hold (model_type, architectures), checked."""
    checked(hc, COMMON, {"model_type": None, "architectures": None})
