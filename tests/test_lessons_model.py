"""The lessons that read the bundled model: convex, heads, dropout, embedding, next-token.

Each lesson runs once in English with figures and once in Chinese without; the tests check the
numbers that carry its claim against an independent computation where there is one, that the
headline shows those numbers, that text and headline are said from the measured numbers alone
(rebuilt from their JSON they come out the same), and that the figures were written.
"""

from __future__ import annotations

import copy
import json
import math
import re
from itertools import combinations

import numpy as np
import pytest
import torch

import qkv
from qkv import lessons
from qkv.core.hub.bundled import default_ckpt
from qkv.presentation.i18n import t

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def bundled():
    try:
        path = default_ckpt()
    except ValueError as e:
        pytest.fail(f"the bundled model is needed by these lessons: {e}")
    return qkv.load(path)


@pytest.fixture(scope="module")
def results(tmp_path_factory, bundled):
    """name -> (English result with figures, Chinese result without), each lesson run once per language."""
    cache = {}

    def get(name):
        if name not in cache:
            out = tmp_path_factory.mktemp(name.replace("-", "_"))
            cache[name] = (lessons.run(name, lang="en", out=out), lessons.run(name, lang="zh"))
        return cache[name]

    return get


def said(name, numbers, lang):
    """(text, headline) said again from the JSON of the numbers: nothing but the numbers goes in."""
    view, n = lessons.view_module(name), lessons.result_type(name).from_numbers(json.loads(json.dumps(numbers)))
    return view.text(n, lang), view.headline(n, lang)


def _common(name, en, zh, n_figures):
    assert en.title == lessons.title(name, "en") != zh.title == lessons.title(name, "zh")
    assert (en.text, en.headline) == said(name, en.numbers, "en") and (zh.text, zh.headline) == said(
        name, zh.numbers, "zh"
    )
    assert en.lang == "en" and zh.lang == "zh"
    assert CHINESE.search(zh.text) and CHINESE.search(zh.headline) and "的" in zh.text
    assert not re.search(r"\b(the|and|of)\b", zh.text), "the Chinese text should not be English prose"
    assert len(en.figures) == n_figures and zh.figures == []
    for path in en.figures:
        assert path.exists() and path.stat().st_size > 1000, path
    assert en.to_json()["headline"] == en.headline  # the numbers serialise


# ----------------------------------------------------------------------------------------- convex


@torch.no_grad()
def test_convex(results, bundled):
    from qkv.core.see.hull import convex_weights

    en, zh = results("convex")
    _common("convex", en, zh, 3)
    n = en.numbers
    # the worked example, exactly
    assert n["example_scores"] == pytest.approx([math.log(2), 0, 0], abs=1e-12)
    assert n["example_weights"] == pytest.approx([0.5, 0.25, 0.25], abs=1e-12)
    assert n["example_z"] == pytest.approx([1.0, 1.0], abs=1e-12)
    assert n["example_inside"] and n["example_distance"] == 0
    assert "a = (1/2, 1/4, 1/4), z = (1, 1)" in en.headline and "a = (1/2, 1/4, 1/4)" in zh.headline

    # the real head, recomputed independently from a fresh trace
    model, tok = bundled
    ids = tok.encode(n["text"])
    L, H, pos = n["layer"], n["head"], n["position"]
    _, trace = model.run_with_trace(torch.tensor([ids]))
    V = trace["v", L][0, : pos + 1, H].double().numpy()
    z = trace["z", L][0, pos, H].double().numpy()
    assert n["weights"] == pytest.approx(trace["pattern", L][0, H, pos, : pos + 1].tolist(), abs=1e-6)
    assert sum(n["weights"]) == pytest.approx(1.0, abs=1e-5)
    assert convex_weights(z, V, tol=1e-5).inside
    assert n["z_inside"] and n["z_distance"] == 0
    assert n["zW_inside"] and n["zW_distance"] == 0
    assert n["result_gap"] < 1e-4  # z·W_O[h] is the trace's per-head result
    # the residual update leaves the hull of the v_j W_O[h]
    W_O = model.blocks[L].attn.head_weights()["W_O"][H].detach().double().numpy()
    x_new = trace["resid_pre", L][0, pos].double().numpy() + z @ W_O
    check = convex_weights(x_new, V @ W_O, tol=1e-5)
    assert not check.inside and not n["residual_inside"]
    assert n["residual_distance"] == pytest.approx(check.distance, rel=1e-4) and n["residual_distance"] > 0
    assert n["residual_l2_distance"] > 0 and not n["resid_mid_inside"] and n["resid_mid_distance"] > 0
    # the head was chosen as the one that looks hardest at the cue verb
    assert n["cue"] == "投资了"
    best = max(
        trace["pattern", layer][0, h, pos, n["tokens"].index(n["cue"])].item()
        for layer in range(model.cfg.n_layers)
        for h in range(model.cfg.n_heads)
    )
    assert n["cue_weight"] == pytest.approx(best, abs=1e-6)

    from qkv.lessons.convex.present import dist

    for r in (en, zh):
        assert dist(n["residual_distance"]) in r.headline and dist(n["resid_mid_distance"]) in r.headline
    assert f"layer {L} head {H}" in en.headline and f"层 {L} 头 {H}" in zh.headline
    assert "outside" in en.headline and "在凸包外" in zh.headline


