"""Lesson "align": cross-attention against the gold word alignment, BLEU, 苹果 / 小米 / 黑莓, on the bundled
translation model.

The lesson runs once (English, with figures); its text and headline are said again from the JSON of its
numbers in both languages. The tests recompute its alignment accuracies sentence by sentence without
padding, its baselines with plain loops, and check that what the text claims holds in the numbers, that
the verdicts follow the numbers, and that the lesson and the language-model lessons refuse each other's models.
"""

from __future__ import annotations

import json
import re
import shutil
import sys

import numpy as np
import pytest
import torch

from qkv import lessons
from qkv.apps.cli import main
from qkv.core.text.corpus import pairs
from qkv.lessons.align import measure as align
from qkv.lessons.align.present import MARGIN
from qkv.presentation.i18n import t

pytestmark = [pytest.mark.slow]

CHINESE = re.compile(r"[\u4e00-\u9fff]")
BLEU_FLOOR = 90.0  # the bundled model translates the held-out pairs (nearly) word for word: BLEU 100.0


@pytest.fixture(scope="module")
def translate_ckpt():
    from qkv.core.hub.bundled import default_translate_ckpt

    try:
        return default_translate_ckpt()
    except ValueError as e:
        pytest.fail(f"the bundled translation model is needed by this lesson: {e}")


@pytest.fixture(scope="module")
def model(translate_ckpt):
    from qkv.core.train.checkpoint import load

    return load(translate_ckpt)


@pytest.fixture(scope="module")
def result(tmp_path_factory, translate_ckpt):
    """The lesson run once, on the bundled translation model (run() picks it), in English with figures."""
    return lessons.run("align", lang="en", out=tmp_path_factory.mktemp("align"))


def said(n, lang):
    view, n = lessons.view_module("align"), lessons.result_type("align").from_numbers(json.loads(json.dumps(n)))
    return view.text(n, lang), view.headline(n, lang)


def test_text_headline_and_figures(result):
    n = result.numbers
    assert (result.text, result.headline) == said(n, "en")
    zh, zh_head = said(n, "zh")
    assert lessons.title("align", "en") == result.title != lessons.title("align", "zh")
    assert CHINESE.search(zh) and CHINESE.search(zh_head) and "的" in zh
    prose = re.sub(r"「[^」]*」", "", zh)  # the quoted example sentences are English on purpose
    assert not re.search(r"\b(the|and|of)\b", prose), "the Chinese text should not be English prose"
    assert "{" not in result.text + result.headline + zh + zh_head  # every field was filled
    assert [p.name for p in result.figures] == ["align_matrix.png", "align_heads.png", "align_split.png"]
    for p in result.figures:
        assert p.exists() and p.stat().st_size > 1000, p
    assert result.to_json()["headline"] == result.headline  # the numbers serialise
    L, H = n["best"]
    assert f"L{L}H{H} {n['best_acc']:.3f}" in result.headline
    assert f"（层 {L} 头 {H}）{n['best_acc']:.3f}" in zh_head  # a Chinese reader reads 层 / 头, not L1H0
    for head in (result.headline, zh_head):
        assert f"{n['untrained_best_acc']:.3f}" in head
        assert f"{n['bleu_greedy']:.1f}" in head and f"{n['bleu_beam']:.1f}" in head
        assert f"{n['split_en']['food']} {n['senses']['小米']['food']['word']}/24" in head
    assert f"layer {L}, head {H}: {n['best_acc']:.3f}" in result.text and f"层 {L} 头 {H}：{n['best_acc']:.3f}" in zh


