"""Which layer, which head, which token: one rule for every index a user gives qkv.

An index into n things is an integer i with -n <= i < n; a negative one counts from the end, as in
Python (-1 is the last layer, the last token). It comes back made non-negative. Anything else (a
float, a bool, a string, a number out of range) is a TextError: one line that names the range.
The CLI, the server, the figures, the analyses and the trace's shorthand all check with these.
"""

from __future__ import annotations

import operator

from .models.family import family_of


class TextError(ValueError):
    """What the user gave cannot be shown: an index out of range, a text that is empty, too long
    for n_ctx, or holds what the tokenizer does not know. The server answers it with a 400."""


def check_index(value, n: int, what: str, unit: str) -> int:
    """value as an index into n things (`unit` says what they are: "the text has 5 tokens"). Any
    integer type is one (numpy's, a 0-d integer tensor: what operator.index accepts), a bool is not."""
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)
    except TypeError:
        raise TextError(f"{what} must be an integer; got {value!r}") from None
    if not -n <= value < n:
        raise TextError(f"{what} {value} is out of range: {unit} (use 0..{n - 1} or {-n}..-1)")
    return value % n


def check_layer_head(cfg, layer, head, stack: str | None = None) -> tuple[int | None, int | None]:
    """(layer, head) of a model with this config, each checked and made non-negative (None stays None).

    layer counts the blocks of `stack` ("encoder" or "decoder" in an encoder-decoder; None: the
    family's last stack, the one that writes the output)."""
    s = family_of(cfg).stack(stack)
    n_layers = getattr(cfg, s.layers)
    where = f"the {s.name}" if s.name else "the model"
    return (
        None if layer is None else check_index(layer, n_layers, "layer", f"{where} has {n_layers} layers"),
        None if head is None else check_index(head, cfg.n_heads, "head", f"each layer has {cfg.n_heads} heads"),
    )


def check_heads(cfg, heads) -> list[tuple[int, int]]:
    """[(layer, head), ...] checked and sorted, each pair once."""
    out = set()
    for pair in heads:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TextError(f"a head is a pair [layer, head], got {pair!r}")
        out.add(check_layer_head(cfg, pair[0], pair[1]))
    return sorted(out)


def check_token(token, T: int) -> int:
    """A query position in a text of T tokens."""
    return check_index(token, T, "token", f"the text has {T} tokens")
