"""The explorer's head labels (GET /api/heads, routes_heads.head_labels) come from the head detector for
every model: a freshly built GPT, a random Llama-family directory (RMSNorm, grouped-query attention) and
the bundled model; an encoder gets none, and says why in one line in each language. The labels are held
against qkv.analysis.head_scores called here, and the page's document shape (labels[layer][head] =
{category, mass, masses}, names[lang][category] = {short, label}, categories, baseline, n_sentences); and
in headless Chromium, the ablate panel's grid shows them (a `qkv serve` of the bundled model)."""

from __future__ import annotations

import re

import pytest
import torch
from fastapi.testclient import TestClient
from llm_dirs import family, tokenizer  # noqa: F401 (fixtures)

from qkv.analysis.head_scores import KINDS, head_scores
from qkv.apps.web.routes_heads import head_labels
from qkv.apps.web.server import create_app
from qkv.core.model import make_model
from qkv.core.spec.config import ModelConfig
from qkv.core.text.tokenizers import train_tokenizer
from qkv.presentation.i18n import t

HAN = "\u4e00-\u9fff"


def check_against_the_detector(doc: dict, model, tok) -> None:
    s = head_scores(model, tok)  # the same defaults (seed 0, the same bound): the same sequences
    cfg = model.cfg
    assert doc["categories"] == list(KINDS) and doc["n_sentences"] == s.tokens.shape[0] == doc["n_sequences"]
    assert doc["seq_len"] == s.tokens.shape[1] and doc["baselines"] == pytest.approx(s.baselines)
    assert doc["baseline"] == pytest.approx(s.baselines["first"])
    assert len(doc["labels"]) == cfg.n_layers and all(len(row) == cfg.n_heads for row in doc["labels"])
    for L, row in enumerate(doc["labels"]):
        for h, label in enumerate(row):
            want = {k: float(s[k][L, h]) for k in KINDS}
            assert label["masses"] == pytest.approx(want, abs=1e-9)
            ratio = {k: want[k] / s.baselines[k] for k in KINDS}
            assert label["category"] == max(ratio, key=ratio.get)
            assert label["mass"] == pytest.approx(want[label["category"]], abs=1e-9)
    for lang in ("en", "zh"):
        for k in KINDS:
            assert doc["names"][lang][k] == {
                "short": t(f"interpret.short_{k}", lang),
                "label": t(f"interpret.label_{k}", lang),
            }


def test_a_freshly_built_gpt_gets_labels_through_the_endpoint():
    tok = train_tokenizer("word", "i ate an apple . we ate a pear . they sold the shares .\n", whitespace=True)
    torch.manual_seed(0)
    model = make_model(ModelConfig(d_vocab=tok.vocab_size, n_ctx=32, d_model=16, n_heads=2, n_layers=2, init_std=0.5))
    c = TestClient(create_app(model, tok), base_url="http://127.0.0.1:8000")
    doc = c.get("/api/heads").json()
    assert doc["kind"] == "head-labels" and doc["labels"] is not None
    check_against_the_detector(doc, model, tok)
    assert doc["seq_len"] == 31  # n_ctx 32: 1 + 2 x 15 tokens
    assert c.get("/api/heads").json() == doc  # measured once, the same answer


def test_a_llama_family_directory_gets_labels(family):  # noqa: F811 (the fixture)
    from qkv.core.hub.pretrained import load_pretrained

    d, _, _ = family("llama")
    model, tok = load_pretrained(d)
    assert model.cfg.norm == "rms" and model.cfg.n_kv_heads < model.cfg.n_heads
    doc = head_labels(model.eval(), tok)
    check_against_the_detector(doc, model, tok)


def test_the_bundled_model_gets_the_detectors_labels():
    from qkv.core.hub.bundled import default_ckpt
    from qkv.core.train.checkpoint import load

    model, tok = load(default_ckpt())
    doc = head_labels(model.eval(), tok)
    check_against_the_detector(doc, model, tok)
    assert "cue" not in doc["categories"]  # the lesson's own kind stays in the lesson


def test_an_encoder_gets_no_labels_and_says_why_in_each_language():
    encoder = make_model(
        ModelConfig(arch="bert", causal=False, norm="post", d_vocab=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    )
    doc = head_labels(encoder, None)
    assert doc["labels"] is None and doc["why"] and "\n" not in doc["why"]
    assert doc["why"] == doc["why_lang"]["en"] and re.search(f"[{HAN}]", doc["why_lang"]["zh"])