def test_what_the_text_claims(result):
    n = result.numbers
    # trained alignment far above the untrained model's and above chance; the text says so
    assert n["best_acc"] >= n["untrained_best_acc"] + MARGIN and n["best_acc"] > 2 * n["chance"]
    assert (
        t("lessons.align.far_above", "en", best_acc=n["best_acc"], untrained_best_acc=n["untrained_best_acc"])
        in result.text
    )
    assert n["untrained_best_acc"] < n["chance"] + 0.1  # an untrained head is about as good as a random pick
    # the translations are good, and beam search does not lose to greedy on its sentences
    assert n["bleu_greedy"] > BLEU_FLOOR and n["bleu_beam"] >= n["bleu_greedy_some"] - 1.0
    assert 0 < n["exact_greedy"] <= 1 and n["n_beam"] == len(range(0, n["n_pairs"], align.BEAM_EVERY))
    # the senses: every held-out sense pair counted once, 小米 comes out right in both senses
    for word in align.WORDS:
        for sense in align.SENSES:
            r = n["senses"][word][sense]
            assert r["n"] == 24 and 0 <= r["exact"] <= min(r["word"], r["tail"])  # exact: the word and the tail right
    assert n["senses"]["小米"]["food"]["en"] == "millet" and n["senses"]["小米"]["company"]["en"] == "xiaomi"
    assert n["senses"]["小米"]["food"]["word"] >= 20 and n["senses"]["小米"]["company"]["word"] >= 20
    # the kinds of link: on words with one counterpart the best head beats the diagonal, which wins on phrases
    single, phrase = n["links"]["single"], n["links"]["phrase"]
    assert sum(v["n"] for v in n["links"].values()) == sum(v["n"] for v in n["kinds"].values()) == n["n_words"]
    assert single["best"] > single["diagonal"] + 0.1 and "there it aligns by content, not by place" in result.text
    assert phrase["diagonal"] > phrase["best"] and "The diagonal does better inside phrases" in result.text
    assert n["comma_ahead"] > n["comma_missed"] / 2 and "already reading what it will write next" in result.text
    # the swapped 小米 sentences: the verb decides the word, and the decoder rewrites the tail to fit it
    sw = n["swap"]
    assert (
        sw["n"] == 48
        and sw["cue"] + sw["tail"] + sw["neither"] == sw["n"]
        and sw["faithful"] + sw["verb_tail"] <= sw["n"]
    )
    assert sw["cue"] > sw["n"] / 2 and "the verb decides" in result.text
    assert sw["faithful"] < sw["n"] / 2 < sw["verb_tail"] and "comes out as written in only" in result.text
    for s in align.SENSES:
        p = n["parts"][s]
        assert 0 <= p["cue"] <= p["cue_head_max"] <= 1 and p["word"] + p["cue"] + p["tail"] <= 1 + 1e-9
        assert p["cue"] < min(p["word"], p["tail"])
    assert "the verb that decides gets the least of the three" in result.text


@torch.no_grad()
def test_alignment_recomputed_sentence_by_sentence(result, model):
    """Each pair alone (no padding), plain loops over the gold links: the same accuracies as the batched lesson."""
    m, tok = model
    n = result.numbers
    items = align.usable(tok, pairs("heldout"))
    assert len(items) == n["n_pairs"] >= 200
    L, H = n["best"]
    head = mean = diagonal = words = 0
    chance = 0.0
    for p in items:
        src = torch.tensor([[tok.ids[w] for w in p.zh]])
        tgt = torch.tensor([[1] + [tok.ids[w] for w in p.en]])  # <s> + the gold English
        _, trace = m.run_with_trace(src, tgt)
        A = torch.stack(
            [trace[f"decoder.blocks.{k}.cross_attn.hook_pattern"][0] for k in range(m.cfg.n_layers)]
        ).double()
        for j in range(len(p.en)):
            gold = {z for z, e in p.links if e == j}
            if not gold:
                continue
            words += 1
            head += int(A[L, H, j].argmax()) in gold  # row j writes English word j
            mean += int(A[:, :, j].mean((0, 1)).argmax()) in gold
            diagonal += round(j * (len(p.zh) - 1) / max(len(p.en) - 1, 1)) in gold
            chance += len(gold) / len(p.zh)
    assert words == n["n_words"]
    tie = 1.5 / words  # float32 sums in another order may flip one near-tie of the argmax, not more
    assert head / words == pytest.approx(n["best_acc"], abs=tie)
    assert mean / words == pytest.approx(n["acc_mean"], abs=tie)
    assert diagonal / words == pytest.approx(n["diagonal"], abs=1e-12)
    assert chance / words == pytest.approx(n["chance"], abs=1e-12)
    acc = np.array(n["acc_heads"])
    assert acc.shape == (m.cfg.n_layers, m.cfg.n_heads) and acc.max() == n["best_acc"] and acc[L, H] == acc.max()
    assert (
        np.array(n["untrained_heads"]).shape == acc.shape
        and max(map(max, n["untrained_heads"])) == n["untrained_best_acc"]
    )


def test_untrained_model_is_seeded_and_leaves_the_global_rng(model):
    m, _ = model
    state = torch.get_rng_state()
    a, b = align.untrained(m, 0), align.untrained(m, 0)
    assert torch.equal(state, torch.get_rng_state())
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.embed.weight, m.embed.weight) and a.cfg == m.cfg


