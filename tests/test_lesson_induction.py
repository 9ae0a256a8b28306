"""The induction lesson: a two-layer attention-only model forms an induction head at a point in training
where its in-context loss drops; a one-layer model forms neither; switching the head off removes the gain.

The lesson trains once (module fixture, cache cleared so that the time is real: ~30 s on one core) and its
claims are asserted from the measured numbers; the pieces it measures with are checked against routes of
their own (cross-entropy by torch, a head switched off by a raw torch hook on W_O, the induction score from
the patterns by hand, the repeat in a window). Measured for seeds 0-2 on tiny Shakespeare and on Python's
documentation (the fallback; the test runs seed 0 on whichever this machine has): the best induction score
ends at 0.14-0.18 against 0.014 for an even spread, the 1-layer model never above 0.02; half of the rise at
steps 1100-1500, within 100 steps of half of the gap's fall; 10% to 90% of the rise within 1100-1400 steps;
in-context gap -2.1 to -3.5 nats (1 layer: 0.0 to -0.5); the induction head off leaves 0-20% of the gap on
Shakespeare and 10-55% on Python's documentation (seed 0: 16% and 10%), the other layer-1 head off 79-107%.
Measured again for issue 32 (benchmarks/induction_spread.py), seeds 0-4 on tiny Shakespeare: best score
0.142-0.180, gap -2.65 to -3.43, the induction head off leaves 0-38% (seed 3: 38%, its other heads 52-56%), the
induction head L1 H0 for seeds 0, 2, 3 and L1 H1 for 1, 4; seed 0 with AVX2 or plain SSE kernels instead of AVX-512:
the same printed digits; seed 0 on Python's documentation: 0.144, L1 H1, 10% (what an installed package prints).
"""

import copy
import json
import re
import sys

import pytest
import torch
import torch.nn.functional as F

from qkv import lessons
from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig
from qkv.lessons.induction import measure as induction
from qkv.presentation.i18n import t

pytestmark = [pytest.mark.slow]

