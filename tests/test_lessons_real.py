"""The lessons on a real pretrained encoder (real-apple, real-heads, real-hull), on all-MiniLM-L6-v2.

Each lesson measures once on the `minilm` fixture (skipped without the `real` extra, failing under CI);
its text and headline are said again from the JSON of its numbers, in English and Chinese, and its
figures drawn. The tests check that what the texts claim holds in the numbers, against an
independent computation where there is one, and that the lessons that need a GPT refuse an encoder.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from qkv import lessons
from qkv.lessons.real_apple import measure as real_apple
from qkv.lessons.real_heads import measure as real_heads
from qkv.lessons.real_hull import measure as real_hull
from qkv.presentation.i18n import catalogue, say_error

pytestmark = [pytest.mark.slow]

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def measured(minilm):
    """name -> the numbers its measure returns on MiniLM (each lesson measured once)."""
    cache = {}

    def get(name):
        if name not in cache:
            model, tokenizer = minilm
            measured = lessons.lesson_module(name).measure(model, tokenizer, 0)
            cache[name] = json.loads(json.dumps(measured.to_numbers()))
        return cache[name]

    return get


def said(name, n):
    """{lang: (text, headline)} said from the numbers alone."""
    view, n = lessons.view_module(name), lessons.result_type(name).from_numbers(n)
    return {lang: (view.text(n, lang), view.headline(n, lang)) for lang in ("en", "zh")}


def _common(name, n, tmp_path, n_figures):
    out = said(name, n)
    (en, en_head), (zh, zh_head) = out["en"], out["zh"]
    assert lessons.title(name, "en") != lessons.title(name, "zh")
    assert CHINESE.search(zh) and CHINESE.search(zh_head) and "的" in zh
    assert not re.search(r"\b(the|and|of)\b", zh), "the Chinese text should not be English prose"
    assert "{" not in en + zh + en_head + zh_head  # every field was filled
    paths = lessons.view_module(name).figures(lessons.result_type(name).from_numbers(n), tmp_path, "en")
    assert len(paths) == n_figures
    for p in paths:
        assert p.exists() and p.stat().st_size > 1000, p
    return en, en_head, zh, zh_head


# ------------------------------------------------------------------------------------ real-apple


def test_real_apple_frames_are_balanced_and_held_out(minilm):
    _, tok = minilm
    texts, labels = real_apple.frames()
    assert len(set(texts)) == len(texts) and len(real_apple.FRUIT) >= 40 and len(real_apple.COMPANY) >= 40
    word, ids, positions = real_apple.word_positions(tok, texts)
    assert (
        tok.pieces("Apple") == ["[CLS]", "apple", "[SEP]"] and tok.pieces("apple")[1] == "apple"
    )  # one token, both senses
    folds = real_apple.position_folds(positions, labels, real_apple.K_FOLDS, 0)
    assert sorted(i for f in folds for i in f) == list(range(len(texts)))  # every frame tested exactly once
    for f in folds:  # each fold: as many fruit as company frames, at the same positions
        fruit = sorted(positions[i] for i in f if labels[i] == 0)
        assert fruit == sorted(positions[i] for i in f if labels[i] == 1)

    # the probe is never fitted on a frame it is scored on: a spy sees the row indices
    X = np.arange(len(texts), dtype=float)[:, None]
    seen = []

    def spy(Xtr, ytr):  # records the rows it is fitted on, then the rows it predicts
        seen.append(set(Xtr[:, 0].astype(int)))

        def predict(Xt):
            seen.append(set(Xt[:, 0].astype(int)))
            return np.zeros(len(Xt), bool)

        return predict

    real_apple.probe_accuracy(X, labels, folds, fit=spy)
    for train, test in zip(seen[::2], seen[1::2]):
        assert not train & test and len(train | test) == len(texts)
        assert not {texts[i] for i in train} & {texts[i] for i in test}


def test_real_apple_numbers_and_claims(measured, minilm, tmp_path):
    n = measured("real-apple")
    model, tok = minilm
    en, en_head, zh, zh_head = _common("real-apple", n, tmp_path, 1)
    stages = n["stages"]
    assert stages == ["embed"] + [f"L{i}" for i in range(model.cfg.n_layers)]
    for m in real_apple.MODELS:
        r = n["models"][m]
        for key in ("across", "within", "gap", "probe"):
            assert len(r[key]) == len(stages)
        assert all(0.0 <= p <= 1.0 for p in r["probe"])
        assert r["probe"][0] == 0.5  # only position varies at the embedding output, and it is balanced
        assert r["gap"] == pytest.approx(np.subtract(r["within"], r["across"]).tolist())
    pre, rand, shuf = (n["models"][m] for m in real_apple.MODELS)
    assert pre["across"] != rand["across"] and pre["probe"] != rand["probe"] and pre["probe"] != shuf["probe"]
    # what the English text says, checked in the numbers
    assert "from the first block on" in en and pre["min_block_gap"] > 0 and min(pre["gap"][1:]) == pre["min_block_gap"]
    assert "does not group by sense" in en
    assert max(rand["max_abs_gap"], shuf["max_abs_gap"]) < pre["min_block_gap"] / 2
    assert "after every block" in en and min(pre["probe"][1:]) >= 0.9
    assert "Both are below" in en and max(rand["probe"] + shuf["probe"]) < min(pre["probe"][1:])
    assert f"pretrained {pre['best_probe']:.3f}, random {rand['best_probe']:.3f}" in en_head
    assert f"{pre['best_probe']:.3f}" in zh_head

    # an independent probe: the primal form of the same ridge least squares gives the same accuracy
    texts, labels = real_apple.frames()
    _, ids, positions = real_apple.word_positions(tok, texts)
    X = real_apple.word_vectors(model, ids, positions, tok.pad_id)["L2"]

    def primal(Xtr, ytr):
        mu, sd = Xtr.mean(0), Xtr.std(0) + 1e-8
        Z = (Xtr - mu) / sd
        t = 2 * ytr - 1
        w = np.linalg.solve(Z.T @ Z + real_apple.RIDGE * np.eye(Z.shape[1]), Z.T @ (t - t.mean()))
        return lambda Xt: ((Xt - mu) / sd) @ w + t.mean() > 0

    assert real_apple.probe_accuracy(X, labels, n["folds"], fit=primal) == pytest.approx(pre["probe"][2])
    # the padded batch gives each frame's vector as the frame alone does
    for i in (0, 50, 87):
        _, trace = model.run_with_trace(torch.tensor([ids[i]]), names=["blocks.2.hook_resid_post"])
        alone = trace["blocks.2.hook_resid_post"][0, positions[i]].double().numpy()
        assert np.allclose(alone, X[i], atol=1e-4)
    # the cosine across, recomputed pair by pair at the last block
    last = real_apple.word_vectors(model, ids, positions, tok.pad_id)["L5"]
    U = last / np.linalg.norm(last, axis=1, keepdims=True)
    fruit, company = U[labels == 0], U[labels == 1]
    assert np.mean([a @ b for a in fruit for b in company]) == pytest.approx(pre["across"][-1], abs=1e-9)


def test_random_and_shuffled_weights(minilm):
    model, _ = minilm
    a, b = real_apple.random_encoder(model.cfg, 0), real_apple.random_encoder(model.cfg, 0)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))  # seeded
    assert torch.equal(a.blocks[0].ln1.weight, torch.ones(model.cfg.d_model)) and not a.blocks[0].ln1.bias.any()
    assert not a.blocks[0].attn.W_QKV.bias.any()
    assert a.embed.weight.std().item() == pytest.approx(real_apple.INIT_STD, rel=0.02)
    s = real_apple.shuffled_copy(model, 0)
    for (name, p), q in zip(model.named_parameters(), s.parameters()):
        if p.dim() == 2 and p.numel() < 10**6:  # the same entries, in another order
            assert not torch.equal(p, q) and torch.equal(p.flatten().sort().values, q.flatten().sort().values), name
        elif p.dim() == 2:  # the word embeddings (11.7 M entries): the same sums, cheaper than sorting
            assert not torch.equal(p, q) and p.double().sum().item() == pytest.approx(q.double().sum().item(), rel=1e-9)
            assert p.double().pow(2).sum().item() == pytest.approx(q.double().pow(2).sum().item(), rel=1e-9), name
        else:
            assert torch.equal(p, q), name


# ------------------------------------------------------------------------------------ real-heads


def test_real_heads_numbers_and_claims(measured, minilm, tmp_path):
    n = measured("real-heads")
    model, tok = minilm
    en, en_head, zh, zh_head = _common("real-heads", n, tmp_path, 1)
    L, H = model.cfg.n_layers, model.cfg.n_heads
    mass = {c: np.array(n["mass"][c]) for c in real_heads.CATEGORIES}
    for M in mass.values():
        assert M.shape == (L, H) and (M >= 0).all() and (M <= 1 + 1e-9).all()
    single = sum(mass[c] for c in ("cls", "sep", "previous", "next", "self"))
    assert (single <= 1 + 1e-9).all()  # five different positions of one row
    # the named heads are exactly those above the threshold, each with its mass, and the text names them
    above = {(c, int(a), int(b)) for c in real_heads.CATEGORIES for a, b in zip(*np.nonzero(mass[c] > n["threshold"]))}
    assert {(s["category"], s["layer"], s["head"]) for s in n["specialised"]} == above
    for s in n["specialised"]:
        assert s["mass"] == pytest.approx(mass[s["category"]][s["layer"], s["head"]]) and s["mass"] > n["threshold"]
        assert f"L{s['layer']}H{s['head']} {s['mass']:.3f}" in en and f"L{s['layer']}H{s['head']} {s['mass']:.3f}" in zh
    best = n["best"]
    assert best["previous"]["mass"] > 0.9 and f"L{best['previous']['layer']}H{best['previous']['head']}" in en_head
    assert "reads ahead" in en and best["next"]["mass"] > n["threshold"]
    assert "Most of the heads that specialise" in en and n["n_specialised"]["cls"] > len(n["specialised"]) / 2
    for c in ("sep", "same", "self"):  # the text says no head passes the threshold on these
        assert best[c]["mass"] <= n["threshold"] and n["n_specialised"][c] == 0
    assert n["queries"]["same"] >= 30 and n["n_sentences"] >= 30 and real_heads.EXAMPLE in real_heads.SENTENCES

    # brute force on three sentences, each run alone (no padding), against the padded batch
    ids = [tok.encode(s) for s in real_heads.SENTENCES[:3]]
    got = real_heads.attention_mass(model, ids, tok.pad_id)
    total = {c: np.zeros((L, H)) for c in real_heads.CATEGORIES}
    count = dict.fromkeys(real_heads.CATEGORIES, 0)
    for x in ids:
        _, trace = model.run_with_trace(torch.tensor([x]), names=lambda name: name.endswith("hook_pattern"))
        T = len(x)
        for i in range(2, T - 2):
            keys = {
                "cls": [0],
                "sep": [T - 1],
                "previous": [i - 1],
                "next": [i + 1],
                "self": [i],
                "same": [j for j in range(1, T - 1) if abs(j - i) > 1 and x[j] == x[i]],
            }
            for c, js in keys.items():
                if js:
                    count[c] += 1
                    for layer in range(L):
                        total[c][layer] += trace["pattern", layer][0, :, i, js].double().sum(-1).numpy()
    for c in real_heads.CATEGORIES:
        assert got["mass"][c] == pytest.approx(total[c] / count[c], abs=1e-6), c


# ------------------------------------------------------------------------------------- real-hull


def test_real_hull_numbers_and_claims(measured, minilm, tmp_path):
    from qkv.lessons.convex.measure import nearest_l2

    n = measured("real-hull")
    model, tok = minilm
    en, en_head, zh, zh_head = _common("real-hull", n, tmp_path, 2)
    k = n["n_total"]
    assert k == model.cfg.n_layers * model.cfg.n_heads == 72
    assert n["z_points"] == k * len(n["tokens"]) and n["z_outside"] == 0 and n["z_max_distance"] == 0.0
    assert n["outside"]["zW"] == 0 and n["outside"]["sum"] == 0  # a linear map and a shift keep the hull
    assert n["outside"]["x_zW"] == k and "outside for all 72 heads" in en  # the seed's residual
    assert n["outside"]["mid"] == k and "outside their hull for all 72 heads" in en  # LN1 takes it out
    assert n["min_distance"]["mid"] > 0 and n["mid_min"]["max_weight"] > 0.99  # the closest head is nearly one-hot
    assert n["ln_gap"] < 1e-5  # LN1(x + attn_out) recomputed in float64 is the traced resid_mid
    assert f"x + z·W_O outside {k}/{k}" in en_head and f"{n['z_points'] - n['z_outside']}/{n['z_points']}" in zh_head

    # independent checks at the query, on the head farthest out after LN1 and on the example head
    ids = tok.encode(n["text"])
    q = n["position"]
    _, trace = model.run_with_trace(torch.tensor([ids]))
    for layer, head in ((n["mid_max"]["layer"], n["mid_max"]["head"]), (n["example"]["layer"], n["example"]["head"])):
        block = model.blocks[layer]
        with torch.no_grad():
            W_O = block.attn.head_weights()["W_O"][head].double()
            V, z = trace["v", layer][0, :, head].double(), trace["z", layer][0, q, head].double()
            a = trace["pattern", layer][0, head, q].double()
            x = trace["resid_pre", layer][0, q].double()
            s = x + trace["attn_out", layer][0, q].double()
            c = s - z @ W_O
            mapped = real_hull.layer_norm(block.ln1, c + V @ W_O)
        # inside: the head's own weights reproduce z and the moved sum (a certificate, no LP)
        assert torch.allclose(a @ V, z, atol=1e-5) and torch.allclose(a @ (c + V @ W_O), s, atol=1e-4)
        # outside: the nearest hull point (a QP in Euclidean distance) is clearly away
        mid = trace["resid_mid", layer][0, q].double().numpy()
        assert np.linalg.norm(mid - nearest_l2(mid, mapped.numpy())) > 1e-3
        xz = (x + z @ W_O).numpy()
        assert np.linalg.norm(xz - nearest_l2(xz, (V @ W_O).numpy())) > 1.0
    # the figure's head is the one giving the cue word the most weight from the query
    cue = n["tokens"].index(n["cue"])
    top = max(trace["pattern", layer][0, :, q, cue].max().item() for layer in range(model.cfg.n_layers))
    assert n["example"]["cue_weight"] == pytest.approx(top)


# ----------------------------------------------------------------------------------- running them


def test_run_loads_an_encoder_and_gpt_lessons_refuse_it(minilm, monkeypatch, tmp_path):
    import qkv.core.train.checkpoint as checkpoint

    assert set(lessons.REAL_LESSONS).isdisjoint(lessons.LESSONS)  # the demo runs LESSONS only: no extra needed
    assert set(lessons.titles("zh", real=True)) == set(lessons.ALL_LESSONS)
    asked = []
    monkeypatch.setattr(checkpoint, "load", lambda ref: asked.append(ref) or minilm)
    result = lessons.run("real-heads", lang="zh")
    assert asked == ["minilm"] and result.title == lessons.title("real-heads", "zh") and CHINESE.search(result.text)
    gpt_only = [  # the LLM lessons (their default is SmolLM2) are refused in test_lesson_llm.py
        name
        for name in lessons.ALL_LESSONS
        if lessons.lesson_module(name).READS == ("decoder",) and name not in lessons.LLM_LESSONS
    ]
    assert gpt_only == ["convex", "context", "heads", "dropout", "next-token"]
    assert lessons.reading("encoder") == ["embedding", "transform", "real-apple", "real-heads", "real-hull"]
    for name in gpt_only:
        lesson = lessons.lesson_module(name)
        assert lesson.NEEDS_MODEL is True and lesson.READS_WHY
        with pytest.raises(ValueError, match=f"lesson '{name}' reads a GPT, and minilm is an encoder: ") as e:
            lessons.run(name, ckpt="minilm", out=tmp_path)
        assert "\n" not in str(e.value) and str(lesson.READS_WHY) in str(e.value)
        zh = say_error(e.value, "zh")  # the same refusal in Chinese, its reason from the lesson's own words
        assert (
            zh.startswith(f"课程 '{name}' 读取的是一个 GPT")
            and catalogue("zh", lesson.READS_WHY.key.rpartition(".")[0])["reads_why"] in zh
            and not re.search(r"[A-Za-z]{3,} [A-Za-z]{3,} [A-Za-z]{3,}", zh)
        )
        assert str(e.value).endswith(
            "; the lessons for an encoder: embedding, transform, real-apple, real-heads, real-hull"
        )
    monkeypatch.undo()

    from qkv.core.hub.bundled import default_ckpt

    gpt = checkpoint.load(default_ckpt())
    monkeypatch.setattr(checkpoint, "load", lambda ref: gpt)
    with pytest.raises(
        ValueError,
        match=r"lesson 'real-apple' reads an encoder, and runs/some-gpt is a GPT; without --ckpt it reads minilm",
    ):
        lessons.run("real-apple", ckpt="runs/some-gpt")
