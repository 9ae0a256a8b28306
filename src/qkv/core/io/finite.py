"""Numbers that are not numbers: how qkv finds them, says so, and writes them in JSON.

A diverged fine-tune leaves NaN or infinite weights, and weights ×1e30 overflow float32 within a
layer. qkv still shows such a model (the explorer is how one finds where it broke), but JSON has no
NaN: every document qkv writes goes through `dumps`, which writes a non-finite number as null and
adds one field saying so, so that a reader cannot take a null for a zero:

    "non_finite": {"count": 12, "first": "rows[0].scores[3]"}

What cannot give a meaningful answer at all (sampling from NaN probabilities, an SVD of a NaN
matrix) is refused with NonFiniteError, one line naming the first non-finite weight.
"""

from __future__ import annotations

import json
import math

import torch

from qkv.core.io.refusal import Phrase, Refusal, phrase


class NonFiniteError(Refusal):
    """The model's numbers are not finite where an answer needs them to be."""


def first_non_finite(model: torch.nn.Module) -> str | None:
    """The name of the first parameter that holds a NaN or an infinity, None if all are finite."""
    for name, p in model.named_parameters():
        if not torch.isfinite(p).all():
            return name
    return None


def weights_phrase(model: torch.nn.Module) -> Phrase | None:
    """Which weight is not finite, as a catalogued phrase (None if all are): weights_note, said in either language."""
    name = first_non_finite(model)
    if name is None:
        return None
    bad = sum(int((~torch.isfinite(p)).sum()) for p in model.parameters())
    return phrase("errors.weights_not_finite_one" if bad == 1 else "errors.weights_not_finite", bad=bad, name=name)


def weights_note(model: torch.nn.Module) -> str | None:
    """One line for `qkv info` and `qkv.check`: which weight is not finite, None if all are."""
    why = weights_phrase(model)
    return None if why is None else str(why)


def not_finite_error(what, model: torch.nn.Module | None = None) -> NonFiniteError:
    """The one-line refusal: `what` (a phrase, or plain text) holds NaN or infinite values, and which
    weight of `model` is to blame."""
    why = weights_phrase(model) if model is not None else None
    if why is None:
        return NonFiniteError.of("errors.not_finite", what=what)
    return NonFiniteError.of("errors.not_finite_because", what=what, why=why)


def require_finite(t: torch.Tensor, what, model: torch.nn.Module | None = None) -> None:
    """Raise NonFiniteError when `t` holds a NaN or an infinity (`what` says what t is)."""
    if not torch.isfinite(t).all():
        raise not_finite_error(what, model)


def arrays_note(arrays: dict[str, torch.Tensor]) -> dict | None:
    """{count, first} over arrays a document packs as bytes (where NaN survives, but a reader should
    still be told), keyed by their place in the document ("arrays.pattern"); None when all are finite."""
    count, first = 0, None
    for where, a in arrays.items():
        if a.is_floating_point():
            bad = int((~torch.isfinite(a)).sum())
            count, first = count + bad, first or (where if bad else None)
    return {"count": count, "first": first} if count else None


def _clean(obj, path: str, found: list[str]):
    """obj with every non-finite float replaced by None; the paths of those go into `found`."""
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        found.append(path)
        return None
    if isinstance(obj, dict):
        return {k: _clean(v, f"{path}.{k}" if path else str(k), found) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v, f"{path}[{i}]", found) for i, v in enumerate(obj)]
    return obj


def non_finite_note(doc) -> dict | None:
    """{count, first} of the NaN and infinite numbers in a document (a dict of lists), None if none."""
    found: list[str] = []
    _clean(doc, "", found)
    return {"count": len(found), "first": found[0]} if found else None


def dumps(doc, indent: int | None = None, separators: tuple[str, str] | None = None) -> str:
    """JSON text of a document; a non-finite number becomes null, and a dict document then gains
    "non_finite": {count, first}. Costs nothing extra when every number is finite."""
    try:
        return json.dumps(doc, ensure_ascii=False, indent=indent, separators=separators, allow_nan=False)
    except ValueError:
        found: list[str] = []
        clean = _clean(doc, "", found)
        if isinstance(clean, dict) and found:  # added to a note the document has (a view's packed arrays)
            had = clean.get("non_finite") or {"count": 0, "first": found[0]}
            clean["non_finite"] = {"count": had["count"] + len(found), "first": had["first"]}
        return json.dumps(clean, ensure_ascii=False, indent=indent, separators=separators, allow_nan=False)