def test_greedy_batch_is_each_sentence_alone(model):
    from qkv.core.decode.translate import translate

    m, tok = model
    items = align.usable(tok, pairs("heldout"))[::40]
    batch = align.translate_all(m, tok, [p.zh for p in items])
    assert [" ".join(h) for h in batch] == [translate(m, tok, " ".join(p.zh)) for p in items]


def test_bleu_and_its_missing_package(monkeypatch):
    ref = [["i", "ate", "millet", "."], ["he", "joined", "xiaomi", "and", "its", "stock", "rose", "."]]
    assert align.bleu(ref, ref) == pytest.approx(100.0)
    assert align.bleu([["x"], ["y"]], ref) == pytest.approx(0.0)
    monkeypatch.setitem(sys.modules, "sacrebleu", None)  # as if it were not installed
    with pytest.raises(ValueError, match="pip install sacrebleu") as e:
        align.bleu(ref, ref)
    assert "\n" not in str(e.value)


def test_swapped_sentences_mix_the_senses():
    items = pairs("heldout")
    swaps = align.swapped(items)
    assert len(swaps) == 48 and {s for s, _, _ in swaps} == {"food", "company"}
    for sense, zh, tail in swaps:
        assert "小米" in zh and zh[-1] == "。"
        other = "company" if sense == "food" else "food"
        assert tail in align.tails(other) and tail not in align.tails(sense)


def test_verdicts_follow_the_numbers(result):
    n = dict(result.numbers)
    text = said({**n, "untrained_best_acc": n["best_acc"]}, "en")[0]
    assert t("lessons.align.not_far_above", "en", best_acc=n["best_acc"], untrained_best_acc=n["best_acc"]) in text
    low = {**n, "diagonal": 0.0, "acc_mean": n["best_acc"] - 0.01, "reads_best_acc": 1.0}
    text = said(low, "zh")[0]
    assert "它也高于对角线" in text and "平均并没有把对齐冲淡" in text and "才去查它的来源" in text
    text = said({**n, "acc_mean": n["best_acc"] - 0.1}, "en")[0]
    assert "not every head aligns" in text
    swap = {**n["swap"], "cue": 0, "tail": 48, "neither": 0, "faithful": 48}
    text = said({**n, "swap": swap}, "en")[0]
    assert "the tail decides, not the verb" in text and "comes out as written in 48 of 48" in text
    assert "the verb that decides" not in text.lower()  # no sentence about a deciding verb when the tail decided
    # neither clue decides and the tail is rarely kept, but not rewritten either: no claim that it was rewritten
    swap = {**n["swap"], "cue": 20, "tail": 20, "neither": 8, "faithful": 2, "verb_tail": 0}
    text = said({**n, "swap": swap}, "en")[0]
    assert "neither clue decides alone" in text and "the rest are neither" in text
    assert "writes a tail of the verb's sense instead" not in text and "the verb that decides" not in text.lower()


def test_models_are_refused_in_one_line(translate_ckpt, tmp_path):
    from qkv.core.hub.bundled import default_ckpt

    with pytest.raises(ValueError, match=r"reads a translation model \(encoder-decoder\), and .* is a GPT") as e:
        lessons.run("align", ckpt=default_ckpt())
    assert "\n" not in str(e.value)
    for name in ("convex", "embedding"):
        with pytest.raises(
            ValueError,
            match=r"is a translation model \(encoder-decoder\).*; the lessons for a translation model "
            r"\(encoder-decoder\): align$",
        ) as e:
            lessons.run(name, ckpt=translate_ckpt)
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="lesson 'real-heads' reads an encoder, and .* is a translation model"):
        lessons.run("real-heads", ckpt=translate_ckpt)
    # a translation model of the other direction
    other = tmp_path / "en-zh"
    shutil.copytree(translate_ckpt, other)
    config = json.loads((other / "config.json").read_text(encoding="utf-8"))
    config["task"] = {"kind": "translate", "source": "en", "target": "zh"}
    (other / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError, match="reads a zh→en translation model, and .* translates en→zh"):
        lessons.run("align", ckpt=other)


def test_cli_lesson_align(result, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(align, "measure", lambda model, tokenizer, seed: result.measured)  # measured once, above
    assert main(["lesson", "align", "--lang", "zh", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert lessons.title("align", "zh") in out and said(result.numbers, "zh")[1] in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["align_heads.png", "align_matrix.png", "align_split.png"]
    assert main(["lesson", "--list"]) == 0 and "align" in capsys.readouterr().out.split()
