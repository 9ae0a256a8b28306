"""A matrix as a transformation: the SVD of a head's matrices, the word cloud, the lesson, the endpoint.

Every number is checked against a second computation: torch.linalg.svdvals and numpy for the
spectra, the model's own fused W_QKV and its trace for x·W_Q, a hand-written LayerNorm for the words'
input vectors, and independent re-derivations for the lesson's claims.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import qkv
from qkv import lessons
from qkv.analysis.origin import attention_input_name as input_name
from qkv.analysis.transform import (
    attention_module,
    head_biases,
    head_matrices,
    head_spectra,
    random_twin,
    rotation_part,
    spectrum,
    svd,
)
from qkv.analysis.transform_cloud import GROUPS, kept_share, pca2, separation, word_cloud, word_inputs
from qkv.core.hub.bundled import default_ckpt

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def bundled():
    model, tok = qkv.load(default_ckpt())
    return model.eval(), tok


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(3)
    return qkv.GPT(qkv.ModelConfig(d_vocab=20, d_model=16, n_heads=2, d_head=4, n_layers=2, n_ctx=8)).eval()


def test_svd_gives_W_back_and_its_singular_values_are_torchs(bundled):
    model, _ = bundled
    for layer in range(model.cfg.n_layers):
        for head in range(model.cfg.n_heads):
            for name, W in head_matrices(model, layer, head).items():
                U, s, Vh = svd(W)
                torch.testing.assert_close(U @ torch.diag(s) @ Vh, W, rtol=0, atol=1e-12)
                expected = torch.linalg.svdvals(W.float()).double()  # float32, from the weights as stored
                got = torch.tensor(spectrum(W)["singular_values"], dtype=torch.float64)
                torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-7)
                assert got.shape == (min(W.shape),) and bool((got[:-1] >= got[1:]).all()), name


def test_head_matrices_are_the_ones_the_model_multiplies(bundled):
    """x W_Q[h] + b_Q[h] from head_matrices equals the q the trace records (the fused W_QKV path)."""
    model, tok = bundled
    ids = torch.tensor([tok.encode("我 投资了 苹果 ，")])
    layer = model.cfg.n_layers - 1
    _, trace = qkv.core.see.trace.run_with_trace(model, ids)
    x = trace[input_name(model.cfg, layer)][0].double()  # (T, d_model)
    for head in range(model.cfg.n_heads):
        W, b = head_matrices(model, layer, head), head_biases(model, layer, head)
        for p in ("q", "k", "v"):
            expected = trace[f"blocks.{layer}.attn.hook_{p}"][0, :, head].double()  # (T, d_head)
            torch.testing.assert_close(x @ W["W_" + p.upper()] + b["b_" + p.upper()], expected, rtol=1e-5, atol=1e-5)
        z = trace[f"blocks.{layer}.attn.hook_z"][0, :, head].double()  # (T, d_head)
        torch.testing.assert_close(
            z @ W["W_O"], trace[f"blocks.{layer}.attn.hook_result"][0, :, head].double(), rtol=1e-5, atol=1e-5
        )


def test_the_rotation_part_is_orthogonal_and_completes_the_polar_decomposition(bundled):
    model, _ = bundled
    for name, W in head_matrices(model, 1, 2).items():
        R = rotation_part(W)
        small = R.T @ R if W.shape[0] >= W.shape[1] else R @ R.T
        torch.testing.assert_close(small, torch.eye(small.shape[0], dtype=torch.float64), rtol=0, atol=1e-12)
        _, s, Vh = svd(W)
        if W.shape[0] >= W.shape[1]:  # W = R · (V Σ Vᵀ), the stretch a symmetric positive matrix
            torch.testing.assert_close(R @ (Vh.T @ torch.diag(s) @ Vh), W, rtol=0, atol=1e-12)
        else:  # W = (U Σ Uᵀ) · R
            U = svd(W)[0]
            torch.testing.assert_close((U @ torch.diag(s) @ U.T) @ R, W, rtol=0, atol=1e-12)
        # cos(W, R) from the two matrices themselves, not from the singular values
        cos = float((W * R).sum() / (W.norm() * R.norm()))
        assert math.isclose(spectrum(W)["rotation_cos"], cos, rel_tol=1e-10), name


def test_spectrum_numbers_follow_their_formulas():
    torch.manual_seed(0)
    W = torch.randn(12, 5, dtype=torch.float64) @ torch.diag(torch.tensor([5.0, 2, 1, 0.5, 0.1], dtype=torch.float64))
    s = np.linalg.svd(W.numpy(), compute_uv=False)
    got = spectrum(W)
    p = s**2 / np.sum(s**2)
    assert math.isclose(got["condition"], s[0] / s[-1], rel_tol=1e-10)
    assert math.isclose(got["effective_rank"], float(np.exp(-np.sum(p * np.log(p)))), rel_tol=1e-10)
    assert math.isclose(got["energy_top"]["4"], float(p[:4].sum()), rel_tol=1e-10)
    assert math.isclose(got["frobenius"], float(np.linalg.norm(W.numpy())), rel_tol=1e-10)
    # a rotation times a number stretches evenly: condition 1, full effective rank, cos(W, R) = 1
    Q, _ = torch.linalg.qr(torch.randn(12, 5, dtype=torch.float64))
    even = spectrum(3 * Q)
    assert math.isclose(even["condition"], 1.0, rel_tol=1e-10) and math.isclose(
        even["effective_rank"], 5.0, rel_tol=1e-10
    )
    assert math.isclose(even["rotation_cos"], 1.0, rel_tol=1e-12)
    assert spectrum(W, rank=2)["singular_values"] == pytest.approx(s[:2].tolist(), rel=1e-10)


def test_composites_are_the_products(tiny):
    spectra = head_spectra(tiny, 1, 1)
    W = head_matrices(tiny, 1, 1)
    qk = torch.linalg.svdvals(W["W_Q"] @ W["W_K"].T)[: tiny.cfg.d_head]
    ov = torch.linalg.svdvals(W["W_V"] @ W["W_O"])[: tiny.cfg.d_head]
    assert spectra["W_QK"]["singular_values"] == pytest.approx(qk.tolist(), rel=1e-10)
    assert spectra["W_OV"]["singular_values"] == pytest.approx(ov.tolist(), rel=1e-10)


def test_the_random_twin_is_seeded_untrained_and_leaves_the_global_rng(bundled):
    model, _ = bundled
    state = torch.random.get_rng_state()
    a, b, c = random_twin(model, 0), random_twin(model, 0), random_twin(model, 1)
    assert torch.equal(torch.random.get_rng_state(), state)
    wa, wb, wc = (m.blocks[0].attn.W_QKV.weight for m in (a, b, c))
    assert torch.equal(wa, wb) and not torch.equal(wa, wc)
    assert wa.shape == model.blocks[0].attn.W_QKV.weight.shape and not torch.equal(
        wa, model.blocks[0].attn.W_QKV.weight
    )
    assert not a.training


def test_the_words_input_is_layer_norm_of_embedding_plus_position(bundled):
    """Block 0 of the pre-norm GPT: x = LN1(W_E[word] + P[0]), written out here by hand."""
    model, tok = bundled
    words, X, _ = word_inputs(model, tok, ["香蕉", "原子能", "no-such-word-here"], 0)
    assert words == [w for w in ("香蕉", "原子能") if len(tok.encode(w)) == 1]
    ln = model.blocks[0].ln1
    for w, x in zip(words, X):
        e = model.embed.weight[tok.encode(w)[0]] + model.pos_embed(0, 1)[0]
        expected = F.layer_norm(e, e.shape, ln.weight, ln.bias, ln.eps).double()
        torch.testing.assert_close(x, expected, rtol=1e-5, atol=1e-5)


def test_the_cloud_after_the_map_is_x_times_W_Q(bundled):
    model, tok = bundled
    layer, head = 1, 3
    cloud = word_cloud(model, tok, layer, head)
    words, X, _ = word_inputs(model, tok, cloud["words"], layer)
    assert words == cloud["words"]
    d_attn = model.cfg.n_heads * model.cfg.d_head
    W_q = (
        model.blocks[layer].attn.W_QKV.weight[:d_attn].detach().double()
    )  # (n_heads * d_head, d_model), nn.Linear's layout
    W = W_q.T[:, head * model.cfg.d_head : (head + 1) * model.cfg.d_head]  # (d_model, d_head), from the fused weight
    q = X @ W  # (n, d_head)
    labels = np.array(cloud["labels"])
    member = labels != "ambiguous"
    sep = separation(q.numpy()[member], labels[member])
    assert cloud["q"]["separation"]["ratio"] == pytest.approx(sep["ratio"], rel=1e-9)
    assert cloud["q"]["separation"]["accuracy"] == sep["accuracy"]
    pic = pca2(q.numpy())
    assert np.allclose(cloud["q"]["points"], pic["coords"], atol=1e-9)
    assert cloud["q"]["trace_max_diff"] < 1e-4  # the trace's q − b_Q, in float32
    assert cloud["q"]["kept_share"] == pytest.approx(kept_share(X.numpy()[member], W.numpy()), rel=1e-9)
    assert set(cloud["groups"]) <= set(GROUPS) and len(cloud["words"]) == len(cloud["q"]["points"])


def test_pca2_projects_on_orthonormal_principal_directions():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 6)) @ np.diag([5, 3, 1, 0.5, 0.2, 0.1])
    p = pca2(X)
    C = p["components"]
    assert np.allclose(C @ C.T, np.eye(2)) and np.allclose(p["coords"], (X - X.mean(0)) @ C.T)
    cov_top = np.linalg.eigvalsh(np.cov((X - X.mean(0)).T, bias=True))[::-1][:2]
    assert np.allclose(p["coords"].var(0), cov_top)
    assert all(row[np.argmax(np.abs(row))] > 0 for row in C)


def test_separation_measures_clusters_and_ignores_scale():
    rng = np.random.default_rng(1)
    far = np.vstack([rng.normal(0, 0.1, (5, 3)), rng.normal(5, 0.1, (5, 3))])
    labels = ["a"] * 5 + ["b"] * 5
    s = separation(far, labels)
    assert s["accuracy"] == 1.0 and s["ratio"] > 10
    assert separation(7 * far, labels)["ratio"] == pytest.approx(s["ratio"], rel=1e-12)
    mixed = rng.normal(0, 1, (40, 3))
    assert separation(mixed, ["a", "b"] * 20)["ratio"] < 1


def test_kept_share_of_a_random_subspace():
    X = np.eye(8)  # spread evenly in every direction (after centring, almost)
    W = np.zeros((8, 2))
    W[0, 0], W[1, 1] = 1, 3
    Xc = X - X.mean(0)
    assert kept_share(X, W) == pytest.approx(float(np.sum(Xc[:, :2] ** 2) / np.sum(Xc**2)), rel=1e-12)


def test_bad_layer_or_head_and_translation_models_are_one_line_errors(bundled):
    model, _ = bundled
    L, H = model.cfg.n_layers, model.cfg.n_heads
    for layer, head, message in (
        (L, 0, f"layer {L} is out of range"),
        (0, H, f"head {H} is out of range"),
        (-L - 1, 0, f"layer {-L - 1} is out of range"),
        (0, True, "head must be an integer"),
        (0.5, 0, "layer must be an integer"),
    ):
        with pytest.raises(ValueError, match=message):
            head_matrices(model, layer, head)
    # the one rule for every index: a negative one counts from the end
    last = head_matrices(model, L - 1, H - 1)
    assert all(torch.equal(m, last[name]) for name, m in head_matrices(model, -1, -1).items())
    mt, _ = qkv.load(qkv.core.hub.bundled.default_translate_ckpt())
    with pytest.raises(ValueError, match="translation model"):
        attention_module(mt, 0)


# ---------------------------------------------------------------------------
# the lesson
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lesson(tmp_path_factory, bundled):
    out = tmp_path_factory.mktemp("transform")
    return lessons.run("transform", lang="en", out=out), lessons.run("transform", lang="zh"), out


def test_the_lesson_is_registered():
    assert "transform" in lessons.LESSONS and lessons.lesson_module("transform").NEEDS_MODEL is True


def test_the_lessons_stretch_claim_holds_derived_from_svdvals(lesson, bundled):
    en, zh, out = lesson
    n = en.numbers
    model, _ = bundled
    twin = random_twin(model, n["seed"])
    conditions = {}  # (model, matrix name) -> every head's σ₁/σᵣ
    for which, m in (("trained", model), ("random", twin)):
        for block in m.blocks:
            for name, W in block.attn.head_weights().items():  # (n_heads, d_in, d_out)
                s = torch.linalg.svdvals(W.detach().double())  # (n_heads, r)
                conditions.setdefault((which, name), []).extend((s[:, 0] / s[:, -1]).tolist())
    pairs = [
        (a, b)
        for name in ("W_Q", "W_K", "W_V", "W_O")
        for a, b in zip(conditions["trained", name], conditions["random", name])
    ]  # the same place in both models
    assert n["n_places"] == len(pairs) == 4 * model.cfg.n_layers * model.cfg.n_heads
    assert n["more_uneven"] == sum(a > b for a, b in pairs)
    assert n["uneven_claim_holds"] == all(a > b for a, b in pairs)
    assert n["uneven_claim_holds"], pairs  # the claim the lesson states, on the bundled model
    for name in ("W_Q", "W_O"):
        assert n["summary"][name]["trained"]["condition_mean"] == pytest.approx(np.mean(conditions["trained", name]))
        assert n["summary"][name]["random"]["condition_max"] == pytest.approx(max(conditions["random", name]))
    assert n["reconstruction_error"] < 1e-12 and n["orthogonality_error"] < 1e-12
    assert f"{n['detail']['W_Q']['condition']:.1f}" in en.headline
    assert ("holds" in en.headline) == n["uneven_claim_holds"]


def test_the_lessons_cloud_numbers_are_the_clouds(lesson, bundled):
    en, zh, _ = lesson
    n = en.numbers
    model, tok = bundled
    for head in range(model.cfg.n_heads):
        cloud = word_cloud(model, tok, n["layer"], head)
        for p in ("q", "k", "v"):
            assert n["after_ratio"][p][head] == pytest.approx(cloud[p]["separation"]["ratio"], rel=1e-9)
    for p in ("q", "k", "v"):
        assert n["heads_separating_more"][p] == sum(r > n["before_ratio"] for r in n["after_ratio"][p])
    twin_cloud = word_cloud(random_twin(model, n["seed"]), tok, n["layer"], n["head"])
    assert n["twin_q_ratio"] == pytest.approx(twin_cloud["q"]["separation"]["ratio"])
    assert f"{n['before_ratio']:.2f}" in en.text and f"{n['before_ratio']:.2f}" in zh.text
    say_q = "W_Q moves the groups further apart in " + (
        "only " if n["heads_separating_more"]["q"] <= n["n_heads"] / 2 else ""
    )
    assert say_q + f"{n['heads_separating_more']['q']} of {n['n_heads']}" in en.text


def test_the_lesson_is_said_from_its_numbers_in_both_languages(lesson):
    en, zh, out = lesson
    view = lessons.view_module("transform")
    again = lessons.result_type("transform").from_numbers(json.loads(json.dumps(en.to_json()["numbers"])))
    assert view.text(again, "en") == en.text and view.headline(again, "zh") == zh.headline
    assert CHINESE.search(zh.title) and CHINESE.search(zh.text) and not CHINESE.search(en.title)
    assert [p.name for p in en.figures] == ["transform_spectra.png", "transform_cloud.png"]
    assert all((out / p.name).stat().st_size > 10_000 for p in en.figures)


def test_the_words_follow_the_numbers_when_a_claim_fails(lesson):
    en, _, _ = lesson
    view = lessons.view_module("transform")
    n = json.loads(json.dumps(en.to_json()["numbers"]))
    n.update(
        uneven_claim_holds=False,
        more_uneven=n["n_places"] - 1,
        heads_separating_more={"q": 0, "k": 0, "v": n["n_heads"]},
    )
    typed = lessons.result_type("transform").from_numbers(n)
    text = view.text(typed, "en")
    assert f"larger in {n['n_places'] - 1} of {n['n_places']} places, so the claim does not hold" in text
    assert "favours" not in text and "In most heads the keys and values" not in text
    assert f"only 0 of {n['n_heads']}" in text and "(claim does not hold)" in view.headline(typed, "en")
    assert "不成立" in view.text(typed, "zh") and "不成立" in view.headline(typed, "zh")


# ---------------------------------------------------------------------------
# the endpoint
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(bundled):
    from fastapi.testclient import TestClient

    from qkv.apps.web.server import create_app

    model, tok = bundled
    return TestClient(create_app(model, tok, "bundled"), base_url="http://127.0.0.1")


def test_the_endpoint_answers_the_python_api(client, bundled):
    model, tok = bundled
    doc = client.post("/api/transform", json={"layer": 2, "head": 1}).json()
    assert doc["kind"] == "transform" and (doc["layer"], doc["head"]) == (2, 1)
    for name, W in head_matrices(model, 2, 1).items():
        assert doc["trained"][name]["singular_values"] == pytest.approx(torch.linalg.svdvals(W).tolist(), rel=1e-9)
        random = torch.linalg.svdvals(head_matrices(random_twin(model, 0), 2, 1)[name])
        assert doc["random"][name]["singular_values"] == pytest.approx(random.tolist(), rel=1e-9)
    assert doc["cloud"]["q"]["separation"] == pytest.approx(word_cloud(model, tok, 2, 1)["q"]["separation"])


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"layer": 99, "head": 0}, 400, "layer 99 is out of range"),
        ({"layer": 0, "head": -99}, 400, "head -99 is out of range"),
        ({"layer": "0", "head": 0}, 422, "layer"),
        ({"layer": 0}, 422, "head"),
        ({"layer": 0, "head": 0, "extra": 1}, 422, "extra"),
    ],
)
def test_bad_requests_are_one_line_json_errors(client, body, status, message):
    r = client.post("/api/transform", json=body)
    assert r.status_code == status and message in r.json()["error"] and "\n" not in r.json()["error"]


def test_a_vocabulary_without_the_words_has_spectra_and_no_cloud():
    from qkv.apps.web.routes_transform import transform_doc

    tok = qkv.CharTokenizer.train("abcdefgh ")
    torch.manual_seed(0)
    model = qkv.GPT(
        qkv.ModelConfig(d_vocab=tok.vocab_size, d_model=16, n_heads=2, d_head=8, n_layers=1, n_ctx=8)
    ).eval()
    with pytest.raises(ValueError, match="too few of the cloud's words"):
        word_cloud(model, tok, 0, 0)
    doc = transform_doc(model, tok, random_twin(model), 0, 1)
    assert doc["cloud"] is None and "too few" in doc["cloud_error"]
    W = head_matrices(model, 0, 1)["W_V"]
    assert doc["trained"]["W_V"]["singular_values"] == pytest.approx(torch.linalg.svdvals(W).tolist(), rel=1e-9)


def test_a_random_twin_that_cannot_fit_beside_the_model_is_one_line_400(bundled, monkeypatch):
    """The transform panel's untrained twin is a second model of the same size: where the memory has no
    room for it (an LLM), /api/transform says so in one line instead of allocating."""
    from fastapi.testclient import TestClient

    from qkv.apps.web.server import create_app
    from qkv.core.hub import size

    model, tok = bundled
    monkeypatch.setattr(size, "available_memory", lambda: 1000)
    page = TestClient(create_app(model, tok, "bundled"), base_url="http://127.0.0.1:8000")
    r = page.post("/api/transform", json={"layer": 0, "head": 0})
    assert r.status_code == 400 and "\n" not in r.json()["error"]
    assert "a random model of this shape" in r.json()["error"] and "1.0 kB" in r.json()["error"]
