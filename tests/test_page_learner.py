"""What issue 32's learner met on the page, checked below the browser: the head labels are shown only
where a head stands out (routes_heads, head_roles), with the measured roles (the cue head) beside the
detector's; the compare document says which sense the model's own prediction points to, and that a word
at position 0 sees nothing before it (qkv.analysis.sense_prediction). The page's side is in
tests/test_web_browser_pagelearn.py."""

from __future__ import annotations

import pytest
import torch
from fastapi.testclient import TestClient

from qkv.analysis.sense_prediction import closes_line, default_groups, sense_prediction
from qkv.analysis.word_similarity import compare
from qkv.apps.web.head_roles import FLOOR, RATIO, stands_out
from qkv.apps.web.routes_heads import head_labels
from qkv.apps.web.server import create_app
from qkv.core.model import make_model
from qkv.core.spec.config import ModelConfig
from qkv.core.text.tokenizers import train_tokenizer


@pytest.fixture(scope="module")
def bundled():
    from qkv.core.hub.bundled import default_ckpt
    from qkv.core.train.checkpoint import load

    model, tok = load(default_ckpt())
    return model.eval(), tok


def test_stands_out_needs_both_the_ratio_and_the_floor():
    assert stands_out(RATIO * 0.1, 0.1) and stands_out(FLOOR, FLOOR / RATIO)
    assert not stands_out(0.117, 0.071)  # the bundled model's best "previous token" head on random tokens
    assert not stands_out(0.29, 0.01)  # far above an even spread, but under a third of the weight
    assert not stands_out(0.5, 0.2)  # half the weight, where an even head already gives 0.2


@pytest.mark.slow
def test_the_bundled_model_shows_no_detector_label_and_its_cue_head(bundled):
    model, tok = bundled
    doc = head_labels(model, tok)
    assert doc["stand_out"] == {"ratio": RATIO, "floor": FLOOR}
    for row in doc["labels"]:
        for lab in row:
            base = doc["baselines"][lab["category"]]
            assert lab["shown"] == stands_out(lab["mass"], base)
            assert lab["ratio"] == pytest.approx(lab["mass"] / base)
    # every head reads "previous token" 0.08-0.12 on random tokens, 1.1-1.7x an even head: none stands out
    assert not any(lab["shown"] for row in doc["labels"] for lab in row)
    roles = doc["roles"]
    assert roles["labels"] is not None and roles["categories"] == ["cue", "previous", "start", "self"]
    cue = [(lab["masses"]["cue"], L, h) for L, row in enumerate(roles["labels"]) for h, lab in enumerate(row)]
    mass, L, h = max(cue)
    lab = roles["labels"][L][h]
    assert lab["category"] == "cue" and lab["shown"] and mass > RATIO * roles["baseline"]
    for row in roles["labels"]:
        for lab in row:
            assert lab["shown"] == stands_out(lab["mass"], roles["baseline"])
    assert roles["names"]["zh"]["cue"]["short"] and roles["names"]["en"]["cue"]["short"] == "cue verb"


def test_an_encoder_gets_no_roles_and_says_why():
    encoder = make_model(
        ModelConfig(arch="bert", causal=False, norm="post", d_vocab=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    )
    doc = head_labels(encoder, None)
    assert doc["roles"]["labels"] is None and set(doc["roles"]["why_lang"]) == {"en", "zh"}


def test_closes_line():
    assert closes_line("，") and closes_line("\n") and closes_line("。") and closes_line(" ")
    assert not closes_line("味道") and not closes_line("a,") and not closes_line("")


def test_default_groups_are_the_corpus_sense_words():
    food, company = default_groups("苹果")
    assert "味道" in food and "股价" in company and default_groups("桌子") == []


@pytest.mark.slow
def test_the_prediction_points_to_each_sentences_sense(bundled):
    model, tok = bundled
    doc = compare(model, tok, "我 昨天 吃了 苹果", "我 上周 投资了 苹果", "苹果")
    pr = doc["prediction"]
    assert pr["available"] and pr["causal"] and pr["first"] == [False, False]
    assert pr["a"]["leans"] == 0 and pr["b"]["leans"] == 1  # food words in A, company words in B
    assert pr["a"]["ratio"] > 10 and pr["b"]["ratio"] > 10
    # the numbers are the model's: the comma it writes first, then the softmax after it, summed per group
    ids = doc["a"]["tokens"]
    step = pr["a"]["step"]
    assert step is not None and step["token"] == "，" and step["p"] > 0.8
    with torch.no_grad():
        full = tok.encode("我 昨天 吃了 苹果 ，")
        P = torch.softmax(model(torch.tensor([full]))[0, -1].double(), -1)
    want = sum(float(P[tok.encode(w)[0]]) for w in pr["a"]["groups"][0]["words"])
    assert pr["a"]["groups"][0]["p"] == pytest.approx(want, rel=1e-6) and len(ids) == 4


@pytest.mark.slow
def test_a_word_at_position_0_is_said_to_see_nothing_before_it(bundled):
    model, tok = bundled
    doc = compare(model, tok, "苹果 的 味道", "苹果 公司 的 股价", "苹果")
    pr = doc["prediction"]
    assert pr["first"] == [True, True]
    assert pr["a"]["top"] == pr["b"]["top"]  # nothing of either sentence reaches position 0
    assert all(st["cosine"] == pytest.approx(1.0, abs=1e-5) for st in doc["stages"])


def test_sense_groups_through_the_endpoint_and_their_bounds():
    tok = train_tokenizer("word", "i ate an apple . we ate a pear . they sold the apple shares .\n", whitespace=True)
    torch.manual_seed(0)
    model = make_model(ModelConfig(d_vocab=tok.vocab_size, n_ctx=32, d_model=16, n_heads=2, n_layers=2)).eval()
    c = TestClient(create_app(model, tok), base_url="http://127.0.0.1:8000")
    body = {"a": "i ate an apple", "b": "they sold the apple", "word": "apple", "senses": [["pear"], ["shares"]]}
    doc = c.post("/api/compare", json=body).json()
    pr = doc["prediction"]
    assert [g["words"] for g in pr["a"]["groups"]] == [["pear"], ["shares"]]
    ids = tok.encode("i ate an apple")
    direct = sense_prediction(model, tok, ids, len(ids) - 1, [["pear"], ["shares"]])
    assert pr["a"]["groups"][0]["p"] == pytest.approx(direct["groups"][0]["p"])
    assert c.post("/api/compare", json={**body, "senses": [["a"]] * 5}).status_code == 422
    assert c.post("/api/compare", json={**body, "senses": [["a"] * 9]}).status_code == 422