# ------------------------------------------------------------------------------------------ heads


def test_heads(results, bundled):
    from qkv.lessons.heads import measure as heads

    en, zh = results("heads")
    _common("heads", en, zh, 1)
    n = en.numbers
    model, tok = bundled
    assert n["n_sentences"] >= 100
    assert list(n["mass"]) == list(n["best"]) == list(heads.CATEGORIES) == n["categories"]
    tables = {c: np.array(n["mass"][c]) for c in heads.CATEGORIES}
    for c, M in tables.items():
        assert M.shape == (model.cfg.n_layers, model.cfg.n_heads)
        assert (M >= 0).all() and (M <= 1).all()
        best = n["best"][c]
        L, H = best["layer"], best["head"]
        assert best["mass"] == pytest.approx(M.max()) and M[L, H] == M.max()
        assert best["ratio"] == pytest.approx(M.max() / n["baseline"])
        assert best["mass"] > n["baseline"], c  # some head beats a uniform spread
        assert f"layer {L} head {H} {M.max():.3f}" in en.headline
        assert f"层 {L} 头 {H} {M.max():.3f}" in zh.headline
    # four different positions: their masses in one row cannot add up to more than 1
    assert (sum(tables.values()) <= 1 + 1e-9).all()
    assert f"uniform baseline {n['baseline']:.3f}" in en.headline

    items = heads.prompts(tok)
    assert len(items) == n["n_sentences"]
    cues = set(heads.cue_words())
    assert {"吃了", "投资了"} <= cues
    assert all(tok.decode([ids[c]]) in cues for ids, c in items)
    # the padded batch gives what each sentence alone gives
    for ids, cue in items[:3]:
        _, trace = model.run_with_trace(torch.tensor([ids]))
        alone = heads.attention_mass(model, [(ids, cue)])
        for layer in range(model.cfg.n_layers):
            row = trace["pattern", layer][0, :, -1]
            assert alone["mass"]["cue"][layer] == pytest.approx(row[:, cue].numpy(), abs=1e-6)
            assert alone["mass"]["self"][layer] == pytest.approx(row[:, -1].numpy(), abs=1e-6)
    assert n["baseline"] == pytest.approx(np.mean([1 / len(ids) for ids, _ in items]))


# ---------------------------------------------------------------------------------------- dropout


