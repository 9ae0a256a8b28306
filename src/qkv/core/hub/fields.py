"""What a Hugging Face config.json may say, field by field: the checks every family's adapter uses.

A check is a pair (ok, wants): ok(value) says whether the value will do, `wants` is the words that say
what it must be. `checked(hc, fields, defaults)` fills in what transformers leaves out of config.json
(the family's defaults), then checks every field of `fields` by its own name: a config that fails one is
a ValueError naming the field, its value and what it must be (`field 'n_layer' must be an integer from
1 to 1,024; got 5000`). The ranges each family gives are ModelConfig's, named by the Hugging Face field.
"""

from __future__ import annotations

import math


def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v) -> bool:  # finite: Python's json reads NaN and Infinity
    return is_int(v) or isinstance(v, float) and math.isfinite(v)


def integer(low: int, high: int):
    return lambda v: is_int(v) and low <= v <= high, f"an integer from {low:,} to {high:,}"


def one_of(*choices: str):
    return lambda v: isinstance(v, str) and v in choices, "one of " + ", ".join(choices)


def or_null(check):
    ok, wants = check
    return lambda v: v is None or ok(v), f"{wants}, or null"


PROBABILITY = (lambda v: is_number(v) and 0 <= v < 1, "a number in [0, 1)")
EPSILON = (lambda v: is_number(v) and 0 <= v <= 1, "a number in [0, 1]")
BOOL = (lambda v: isinstance(v, bool), "true or false")
COMMON = {  # the fields every family's config may hold; either may be left out
    "model_type": (lambda v: v is None or isinstance(v, str), "a string"),
    "architectures": (
        lambda v: v is None or isinstance(v, list) and all(isinstance(a, str) for a in v),
        "a list of class names (strings)",
    ),
}


def checked(hc: dict, fields: dict, defaults: dict | None = None, divisible: tuple[str, str] | None = None) -> dict:
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


def check_common(hc: dict) -> None:
    """The fields every family's config may hold (model_type, architectures), checked."""
    checked(hc, COMMON, {"model_type": None, "architectures": None})
