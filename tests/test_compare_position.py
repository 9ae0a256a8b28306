"""The compare document's position control (qkv.analysis.word_similarity, qkv.analysis.position_mean).

cosine_pos = cos(x_a - mu(p_a), x_b - mu(p_b)), mu the mean vector of the stage at the position over
reference sentences of the corpus. Expectations come from the model at test time (the bundled
model is retrained from time to time), never from numbers seen in one run."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from qkv.analysis import position_mean
from qkv.analysis.inputs import read_text
from qkv.analysis.representations import stages, vectors_at
from qkv.analysis.word_similarity import compare
from qkv.core.hub.bundled import default_ckpt
from qkv.core.train.checkpoint import load

EAT, INVEST, EAT_SHORT = "我 昨天 吃了 苹果", "我 上周 投资了 苹果", "我 吃了 苹果"


@pytest.fixture(scope="module")
def bundled():
    return load(default_ckpt())


def _cos(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_the_means_are_the_mean_of_the_reference_vectors_read_one_by_one(monkeypatch):
    """position_means batches the reference sentences; read them one at a time and average by hand."""
    from qkv import GPT, ModelConfig
    from qkv.core.text import corpus
    from qkv.core.text.tokenizers import train_tokenizer

    text = corpus.generate(seed=3, n_sentences=200, lang="zh")
    tok = train_tokenizer("word", text, segment="none")
    torch.manual_seed(0)
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=32, d_model=32, n_heads=2, n_layers=2)).eval()
    monkeypatch.setattr(position_mean, "REF_SENTENCES", 80)
    monkeypatch.setattr(position_mean, "reference_lines", lambda: tuple(text.splitlines()))
    means = position_mean.position_means(model, tok, 8)
    seqs = position_mean._sequences(tok, position_mean.depths(model, 8), True, model.cfg.n_ctx)
    assert means.sentences == len(seqs) == 80 and all(len(s) == 8 for s in seqs)
    starts = sorted(s[0] for s in seqs)  # the 80 line starts spread evenly over the text, in some order
    assert starts == sorted(tok.encode(line)[0] for line in [text.splitlines()[k * 200 // 80] for k in range(80)])
    for p in (0, 3, 7):
        one = [vectors_at(model, [s], [p]) for s in seqs]
        for _, name in stages(model.cfg):
            direct = np.mean([v[name][0] for v in one], axis=0)
            np.testing.assert_allclose(means.at(name, p), direct, rtol=1e-5, atol=1e-6)


def test_cosine_pos_is_the_cosine_after_subtracting_the_position_means(bundled):
    model, tok = bundled
    doc = compare(model, tok, EAT, INVEST.replace("上周 ", ""), "苹果")
    pa, pb = doc["a"]["pos"], doc["b"]["pos"]
    assert doc["same_position"] is (pa == pb)
    means = position_mean.position_means(model, tok, max(pa, pb) + 1)
    assert doc["control"]["sentences"] == means.sentences >= position_mean.MIN_REF
    ids = [read_text(tok, text, model.cfg.n_ctx)[1] for text in (EAT, INVEST.replace("上周 ", ""))]
    va, vb = vectors_at(model, [ids[0]], [pa]), vectors_at(model, [ids[1]], [pb])
    for st in doc["stages"]:
        name = st["name"]
        assert st["cosine"] == pytest.approx(_cos(va[name][0], vb[name][0]), abs=1e-9)
        want = _cos(va[name][0] - means.at(name, pa), vb[name][0] - means.at(name, pb))
        assert st["cosine_pos"] == pytest.approx(want, abs=1e-9)


def test_the_position_vector_cancels_at_L0_in(bundled):
    """What the control guarantees: at "L0 in" x = W_E[t] + W_pos[p], and mu(p) holds W_pos[p] too, so
    changing the position table changes the raw cosine there but not cosine_pos (this also checks that
    the means are redone when the weights change in place)."""
    model, tok = bundled
    if model.cfg.pos != "learned":
        pytest.skip("the bundled model has no learned position table")
    model = copy.deepcopy(model)
    doc = compare(model, tok, EAT, EAT_SHORT, "苹果")
    pa, pb = doc["a"]["pos"], doc["b"]["pos"]
    assert pa != pb and doc["same_position"] is False
    before = next(s for s in doc["stages"] if s["name"] == "blocks.0.hook_resid_pre")
    with torch.no_grad():
        g = torch.Generator().manual_seed(0)
        W = model.pos_embed.W_pos
        W += 3 * W.norm(dim=-1, keepdim=True) * torch.randn(W.shape, generator=g) / W.shape[1] ** 0.5
    after = next(s for s in compare(model, tok, EAT, EAT_SHORT, "苹果")["stages"] if s["name"] == before["name"])
    assert abs(after["cosine"] - before["cosine"]) > 0.05  # the raw cosine moved with the positions
    assert after["cosine_pos"] == pytest.approx(before["cosine_pos"], abs=1e-6)
    # and it is the cosine of the two embeddings, each less the mean embedding at its position
    emb = doc["stages"][0]
    assert emb["name"] == "hook_embed" and emb["cosine_pos"] == pytest.approx(before["cosine_pos"], abs=1e-6)


def test_a_pair_at_one_position_is_1_where_nothing_but_the_word_is_read(bundled):
    model, tok = bundled
    doc = compare(model, tok, EAT, EAT.replace("昨天", "上周"), "苹果")
    assert doc["same_position"] is True
    first = [s for s in doc["stages"] if s["name"] in ("hook_embed", "blocks.0.hook_resid_pre")]
    assert [s["cosine_pos"] for s in first] == pytest.approx([1.0, 1.0], abs=1e-9)


def test_the_senses_part_whatever_the_positions(bundled):
    """The issue's case: the word at positions that differ. In the last stage the position-controlled
    cosine of the two senses is below that of two same-sense sentences with the same gap, and a shift
    of position changes it less than half as much as the other sense does."""
    model, tok = bundled
    last = lambda d, key: d["stages"][-1][key]
    shifted = compare(model, tok, EAT, INVEST.replace("上周 ", ""), "苹果")  # other sense, other position
    aligned = compare(model, tok, EAT, INVEST, "苹果")  # other sense, same position
    same = compare(model, tok, EAT, EAT_SHORT, "苹果")  # same sense, other position
    assert not shifted["same_position"] and aligned["same_position"] and not same["same_position"]
    assert last(shifted, "cosine_pos") < last(same, "cosine_pos")
    assert last(aligned, "cosine_pos") < last(same, "cosine_pos")
    # moving the word changes the cosine of the two senses less than the sense itself does
    sense_gap = last(same, "cosine_pos") - last(aligned, "cosine_pos")
    assert abs(last(aligned, "cosine_pos") - last(shifted, "cosine_pos")) < sense_gap / 2


def test_no_reference_no_control():
    """A tokenizer that reads no corpus line: cosine_pos is null and the document says why."""
    from qkv import GPT, ModelConfig, WordTokenizer

    tok = WordTokenizer.train("a b c d e f")
    torch.manual_seed(0)
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=32, n_heads=2, n_layers=2)).eval()
    doc = compare(model, tok, "a b c", "d c", "c")
    assert all(s["cosine_pos"] is None for s in doc["stages"])
    assert all(s["cosine"] is not None for s in doc["stages"])
    assert "reference" in doc["control"]["why"] and doc["control"]["sentences"] == 0


def test_the_means_do_not_depend_on_what_was_asked_before(bundled):
    """A deeper request reads deeper positions from fewer sentences, by a fixed rule: the means (and
    so a compare) at shallow positions are the same before and after it."""
    model, tok = bundled
    position_mean._CACHE.pop(model, None)
    first = compare(model, tok, EAT, INVEST, "苹果")
    shallow = position_mean.position_means(model, tok, 8)
    deep = position_mean.position_means(model, tok, 40)  # recomputed for 40 positions
    assert len(deep.counts) == 40 and deep.counts[39] < deep.counts[0]  # deeper: fewer sentences
    np.testing.assert_array_equal(deep.counts[:8], shallow.counts)
    again = compare(model, tok, EAT, INVEST, "苹果")
    assert again["control"]["counts"] == first["control"]["counts"]
    for a, b in zip(first["stages"], again["stages"], strict=True):
        assert b["cosine_pos"] == pytest.approx(a["cosine_pos"], abs=1e-6)
