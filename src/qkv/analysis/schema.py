"""The JSON that qkv writes (attend, explain, trace, check, and the explorer's view, compare, model,
generate, origin, ablate, side, vocab, transform; for a translation model explain's "translation" and
the explorer's "translation-view"; the interventions' logit-lens, logit-attribution, head-scores and
patching: analysis.schema_interventions): one versioned format, as JSON Schema.

Every document has {"format": "qkv-explain", "version": 1, "kind": ...}; docs/trace-format.md
describes the fields in prose. `validate(doc)` checks a document (needs the jsonschema package).
"""

from __future__ import annotations

from qkv.analysis.schema_base import integer as _int
from qkv.analysis.schema_base import ints as _ints
from qkv.analysis.schema_base import kind_schema as _kind
from qkv.analysis.schema_base import mat as _mat
from qkv.analysis.schema_base import num as _num
from qkv.analysis.schema_base import string as _str
from qkv.analysis.schema_base import strs as _strs
from qkv.analysis.schema_base import vec as _vec
from qkv.analysis.schema_interventions import INTERVENTIONS

ATTEND = _kind(
    "attend",
    {
        "n": _int,
        "d_v": _int,
        "q": _vec,
        "K": _mat,
        "V": _mat,
        "d_k": _num,
        "sqrt_d_k": _num,
        "dot_terms": _mat,
        "dots": _vec,
        "scores": _vec,
        "max_score": _num,
        "shifted": _vec,
        "exps": _vec,
        "total": _num,
        "exps_shifted": _vec,
        "total_shifted": _num,
        "weights": _vec,
        "contributions": _mat,
        "z": _vec,
        "hull": {
            "type": "object",
            "required": ["inside", "distance", "weights"],
            "properties": {"inside": {"type": "boolean"}, "distance": _num, "weights": _vec},
        },
        "display": {"type": "object"},
        "latex": {"type": "object"},
    },
)

_token_row = {"type": "object", "required": ["pos", "token"], "properties": {"pos": _int, "token": _str}}

# what every document's "model" says of its family (analysis.explain.model_fields, core.models.family)
_FAMILY = {
    "design": {"enum": ["decoder", "encoder", "encoder-decoder"]},
    "has_lm_head": {"type": "boolean"},
    "generates": {"type": "boolean"},
    "translates": {"type": "boolean"},
}


# what the weights are, and every number was computed in (--dtype; absent in documents written before it)
_DTYPE = {"dtype": {"enum": ["float32", "bfloat16", "float16", "float64"]}}


def _model_of(required: list[str], **properties) -> dict:
    return {"type": "object", "required": [*required, *_FAMILY], "properties": {**_FAMILY, **_DTYPE, **properties}}


EXPLAIN = _kind(
    "explain",
    {
        "lang": {"enum": ["zh", "en"]},
        "mode": {"enum": ["head", "summary"]},
        "text": _str,
        "cropped": _int,
        "tokens": {"type": "array", "items": _str},
        "ids": {"type": "array", "items": _int},
        "token": _int,
        "query": _str,
        "layer": {"type": ["integer", "null"]},
        "head": {"type": ["integer", "null"]},
        "model": _model_of(["n_layers", "n_heads", "d_model", "d_head", "n_ctx"]),
        "next": {
            "type": ["object", "null"],
            "required": ["position", "top"],  # null: a model without LM head (an encoder)
            "properties": {
                "top": {"type": "array", "items": {"type": "object", "required": ["rank", "id", "token", "prob"]}}
            },
        },
    },
    {
        "attention": {
            "type": "object",
            "required": ["scale", "argmax", "rows"],
            "properties": {
                "rows": {
                    "type": "array",
                    "items": {**_token_row, "required": ["pos", "token", "dot", "scaled", "weight"]},
                }
            },
        },
        "z": {"type": "object", "required": ["norm", "first", "values"]},
        "residual": {"type": "object", "required": ["x", "head_out", "attn_out"]},
        "heads": {
            "type": "array",
            "items": {"type": "object", "required": ["layer", "head", "top_pos", "top_weight", "entropy_bits"]},
        },
    },
)

