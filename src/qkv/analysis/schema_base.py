"""The pieces every qkv JSON Schema is built of (analysis.schema, analysis.schema_interventions)."""

from __future__ import annotations

from qkv.core.io.document import FORMAT, VERSION

num = {"type": ["number", "null"]}
vec = {"type": "array", "items": num}
mat = {"type": "array", "items": vec}
integer = {"type": "integer"}
string = {"type": "string"}
ints = {"type": "array", "items": integer}
strs = {"type": "array", "items": string}
# core.finite.dumps: the numbers written as null because they were NaN or infinite
NON_FINITE = {"type": "object", "required": ["count", "first"], "properties": {"count": integer, "first": string}}


def kind_schema(kind: str, required: dict, optional: dict | None = None) -> dict:
    """A document of `kind`: the format header, the required fields and the optional ones."""
    props = {
        "format": {"const": FORMAT},
        "version": {"const": VERSION},
        "kind": {"const": kind},
        **required,
        **(optional or {}),
        "non_finite": NON_FINITE,
    }
    return {"type": "object", "required": ["format", "version", "kind", *required], "properties": props}