@pytest.mark.slow
def test_dropout(results):
    en, zh = results("dropout")
    _common("dropout", en, zh, 1)
    n = en.numbers
    train, ev = n["train"], n["eval"]
    assert train["rows"]["failed"] > 0 and train["rows"]["worst"] > 1e-5
    assert train["hull"]["failed"] > 0 and train["hull"]["worst"] > 0
    assert train["rows"]["min_sum"] < 1 < train["rows"]["max_sum"] <= 1 / (1 - n["p"]) + 1e-5
    assert ev["rows"]["failed"] == 0 and ev["hull"]["failed"] == 0 and ev["checks_failed"] == 0
    assert ev["rows"]["checked"] == train["rows"]["checked"] > 0
    # seeded: the Chinese run (same seed) measured exactly the same
    assert {k: v for k, v in zh.numbers.items()} == n
    assert (
        f"{train['rows']['failed']}/{train['rows']['checked']}" in en.headline
        and f"{train['hull']['worst']:.3f}" in en.headline
        and f"{train['hull']['failed']}/{train['hull']['checked']}" in zh.headline
    )


def test_dropout_breaks_a_fresh_copy(bundled):
    from qkv.lessons.dropout.measure import summarise, with_dropout

    model, tok = bundled
    before = model.cfg.dropout_attn
    copy = with_dropout(model, 0.2)
    assert copy.cfg.dropout_attn == 0.2 and model.cfg.dropout_attn == before  # the bundled model is left alone
    ids = torch.tensor([tok.encode("我 吃了 苹果 ，")])
    assert torch.equal(copy.eval()(ids), model(ids))  # the same weights
    torch.manual_seed(1)
    _, trace = copy.train().run_with_trace(ids)
    assert summarise(qkv.check(trace, max_hull_points=8)).rows.failed > 0


# -------------------------------------------------------------------------------------- embedding


def test_embedding(results, bundled):
    en, zh = results("embedding")
    _common("embedding", en, zh, 1)
    n = en.numbers
    model, tok = bundled
    words, ids = n["words"], n["ids"]
    assert ids == [tok.encode(w)[0] for w in words] and all(len(tok.encode(w)) == 1 for w in words)
    assert n["id_difference"] == ids[1] - ids[0]
    assert n["onehot_cosines"] == [0.0] * len(n["onehot_cosines"]) and n["onehot_max_offdiag"] == 0
    E = model.embed.weight.detach().double()
    cosines = {(a, b): c for a, b, c in n["cosines"]}
    assert list(cosines) == list(combinations(words, 2))  # every pair once, in the order of the words
    for (i, a), (j, b) in combinations(enumerate(words), 2):
        direct = torch.nn.functional.cosine_similarity(E[ids[i]], E[ids[j]], dim=0).item()
        assert cosines[a, b] == pytest.approx(direct, abs=1e-9)
    fruits = words[:-1]
    within = np.mean([cosines[a, b] for a, b in combinations(fruits, 2)])
    across = np.mean([cosines[a, words[-1]] for a in fruits])
    assert n["within_fruit_mean"] == pytest.approx(within) and n["fruit_other_mean"] == pytest.approx(across)
    assert n["claim_holds"] == (within > across)
    unit = E / E.norm(dim=1, keepdim=True)
    for word, nn in n["neighbours"].items():
        sims = [c for _, c in nn]
        assert sims == sorted(sims, reverse=True) and len(nn) == 5
        cos = unit @ unit[tok.encode(word)[0]]
        cos[tok.encode(word)[0]] = -2
        assert nn[0][0] == tok.display(int(cos.argmax())) and nn[0][1] == pytest.approx(cos.max().item(), abs=1e-6)
    assert f"{within:.3f}" in en.headline and f"{across:.3f}" in en.headline and f"{within:.3f}" in zh.headline
    assert ("claim holds" if n["claim_holds"] else "claim does not hold") in en.headline
    assert f"= {n['id_difference']}" in en.headline


# ------------------------------------------------------------------------------------- next-token