_words = {
    "type": "object",
    "required": ["tokens", "ids"],
    "properties": {"tokens": {"type": "array", "items": _str}, "ids": {"type": "array", "items": _int}},
}
_key_row = {"type": "object", "required": ["pos", "token", "dot", "weight"], "properties": {"pos": _int, "token": _str}}

TRANSLATION = _kind(
    "translation",
    {
        "lang": {"enum": ["zh", "en"]},
        "text": _str,
        "translation": _str,
        "translated": {"type": "boolean"},
        "finished": {"type": "boolean"},
        "source": _words,
        "target": {**_words, "required": ["tokens", "ids", "written", "written_ids"]},
        "layer": _int,
        "head": _int,
        "head_choice": {"enum": ["given", "sharpest"]},
        "token": _int,
        "query": _str,
        "query_reads": _str,
        "model": _model_of(
            ["n_layers", "n_encoder_layers", "n_heads", "d_model", "d_head", "n_ctx"], translates={"const": True}
        ),
        "heads": {"type": "array", "items": {"type": "object", "required": ["head", "entropy_bits"]}},
        "max_entropy_bits": _num,
        "reads": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "pos",
                    "token",
                    "reads",
                    "top_pos",
                    "top_token",
                    "top_weight",
                    "mean_top_pos",
                    "mean_top_token",
                    "mean_top_weight",
                    "rows",
                ],
                "properties": {"rows": {"type": "array", "items": _key_row}},
            },
        },
        "attention": EXPLAIN["properties"]["attention"],
        "z": {
            "type": "object",
            "required": ["norm", "first", "values", "hull"],
            "properties": {"hull": {"type": "object", "required": ["inside", "distance"]}},
        },
        "residual": EXPLAIN["properties"]["residual"],
        "next": {"type": "object", "required": ["position", "top", "actual"]},
    },
)

_activation = {
    "type": "object",
    "required": ["shape", "data"],
    "properties": {"shape": {"type": "array", "items": _int}, "data": _vec},
}

CHECK = _kind(
    "check",
    {
        "training": {"type": "boolean"},
        "passed": {"type": "boolean"},
        "tolerance": _num,
        "weights_finite": {"type": "boolean"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "layer", "passed", "worst", "checked", "failures"],
                "properties": {"passed": {"type": "boolean"}, "worst": _num, "checked": _int},
            },
        },
    },
    {"weights": _str},
)

TRACE = _kind(
    "trace",
    {
        "config": {"type": "object", "required": ["d_vocab", "n_ctx", "d_model", "n_heads", "d_head", "n_layers"]},
        "ids": {"type": "array", "items": _int},
        "tokens": {"type": ["array", "null"], "items": _str},
        "training": {"type": "boolean"},
        "activations": {"type": "object", "additionalProperties": _activation},
    },
    {"check": CHECK},
)

_packed = {
    "type": "object",
    "required": ["dtype", "shape", "data"],
    "additionalProperties": False,
    "properties": {
        "dtype": {"enum": ["float32", "int32"]},
        "shape": {"type": "array", "items": _int},
        "layout": {"const": "lower"},
        "data": {"type": "string", "contentEncoding": "base64"},
    },
}
_model = _model_of(
    ["n_layers", "n_heads", "d_model", "d_head", "n_ctx", "d_vocab", "norm", "pos", "causal", "tokenizer"],
    parameters=_int,
    weights_bytes={"type": ["integer", "null"]},
    loaded_from={
        "type": "object",
        "required": ["name", "path", "architecture"],
        "properties": {k: {"type": ["string", "null"]} for k in ("name", "path", "architecture", "title")},
    },
)
VIEW_ARRAYS = (
    "dots",
    "pattern",
    "v_norm",
    "v_first",
    "z_norm",
    "z_first",
    "v_2d",
    "z_2d",
    "kept_2d",
    "head_out_norm",
    "x_norm",
    "attn_out_norm",
    "x_plus_attn_norm",
    "resid_mid_norm",
    "mlp_out_norm",
    "resid_post_norm",
    "update_cos",
    "next_ids",
    "next_probs",
    "actual_prob",
    "actual_rank",
)
NEXT_ARRAYS = ("next_ids", "next_probs", "actual_prob", "actual_rank")  # absent when the model's has_lm_head is false