HAN = re.compile("[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    induction.measure.cache_clear()
    return lessons.run("induction", lang="en", out=tmp_path_factory.mktemp("induction"))


def _tail(values, k=5):
    return values[-k:]


# ------------------------------------------------------------------ the claims


def test_two_layers_form_an_induction_head(result):
    n = result.numbers
    two, one = n["models"]["two"], n["models"]["one"]
    assert [m["n_layers"] for m in n["models"].values()] == [1, 2]
    assert len(two["probes"]) == n["steps"] // n["probe_every"] + 1 >= 15  # 15-30 measurements
    early = max(two["best"][:5])  # steps 0-400
    late = min(_tail(two["best"]))  # the last 5 measurements
    assert early < 3 * n["baseline"]  # at first no head does much better than an even spread
    assert late > 4 * early and late > 6 * n["baseline"]
    assert late > 4 * max(one["best"])  # the one-layer model never gets there
    assert max(one["best"]) < 3 * n["baseline"]
    head, last = n["induction_head"], two["probes"][-1]["induction"]
    assert head["layer"] == 1 and head["score"] == pytest.approx(last[1][head["head"]]) == pytest.approx(late, rel=0.2)
    assert max(last[0]) < 2 * n["baseline"]  # no head of layer 0 does it: there is no previous token to read yet


def test_the_rise_is_sharp_and_comes_with_the_loss_drop(result):
    n = result.numbers
    steps, rise = n["steps"], n["rise"]
    assert 0.15 * steps <= rise["middle"] <= 0.85 * steps  # a point inside training, not at either end
    assert rise["end"] - rise["start"] <= steps / 2  # 10% to 90% within half of training (measured 700-1200)
    # the gap falls at the same time: half of its fall within 3 measurements of half of the score's rise
    assert abs(n["gap_rise"]["middle"] - rise["middle"]) <= 3 * n["probe_every"]
    before = n["models"]["two"]["probes"][n["probe_steps"].index(rise["start"]) - 1]
    assert before["gap"] > -1.0  # before the rise the second copy is hardly cheaper than the first


def test_second_copy_far_cheaper_with_two_layers_only(result):
    n = result.numbers
    two, one = n["models"]["two"]["probes"][-1], n["models"]["one"]["probes"][-1]
    assert two["second"] < two["first"] - 1.5  # measured 2.1-3.5 nats
    assert one["gap"] > -1.0 and two["gap"] < one["gap"] - 1.5  # one layer gains little from the context
    for p in (two, one):
        assert p["gap"] == pytest.approx(p["second"] - p["first"])


def test_switching_the_induction_head_off_removes_the_gain(result):
    n = result.numbers
    off = {(a["layer"], a["head"]): a for a in n["ablation"]}
    assert sorted(off) == [(layer, head) for layer in range(2) for head in range(n["n_heads"])]
    assert all(a["gap"] == pytest.approx(a["second"] - a["first"]) for a in n["ablation"])
    ind = off[(n["induction_head"]["layer"], n["induction_head"]["head"])]
    gap = n["models"]["two"]["probes"][-1]["gap"]
    assert ind["role"] == "induction" and ind["kept"] == pytest.approx(ind["gap"] / gap)
    assert ind["kept"] < 0.3  # most of the gap is gone
    assert abs(ind["second"] - ind["first"]) < 1.0  # the second copy is back near the first's loss
    other_layer_1 = [a for a in n["ablation"] if a["layer"] == 1 and a["role"] != "induction"]
    assert other_layer_1 and all(a["kept"] > 0.7 for a in other_layer_1)  # another head: the gain stays
    assert n["kept"] == ind["kept"] and n["kept_other"] == min(a["kept"] for a in n["ablation"] if a["role"] == "other")


# ------------------------------------------------------------------ said and drawn from the numbers


def _flat(text: str) -> str:
    return " ".join(text.split())  # the text's own line breaks do not matter


def test_text_says_the_measured_numbers(result):
    n, text = result.numbers, _flat(result.text)
    two, one = n["models"]["two"]["probes"][-1], n["models"]["one"]["probes"][-1]
    assert f"then rose to {n['rise']['to']:.3f}" in text
    assert f"by steps {n['rise']['start']}, {n['rise']['middle']} and {n['rise']['end']}" in text
    assert f"{two['first']:.2f} on the first copy and {two['second']:.2f} on the second (gap {two['gap']:+.2f})" in text
    assert f"{one['first']:.2f} and {one['second']:.2f} (gap {one['gap']:+.2f})" in text
    assert f"{100 * n['kept']:.0f}% of the gap is left" in text
    assert f"{n['rise']['to']:.3f}" in result.headline and f"{two['gap']:+.2f}" in result.headline
    source = {"shakespeare": "source_shakespeare", "python_docs": "source_python_docs", "corpus": "source_corpus"}[
        n["source"]
    ]
    assert _flat(t(f"lessons.induction.{source}", "en")) in text
    assert [p.name for p in result.figures] == ["induction_training.png", "induction_ablation.png"]
    assert all(p.stat().st_size > 10_000 for p in result.figures)
    view, back = lessons.view_module("induction"), json.loads(json.dumps(result.to_json()["numbers"]))
    back = lessons.result_type("induction").from_numbers(back)
    assert (view.text(back, "en"), view.headline(back, "en")) == (result.text, result.headline)


def test_sentences_follow_the_numbers(result):
    view, n = lessons.view_module("induction"), copy.deepcopy(result.numbers)
    typed = lessons.result_type("induction").from_numbers
    assert t("lessons.induction.together", "en") in result.text and "removes the gain" in result.text
    n["kept"] = 0.8  # the head off would leave most of the gap: the text must not say it removes it
    text = _flat(view.text(typed(n), "en"))
    assert "removes the gain" not in text and "leaves 80% of the gap" in text
    n["models"]["one"]["best"] = [0.2] * len(n["models"]["one"]["best"])
    assert "Even the one-layer model reached an induction score of 0.200" in _flat(view.text(typed(n), "en"))


def test_chinese_text(result):
    zh = lessons.run("induction", lang="zh")  # the measurements are cached: this only renders
    n = result.numbers
    assert zh.numbers == n and zh.figures == [] and HAN.search(zh.headline)
    assert len(HAN.findall(zh.text)) > 400
    text = _flat(zh.text)
    r = n["rise"]
    assert f"随后升到 {r['to']:.3f}" in text and f"第 {r['start']}、{r['middle']}、{r['end']} 步" in text
    assert f"差距只剩 {100 * n['kept']:.0f}%" in text
    assert f"{n['models']['two']['probes'][-1]['gap']:+.2f}" in zh.headline
    assert zh.title == lessons.title("induction", "zh") != lessons.title("induction", "en")


def test_the_text_says_how_far_another_run_may_move(result):
    """The numbers move with the seed and with the text it trains on: the text states the ranges measured
    over seeds on tiny Shakespeare (present.SPREAD), this run lies inside them, another text is told apart
    from the documented figures, and the headline names the text and the induction head by its layer (which
    head of layer 1 it is changes with the seed)."""
    from qkv.lessons.induction.present import SPREAD

    view, n = lessons.view_module("induction"), copy.deepcopy(result.numbers)
    text, ind = _flat(result.text), n["induction_head"]
    assert f"layer 1's induction head (H{ind['head']} in this run) off" in result.headline
    if n["source"] == "shakespeare":
        assert result.headline.startswith("On tiny Shakespeare, 2 layers:")
        lo, hi = SPREAD["score"]
        seeds = f"over seeds {SPREAD['seeds'][0]} to {SPREAD['seeds'][1]}"
        assert f"ended between {lo:.2f} and {hi:.2f}" in text and seeds in text.lower()
        assert lo - 0.005 <= n["rise"]["to"] <= hi + 0.005
        assert SPREAD["gap"][0] - 0.005 <= n["models"]["two"]["probes"][-1]["gap"] <= SPREAD["gap"][1] + 0.005
        assert SPREAD["kept"][0] - 0.005 <= n["kept"] <= SPREAD["kept"][1] + 0.005
    n["source"] = "python_docs"  # ranges measured on tiny Shakespeare are not claimed for another text
    typed = lessons.result_type("induction").from_numbers(n)
    other, zh = _flat(view.text(typed, "en")), _flat(view.text(typed, "zh"))
    assert "These numbers are one run's, on Python's documentation" in other and "ended between" not in other
    assert "docs/lessons.md" in other and "这一次运行的数字" in zh and "最后落在" not in zh
    assert f"关掉层 1 的归纳头（这次是头 {ind['head']}）" in view.headline(typed, "zh")
    assert view.headline(typed, "en").startswith("On Python's documentation, 2 layers:")  # which text it read
    assert view.headline(typed, "zh").startswith("在 Python 文档上，两层：")


# ------------------------------------------------------------------ the pieces, by other routes


def _model(n_layers=2, seed=0):
    torch.manual_seed(seed)
    cfg = ModelConfig(d_vocab=20, n_ctx=32, d_model=16, n_heads=2, n_layers=n_layers, mlp="none")
    return GPT(cfg).eval()


def _tokens(seed=0, half=6, n=3, vocab=20):
    g = torch.Generator().manual_seed(seed)
    rows = [torch.randperm(vocab, generator=g)[: half + 1] for _ in range(n)]
    return torch.stack([torch.cat([r, r[1:]]) for r in rows])  # [f, r_1 .. r_half, r_1 .. r_half]


def test_half_losses_by_cross_entropy():
    model, tokens = _model(), _tokens()
    half = (tokens.shape[1] - 1) // 2
    with torch.no_grad():
        logits = model(tokens)
    ce = lambda pos: F.cross_entropy(logits[:, pos - 1].double(), tokens[:, pos]).item()  # token at pos
    first = sum(ce(p) for p in range(2, half + 1)) / (half - 1)  # r_2 .. r_half, first time
    second = sum(ce(p) for p in range(half + 2, 2 * half + 1)) / (half - 1)  # ... and again
    assert induction.half_losses(model, tokens) == pytest.approx((first, second), abs=1e-6)


def test_head_off_by_a_raw_torch_hook():
    """ablations() switches a head off through qkv's hooks (heads_off); a forward pre-hook on that layer's
    W_O that zeroes the head's slice of the concatenated z must give the same losses."""
    model, tokens = _model(), _tokens()
    d_head = model.cfg.d_head
    for layer, head, first_off, second_off in induction.ablations(model, tokens):

        def zero(module, args, h=head):
            (z,) = args  # (B, T, n_heads * d_head): the heads side by side
            z = z.clone()
            z[..., h * d_head : (h + 1) * d_head] = 0.0
            return (z,)

        handle = model.blocks[layer].attn.W_O.register_forward_pre_hook(zero)
        try:
            first, second = induction.half_losses(model, tokens)
        finally:
            handle.remove()
        assert (first_off, second_off) == pytest.approx((first, second), abs=1e-5)
    assert induction.half_losses(model, tokens) != (first_off, second_off)  # the hooks are gone again


def test_probe_scores_by_hand():
    """The induction score of TransformerLens's detector, from the patterns directly: with distinct random
    tokens the only keys it counts are j = i - half + 1 for the queries i of the second copy."""
    model, tokens = _model(), _tokens()
    B, T = tokens.shape
    half = (T - 1) // 2
    _, trace = model.run_with_trace(tokens)
    got = induction.probe(model, tokens).induction
    for layer in range(2):
        A = trace["pattern", layer].double()  # (B, n_heads, T, T)
        q = torch.arange(half + 1, T)
        by_hand = A[:, :, q, q - half + 1].sum(-1).mean(0) / T  # (n_heads,): weight on the targets / all weight
        assert got[layer] == pytest.approx(by_hand.tolist(), abs=1e-9)


def test_with_repeat_writes_one_stretch_again():
    W = 65
    window = torch.arange(4 * W).reshape(4, W)  # distinct ids: every copied stretch shows where it came from
    out = induction.with_repeat(window, torch.Generator().manual_seed(3))
    for row, new in zip(window, out):
        changed = (row != new).nonzero().flatten().tolist()
        d, m = changed[0], len(changed)
        s = int(new[d] - row[0])  # where the copy was taken from
        assert changed == list(range(d, d + m)) and induction.REPEAT[0] <= m <= induction.REPEAT[1]
        assert s + m <= W // 2 and s + m <= d  # from the first half, written after its own end
        assert torch.equal(new[d : d + m], row[s : s + m])


def test_rise():
    steps = [0, 100, 200, 300, 400]
    r = induction.rise(steps, [0.0, 0.0, 0.5, 0.9, 1.0])
    assert (r.start, r.middle, r.end) == (200, 200, 300) and (r.from_, r.to) == (0.0, 1.0)
    assert list(r.to_numbers()) == ["from", "to", "start", "middle", "end"]  # the JSON's names, in its order


def test_training_text_falls_back(monkeypatch, tmp_path):
    """tiny Shakespeare where the checkout keeps it; else Python's documentation; else the built-in corpus."""
    path = tmp_path / "tiny.txt"
    path.write_text("First Citizen:\nBefore we proceed any further, hear me speak.\n", encoding="utf-8")
    monkeypatch.setattr(induction, "SHAKESPEARE", path)
    assert induction.training_text() == ("shakespeare", path.read_text(encoding="utf-8"))
    monkeypatch.setattr(induction, "SHAKESPEARE", tmp_path / "missing.txt")
    name, text = induction.training_text()
    assert name == "python_docs" and len(text) > 100_000 and "assignment" in text
    monkeypatch.setitem(sys.modules, "pydoc_data.topics", None)  # a Python without its help topics
    name, text = induction.training_text()
    assert name == "corpus" and len(text) > 100_000
    assert set(induction.SOURCES) == set(lessons.view_module("induction").sources("en"))
