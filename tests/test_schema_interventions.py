"""The interventions' documents (logit lens, attribution, head scores, patching) follow their JSON Schemas."""

from __future__ import annotations

import json

import pytest
import torch

from qkv.analysis.attribution import logit_attribution
from qkv.analysis.head_scores import head_scores
from qkv.analysis.lens import lens_top
from qkv.analysis.patch import logit_diff, patch, patch_text
from qkv.analysis.schema import SCHEMAS, validate
from qkv.core.hub.bundled import default_ckpt
from qkv.core.io.finite import dumps
from qkv.core.model import make_model
from qkv.core.spec.config import ModelConfig
from qkv.core.train.checkpoint import load

jsonschema = pytest.importorskip("jsonschema")
CLEAN, CORRUPT = "我 昨天 吃了 苹果 ，", "我 上周 投资了 苹果 ，"


def documents(model, tok, ids, other):
    yield lens_top(model, ids, position=-1, k=3, tokenizer=tok)
    yield logit_attribution(model, ids, -1, None, tok).to_json()
    yield head_scores(model, tok, n_seqs=2).to_json()
    for site in ("resid_pre", "z"):
        yield patch(model, ids, other, site, logit_diff(1, 2)).to_json(tok)


def test_the_bundled_models_documents_are_valid():
    model, tok = load(default_ckpt())
    ids, other = tok.encode(CLEAN), tok.encode(CORRUPT)
    docs = list(documents(model, tok, ids, other))
    docs.append(patch_text(model, tok, CLEAN, CORRUPT, "味道", "股价", site="mlp_out").to_json(tok))
    assert {d["kind"] for d in docs} == {"logit-lens", "logit-attribution", "head-scores", "patching"} <= set(SCHEMAS)
    for doc in docs:
        validate(json.loads(dumps(doc)))  # as the page and the CLI receive it


def test_an_llm_shaped_models_documents_are_valid_and_a_broken_one_is_not():
    torch.manual_seed(0)
    cfg = ModelConfig(
        d_vocab=50,
        n_ctx=64,
        d_model=32,
        n_heads=4,
        n_kv_heads=2,
        n_layers=2,
        norm="rms",
        mlp="gated",
        activation="silu",
        pos="rope",
        rope_layout="halves",
    )
    model = make_model(cfg).eval()
    ids, other = [3, 4, 5, 6, 7], [3, 9, 5, 6, 7]
    for doc in documents(model, None, ids, other):
        validate(json.loads(dumps(doc)))
        broken = {**doc, "kind": doc["kind"]}
        broken.pop(next(k for k in doc if k not in ("format", "version", "kind")))
        with pytest.raises(jsonschema.ValidationError):
            validate(broken)
