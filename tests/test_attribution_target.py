"""An empty attribution target is refused in attribution's own words (not patching's "the answer and the
wrong word"), in English and Chinese; patching keeps its own."""

from __future__ import annotations

import pytest
import torch

from qkv import GPT, ModelConfig, WordTokenizer
from qkv.analysis.attribution import logit_attribution
from qkv.analysis.inputs import token_id
from qkv.core.io.refusal import Refusal
from qkv.presentation.i18n import say_error


@pytest.fixture(scope="module")
def tiny():
    tok = WordTokenizer.train("我 吃了 苹果 ， 味道 很 甜 。")
    torch.manual_seed(0)
    return GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=8, d_model=16, n_heads=2, n_layers=1)).eval(), tok


def test_an_empty_target_is_said_as_attribution_says_it(tiny):
    model, tok = tiny
    with pytest.raises(Refusal) as e:
        logit_attribution(model, tok.encode("我 吃了 苹果"), token="", tokenizer=tok)
    assert e.value.key == "outputs.target_empty"
    en, zh = say_error(e.value, "en"), say_error(e.value, "zh")
    assert "attribution" in en and "answer" not in en and "wrong word" not in en
    assert "归因" in zh and "错误词" not in zh


def test_patching_keeps_its_own_words(tiny):
    _, tok = tiny
    with pytest.raises(Refusal) as e:
        token_id(tok, "")
    assert e.value.key == "patching.word_empty"
