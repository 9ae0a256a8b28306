"""JSON Schemas of the interventions' documents: logit lens, direct logit attribution, head detector, patching."""

from __future__ import annotations

from qkv.analysis.schema_base import integer, ints, kind_schema, mat, num, string, strs, vec

_text = {"type": ["string", "null"]}  # null: no tokenizer was given
_token = {"type": "object", "required": ["id", "token"], "properties": {"id": integer, "token": _text}}
_top = {"type": "object", "required": ["id", "token", "p"], "properties": {"id": integer, "token": _text, "p": num}}
_pair = lambda items: {
    "type": "object",
    "required": ["clean", "corrupted"],
    "properties": {"clean": items, "corrupted": items},
}

LOGIT_LENS = kind_schema(
    "logit-lens",
    {
        "ids": ints,
        "tokens": {"type": ["array", "null"], "items": string},
        "position": integer,
        "k": integer,
        "final": _token,
        "layers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["layer", "name", "top"],
                "properties": {"layer": integer, "name": string, "top": {"type": "array", "items": _top}},
            },
        },
    },
)

LOGIT_ATTRIBUTION = kind_schema(
    "logit-attribution",
    {
        "ids": ints,
        "position": integer,
        "token": integer,
        "logit": num,
        "total": num,
        "rounding": num,
        "scale": num,
        "components": {
            "type": "array",
            "items": {"type": "object", "required": ["name", "value"], "properties": {"name": string, "value": num}},
        },
        "heads": mat,
        "mlp": {"type": ["array", "null"], "items": num},
        "attn_bias": {"type": ["array", "null"], "items": num},
    },
)

HEAD_SCORES = kind_schema(
    "head-scores",
    {
        "kinds": strs,
        "scores": {"type": "object", "additionalProperties": mat},
        "baselines": {"type": "object", "additionalProperties": num},
        "n_sequences": integer,
        "seq_len": integer,
        "seed": integer,
    },
)

PATCHING = kind_schema(
    "patching",
    {
        "site": {"enum": ["resid_pre", "attn_out", "mlp_out", "z"]},
        "axes": strs,
        "ids": _pair(ints),
        "tokens": _pair({"type": ["array", "null"], "items": string}),
        "values": mat,
        "normalized": {"type": "array", "items": vec},
        "clean": num,
        "corrupted": num,
    },
)

PATCH_EXAMPLE = kind_schema(  # what the page's patching panel starts with (GET /api/patch)
    "patch-example",
    {"example": {"type": ["object", "null"]}, "sites": strs},
)

INTERVENTIONS = {
    "logit-lens": LOGIT_LENS,
    "logit-attribution": LOGIT_ATTRIBUTION,
    "head-scores": HEAD_SCORES,
    "patching": PATCHING,
    "patch-example": PATCH_EXAMPLE,
}
