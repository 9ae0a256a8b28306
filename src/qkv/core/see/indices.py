"""Which layer, which head, which token: one rule for every index a user gives qkv.

An index into n things is an integer i with -n <= i < n; a negative one counts from the end, as in
Python (-1 is the last layer, the last token). It comes back made non-negative. Anything else (a
float, a bool, a string, a number out of range) is a TextError: one line that names the range.
The CLI, the server, the figures, the analyses and the trace's shorthand all check with these.
"""

from __future__ import annotations

import operator

from qkv.core.io.refusal import Refusal, phrase
from qkv.core.spec.config import ModelConfig
from qkv.core.spec.family import family_of


class TextError(Refusal):
    """What the user gave cannot be shown: an index out of range, a text that is empty, too long
    for n_ctx, or holds what the tokenizer does not know. The server answers it with a 400."""


def check_index(value, n: int, what: str, unit) -> int:
    """value as an index into n things (`unit` says what they are: phrase("errors.unit_tokens", n=5),
    "the text has 5 tokens"; a plain string is said as it is in every language). Any
    integer type is one (numpy's, a 0-d integer tensor: what operator.index accepts), a bool is not."""
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)
    except TypeError:
        raise TextError.of("errors.index_type", what=_named(what), value=repr(value)) from None
    if not -n <= value < n:
        raise TextError.of("errors.index_range", what=_named(what), value=value, unit=unit, last=n - 1, neg=-n)
    return value % n


def _named(what: str):
    """How a sentence names the index: layer, head, or token (a position: 位置 in Chinese)."""
    return phrase(f"errors.what_{what}") if what in ("layer", "head", "token") else what


def check_layer_head(cfg: ModelConfig, layer, head, stack: str | None = None) -> tuple[int | None, int | None]:
    """(layer, head) of a model with this config, each checked and made non-negative (None stays None).

    layer counts the blocks of `stack` ("encoder" or "decoder" in an encoder-decoder; None: the
    family's last stack, the one that writes the output)."""
    s = family_of(cfg).stack(stack)
    n_layers = getattr(cfg, s.layers)
    layers = (
        phrase("errors.unit_stack_layers", stack=phrase(f"errors.stack_{s.name}"), n=n_layers)
        if s.name
        else phrase("errors.unit_layers", n=n_layers)
    )
    return (
        None if layer is None else check_index(layer, n_layers, "layer", layers),
        None if head is None else check_index(head, cfg.n_heads, "head", phrase("errors.unit_heads", n=cfg.n_heads)),
    )


def check_heads(cfg: ModelConfig, heads) -> list[tuple[int, int]]:
    """[(layer, head), ...] checked and sorted, each pair once."""
    out = set()
    for pair in heads:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TextError.of("errors.head_pair", pair=repr(pair))
        layer, head = check_layer_head(cfg, pair[0], pair[1])
        if layer is None or head is None:  # a pair names both (check_layer_head passes None through)
            raise TextError.of("errors.head_pair", pair=repr(pair))
        out.add((layer, head))
    return sorted(out)


def check_token(token, T: int) -> int:
    """A query position in a text of T tokens."""
    return check_index(token, T, "token", phrase("errors.unit_tokens", n=T))
