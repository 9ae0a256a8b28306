"""The context lesson: 苹果 starts from one embedding, attention separates the senses, training makes it useful."""

import re

import numpy as np
import pytest
import torch

import qkv
from qkv.analysis import representations
from qkv.apps import lessons
from qkv.apps.lessons import context
from qkv.core.bundled import default_ckpt

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return lessons.run("context", lang="en", out=tmp_path_factory.mktemp("context"))


@pytest.fixture(scope="module")
def bundled():
    return qkv.load(default_ckpt())


def test_same_input_embedding(result):
    n = result.numbers
    assert n["embed_max_abs_diff"] == 0.0
    assert n["embed_cosine"] == pytest.approx(1.0, abs=1e-12)
    assert n["cosine"]["L0 in"] == pytest.approx(1.0, abs=1e-6)  # same position: same position vector too


def test_cosine_falls_with_depth(result):
    cos = result.numbers["cosine"]
    assert next(iter(cos)) == "embed" and list(cos)[-1].endswith("out")
    assert cos[list(cos)[-1]] < cos["embed"] - 1e-3


def test_cosine_matches_a_direct_trace(result, bundled):
    model, tok = bundled
    vecs = []
    for text in (context.FRUIT, context.COMPANY):
        ids = tok.encode(text)
        assert tok.decode(ids[-1:]) == context.WORD
        _, trace = model.run_with_trace(torch.tensor([ids]))
        vecs.append(trace["resid_post", -1][0, -1].double())
    direct = torch.nn.functional.cosine_similarity(vecs[0], vecs[1], dim=0).item()
    assert result.numbers["cosine"][list(result.numbers["cosine"])[-1]] == pytest.approx(direct, abs=1e-6)


def test_probe_reads_the_sense_after_training(result):
    n = result.numbers
    acc, untrained = n["probe_accuracy"], n["untrained_probe_accuracy"]
    assert n["n_probe_test"] >= 100 and n["n_probe_train"] >= 200
    assert acc["embed"] == pytest.approx(0.5)  # one vector per word, balanced pairs: nothing to read
    assert n["best_probe_accuracy"] == max(acc.values()) >= 0.9
    assert n["best_probe_accuracy"] > n["untrained_best_probe_accuracy"]
    assert set(acc) == set(untrained)


def test_next_word_depends_on_the_cue(result):
    n = result.numbers
    fruit, company = n["next_fruit"], n["next_company"]
    assert len(fruit) == len(company) == context.TOP
    assert fruit[0][0] != company[0][0]
    assert n["continuation_accuracy"] > 0.9 > n["untrained_continuation_accuracy"]
    # untrained: nowhere near confident, a few times the uniform 1/d_vocab at most
    assert n["untrained_next_fruit"][0][1] < 20 * n["uniform_probability"]


def test_attention_looks_at_the_cue(result):
    n = result.numbers
    trained = max(max(n["cue_weight_fruit"].values()), max(n["cue_weight_company"].values()))
    untrained = max(max(n["untrained_cue_weight_fruit"].values()), max(n["untrained_cue_weight_company"].values()))
    assert trained > untrained


def test_figures_and_text(result):
    assert [p.name for p in result.figures] == ["context_cosine.png", "context_probe.png"]
    for p in result.figures:
        assert p.exists() and p.stat().st_size > 5000
    assert result.name == "context" and result.title == lessons.title("context", "en")
    n = result.numbers
    assert f"{n['best_probe_accuracy']:.3f}" in result.headline
    assert "苹果" in result.text
    # the numbers the text quotes are the measured ones
    assert f"{n['cosine'][n['min_cosine_stage']]:.4f}, at {n['min_cosine_stage']}" in result.text
    assert (
        f"{n['continuation_accuracy']:.1%} of the cases, "
        f"the untrained one in {n['untrained_continuation_accuracy']:.1%}" in result.text
    )
    result.to_json()  # serialisable


def test_zh_text_is_chinese():
    r = lessons.run("context", lang="zh")
    assert r.lang == "zh" and r.figures == []
    assert len(re.findall(r"[\u4e00-\u9fff]", r.text)) > 300
    assert "训练" in r.text and "探针" in r.headline


def test_probe_fit_on_separable_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(float)
    predict = representations.fit_probe(X, y)
    Xt = rng.normal(size=(200, 5))
    assert np.mean(predict(Xt) == (Xt[:, 0] + 0.5 * Xt[:, 1] > 0)) > 0.95


def test_labels_come_from_the_corpus():
    train = representations.sense_examples(seed=1, n_sentences=300)
    held = representations.heldout_examples()
    assert train and all(t.split()[-1] in ("苹果", "小米", "黑莓") for t, _ in train)
    assert 0.3 < np.mean([y for _, y in train]) < 0.7
    assert len(held) % 2 == 0 and [y for _, y in held[:4]] == [False, True, False, True]  # pairs: fruit, company
    assert not {t for t, _ in held} & {t for t, _ in train}