@torch.no_grad()
def test_next_token(results, bundled):
    from qkv.lessons.next_token.measure import entropy_bits

    en, zh = results("next-token")
    _common("next-token", en, zh, 1)
    n = en.numbers
    model, tok = bundled
    ids = torch.tensor([tok.encode(n["text"])])
    p = torch.softmax(model(ids)[0, -1].double(), -1)  # the fused path, not the trace
    probs = [q for _, q in n["top"]]
    assert probs == sorted(probs, reverse=True) and sum(probs) <= 1 + 1e-9
    top = torch.topk(p, len(probs))
    assert probs == pytest.approx(top.values.tolist(), abs=1e-5)
    assert [t for t, _ in n["top"]] == [tok.display(int(i)) for i in top.indices]
    assert n["entropy_bits"] == pytest.approx(entropy_bits(p), abs=1e-4)
    from qkv.lessons.next_token.measure import TEMPERATURES

    temps = [at["T"] for at in n["temperatures"]]
    assert temps == list(TEMPERATURES) == [0.5, 1.0, 2.0]
    ents = [at["entropy_bits"] for at in n["temperatures"]]
    assert ents == sorted(ents) and ents[0] < ents[-1]  # hotter is flatter
    assert n["temperatures"][temps.index(1.0)]["entropy_bits"] == pytest.approx(n["entropy_bits"])
    for at in n["temperatures"]:
        pT = torch.softmax(model(ids)[0, -1].double() / at["T"], -1)
        assert [q for _, q in at["top"]] == pytest.approx(torch.topk(pT, 5).values.tolist(), abs=1e-5)
        assert at["greedy"] == n["greedy"] == tok.display(int(p.argmax()))
        assert at["shown"] == pytest.approx(pT[top.indices].tolist(), abs=1e-5)  # the same tokens: the top at T = 1
    for T, H in zip(temps, ents):
        assert f"T={T:g}: {H:.2f} bits" in en.headline and f"T={T:g}：{H:.2f} 比特" in zh.headline
    assert f"{n['top'][0][0]} {n['top'][0][1]:.3f}" in en.headline


# ---------------------------------------------------------------------------------------- verdicts


def test_verdicts_follow_the_numbers(results):
    """A lesson's sentences are chosen by what it measured: change the numbers and the sentence changes."""
    n = copy.deepcopy(results("next-token")[0].numbers)
    assert t("lessons.next_token.rising", "en") in said("next-token", n, "en")[0]
    cold, hot = n["temperatures"][0], n["temperatures"][-1]
    assert (cold["T"], hot["T"]) == (0.5, 2.0)
    hot["entropy_bits"] = cold["entropy_bits"] - 1  # hotter yet sharper
    hot["greedy"] = "?"
    text, headline = said("next-token", n, "en")
    assert t("lessons.next_token.not_rising", "en") in text and t("lessons.next_token.changed", "en") in text
    assert f"greedy picks {n['greedy']}/{n['greedy']}/?" in headline

    e = results("embedding")[0].numbers
    flipped = said("embedding", {**e, "claim_holds": not e["claim_holds"]}, "en")[1]
    assert ("claim does not hold" in flipped) == e["claim_holds"]

    h = results("heads")[0].numbers
    cue, previous = h["best"]["cue"]["mass"], h["best"]["previous"]["mass"]
    cue_weak = t("lessons.heads.cue_weak", "en", cue=cue, previous=previous)
    assert (cue_weak in results("heads")[0].text) == (cue < previous / 2)
    faint = [c for c in h["categories"] if h["best"][c]["ratio"] < 2]
    assert ("no head has made that its job" in results("heads")[0].text) == bool(faint)
    clear = copy.deepcopy(h)
    for c in clear["categories"]:
        clear["best"][c]["ratio"] = 3.0
    assert "no head has made that its job" not in said("heads", clear, "en")[0]
    changed = copy.deepcopy(h)
    changed["best"]["cue"]["mass"], changed["distinct_heads"] = previous, 2
    text = said("heads", changed, "zh")[0]
    assert (
        "决定词义的动词最多只得到" not in text
        and t("lessons.heads.split_some", "zh", categories=4, distinct_heads=2) in text
    )