VIEW = _kind(
    "view",
    {
        "text": _str,
        "ids": {"type": "array", "items": _int},
        "tokens": {"type": "array", "items": _str},
        "model": _model,
        "scale": _num,
        "first": _int,
        "vocab": {"type": "object", "additionalProperties": _str},
        "arrays": {
            "type": "object",
            "required": [a for a in VIEW_ARRAYS if a not in NEXT_ARRAYS],
            "additionalProperties": _packed,
        },
    },
    {
        "special": {"type": "array", "items": _int},
        "continues": {"type": "array", "items": _int},
        # Gemma: the scores' soft-cap (scores = cap * tanh(dots / scale / cap)) and each layer's sliding window
        "soft_cap": _num,
        "windows": {"type": "array", "items": {"type": ["integer", "null"]}},
        # pieces of the text that are no word of the vocabulary (a fallback tokenizer reads them as characters or bytes)
        "unknown": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["text", "pieces", "how", "nearest"],
                "properties": {
                    "text": _str,
                    "pieces": {"type": "array", "items": _str},
                    "how": {"enum": ["chars", "bytes", "none"]},
                    "nearest": {"type": "array", "items": _str},
                },
            },
        },
    },
)
# a model with an LM head (has_lm_head absent or true) sends the next-token arrays too
VIEW["if"] = {"properties": {"model": {"properties": {"has_lm_head": {"const": False}}, "required": ["has_lm_head"]}}}
VIEW["else"] = {"properties": {"arrays": {"required": list(VIEW_ARRAYS)}}}

_part = {
    "type": "object",
    "required": ["queries", "keys", "n_layers", "causal", "stream", "arrays"],
    "properties": {
        "queries": {"enum": ["source", "target"]},
        "keys": {"enum": ["source", "target"]},
        "n_layers": _int,
        "causal": {"type": "boolean"},
        "arrays": {
            "type": "object",
            "required": [a for a in VIEW_ARRAYS if a not in NEXT_ARRAYS],
            "additionalProperties": _packed,
        },
    },
}
TRANSLATION_VIEW = _kind(
    "translation-view",
    {
        "text": _str,
        "translation": _str,
        "translated": {"type": "boolean"},
        "finished": {"type": "boolean"},
        "confidence": _num,
        "unsure": {"type": "boolean"},
        "unsure_below": _num,
        "weakest": _str,
        "left_out": {"type": "array", "items": _str},
        "honesty": {  # the words no source word yields (qkv.analysis.invented_words.honesty)
            "type": "object",
            "required": ["checked", "invented", "words", "unglossed"],
            "properties": {
                "checked": {"type": "boolean"},
                "invented": {"type": "array", "items": _int},
                "words": {"type": "array", "items": _str},
                "unglossed": {"type": "array", "items": _str},
            },
        },
        "source": _words,
        "target": {**_words, "required": ["tokens", "ids", "written", "written_ids"]},
        "default_token": _int,
        "model": {**_model, "required": [*_model["required"], "n_encoder_layers"]},
        "scale": _num,
        "first": _int,
        "vocab": {"type": "object", "additionalProperties": _str},
        "parts": {"type": "object", "required": ["cross", "decoder", "encoder"], "additionalProperties": _part},
        "arrays": {"type": "object", "required": list(NEXT_ARRAYS), "additionalProperties": _packed},
    },
)

_side = {
    "type": "object",
    "required": ["tokens", "pos"],
    "properties": {"tokens": {"type": "array", "items": _str}, "pos": _int},
}
COMPARE = _kind(
    "compare",
    {
        "word": _str,
        "a": _side,
        "b": _side,
        "stages": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["label", "name", "cosine"],
                "properties": {"label": _str, "name": _str, "cosine": _num, "cosine_pos": _num},
            },
        },
    },
    {"same_position": {"type": "boolean"}, "control": {"type": "object"}, "prediction": {"type": "object"}},
)

MODEL = _kind(
    "model",
    {
        "model": _model,
        "examples": {"type": "array", "items": _str},
        "compare": {"type": ["object", "null"], "required": ["a", "b", "word"]},
    },
)

GENERATE = _kind("generate", {"prompt": _str, "text": _str, "added": _str, "ids": {"type": "array", "items": _int}})

_text_ids = {"text": _str, "ids": _ints, "tokens": _strs}

ORIGIN = _kind(
    "origin",
    {
        **_text_ids,
        "layer": _int,
        "head": _int,
        "token": _int,
        "x_name": _str,
        "norm": _str,
        "rope": {"type": "boolean"},
        "scale": _num,
        "b_Q": _vec,
        "b_K": _vec,
        "b_V": _vec,
        "query": {"type": "object", "required": ["pos", "token", "x", "xW_Q", "q"]},
        "keys": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["pos", "token", "x", "k", "v", "product", "dot"],
                "properties": {"product": _vec, "dot": _num, "k": _vec, "v": _vec},
            },
        },
    },
)

ABLATE = _kind(
    "ablate",
    {
        **_text_ids,
        "heads": {"type": "array", "items": {"type": "array", "items": _int, "minItems": 2, "maxItems": 2}},
        "first": _int,
        "max_change": _mat,
        "next": {"type": "array", "items": {"type": "object", "required": ["pos", "rows", "moved"]}},
        "changes": {
            "type": "array",
            "items": {"type": "object", "required": ["layer", "head", "query", "key", "before", "after"]},
        },
        "patterns": {"type": "object", "required": ["first", "before", "after"]},
    },
)

SIDE = _kind(
    "side",
    {
        "a": {"type": "object"},
        "b": {"type": "object"},
        "same_length": {"type": "boolean"},
        "same_tokens": {"type": "boolean"},
        "next": {"type": "array"},
    },
)

VOCAB = _kind(
    "vocab",
    {
        "size": _int,
        "tokenizer": _str,
        "counted": {"type": "boolean"},
        "counted_from": {"type": ["string", "null"]},
        "matches": _int,
        "offset": _int,
        "tokens": {"type": "array", "items": {"type": "object", "required": ["id", "token", "kind"]}},
    },
)

TRANSFORM = _kind(
    "transform",
    {
        "layer": _int,
        "head": _int,
        "d_model": _int,
        "d_head": _int,
        "matrices": _strs,
        "trained": {"type": "object"},
        "random": {"type": "object"},
        "cloud": {"type": ["object", "null"]},
    },
)

SCHEMAS = {
    "attend": ATTEND,
    "explain": EXPLAIN,
    "translation": TRANSLATION,
    "translation-view": TRANSLATION_VIEW,
    "trace": TRACE,
    "check": CHECK,
    "view": VIEW,
    "compare": COMPARE,
    "model": MODEL,
    "generate": GENERATE,
    "origin": ORIGIN,
    "ablate": ABLATE,
    "side": SIDE,
    "vocab": VOCAB,
    "transform": TRANSFORM,
    **INTERVENTIONS,
}


def validate(doc: dict) -> None:
    """Raise jsonschema.ValidationError unless doc is a valid qkv-explain document of its kind."""
    import jsonschema

    kind = doc.get("kind") if isinstance(doc, dict) else None
    if kind not in SCHEMAS:
        raise ValueError(f"not a qkv-explain document: kind {kind!r} (expected one of {', '.join(SCHEMAS)})")
    jsonschema.validate(doc, SCHEMAS[kind])
