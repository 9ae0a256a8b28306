"""The lessons that train their own models: why-v, order, residual.

Each lesson runs once (module-scoped fixture, caches cleared so the time is real) and its measured
claims are asserted. The Chinese run reuses the cached measurements, so it only renders text; the
sentences that depend on the numbers are checked by saying them again from changed numbers.
"""

import copy
import json
import math
import re

import pytest
import torch

from qkv import lessons
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.lessons import lesson_module
from qkv.lessons.common.training import fit, tokenize
from qkv.presentation.i18n import t

pytestmark = [pytest.mark.slow]

HAN = re.compile("[\u4e00-\u9fff]")


def _run(name, out):
    lesson_module(name).measure.cache_clear()
    return lessons.run(name, lang="en", out=out)  # run times: benchmarks/lessons_time.py


@pytest.fixture(scope="module")
def why_v(tmp_path_factory):
    return _run("why-v", tmp_path_factory.mktemp("why_v"))


@pytest.fixture(scope="module")
def order(tmp_path_factory):
    return _run("order", tmp_path_factory.mktemp("order"))


@pytest.fixture(scope="module")
def residual(tmp_path_factory):
    return _run("residual", tmp_path_factory.mktemp("residual"))


def _common(result, name):
    assert result.name == name and result.lang == "en"
    assert result.text and result.headline and result.title
    assert not HAN.search(result.headline)
    assert len(result.figures) == 1 and result.figures[0].exists() and result.figures[0].stat().st_size > 10_000
    json.dumps(result.to_json())  # every number serialisable
    view, n = lessons.view_module(name), lessons.result_type(name).from_numbers(json.loads(json.dumps(result.numbers)))
    assert (view.text(n, "en"), view.headline(n, "en")) == (result.text, result.headline)  # said from the numbers alone


# ------------------------------------------------------------------ why-v


def test_why_v_measures_both_models(why_v):
    result = why_v
    _common(result, "why-v")
    n = result.numbers
    assert [pair["d_head"] for pair in n["pairs"]] == [16, 2]
    assert list(n["probes"]) == ["sense", "association", "order"]
    for pair in n["pairs"]:
        for kind in ("v", "k"):
            m = pair[kind]
            assert math.isfinite(m["train_loss"]) and math.isfinite(m["val_loss"])
            assert list(m["acc"]) == ["sense", "association", "order"]
            assert all(0.0 <= a <= 1.0 for a in m["acc"].values())
            assert m["mean_acc"] == pytest.approx(sum(m["acc"].values()) / 3)
        assert pair["k"]["params"] < pair["v"]["params"]  # no W_V
        assert pair["val_gap"] == pair["k"]["val_loss"] - pair["v"]["val_loss"]
        assert f"{pair['v']['val_loss']:.3f}" in result.headline and f"{pair['k']['val_loss']:.3f}" in result.headline
        assert len(pair["v"]["losses"]) == n["steps"]  # the curve the figure draws


def test_why_v_separate_values_help(why_v):
    # held for seeds 0-3 (gaps 0.026-0.057 nats at this budget); the test runs seed 0
    n = why_v.numbers
    wide, narrow = n["pairs"]
    assert wide["v"]["val_loss"] < wide["k"]["val_loss"]
    assert narrow["v"]["val_loss"] < narrow["k"]["val_loss"]
    # the conclusion follows the numbers: swap the two models of every pair and "better" turns into "worse"
    swapped = copy.deepcopy(n)
    for pair in swapped["pairs"]:
        pair["val_gap"] = -pair["val_gap"]
        pair["v"]["mean_acc"], pair["k"]["mean_acc"] = pair["k"]["mean_acc"], pair["v"]["mean_acc"]
    better, worse = t("lessons.why_v.better", "en"), t("lessons.why_v.worse", "en")
    assert why_v.text.count(better) >= 1  # measured: gaps 0.028 and 0.057 nats, probes 75% vs 60%, 66% vs 54%
    assert why_v.text.count(better) == lessons.view_module("why-v").text(
        lessons.result_type("why-v").from_numbers(swapped), "en"
    ).count(worse)


# ------------------------------------------------------------------ order


def test_order_permutation_equivariance(order):
    result = order
    _common(result, "order")
    n = result.numbers
    assert n["perm_none"] < 1e-5  # no positions, no mask: permuting the ids permutes the logits
    assert n["perm_learned"] > 1e-3  # learned positions break it
    assert n["perm_none_causal"] > 1e-3  # and so does the causal mask


def test_order_probes(order):
    n = order.numbers
    m = n["models"]
    assert list(m) == n["runs"] == ["none", "learned", "sinusoidal", "rope", "none2"]
    for pos in ("learned", "sinusoidal", "rope"):
        assert m[pos]["acc"] >= 0.95, pos
    # one layer, no positions: both members of a pair get the same scores, so exactly one is right
    assert m["none"]["acc"] == 0.5 and m["none"]["apart"] == 0.0
    assert m["none"]["pair_diff"] < 1e-4
    assert 0.0 <= m["none2"]["acc"] <= 1.0 and f"{100 * m['none2']['acc']:.0f}%" in order.text
    # which sentence the two-layer model gets depends on its accuracy
    view = lessons.view_module("order")
    for acc, key in ((0.3, "lessons.order.leak_none"), (0.9, "lessons.order.leak_found")):
        changed = copy.deepcopy(n)
        changed["models"]["none2"]["acc"] = acc
        assert t(key, "zh", acc_none2=acc) in view.text(lessons.result_type("order").from_numbers(changed), "zh")


def test_order_rope_depends_on_offset_only(order):
    n = order.numbers
    assert n["rope_shift_dev"] < 1e-5
    assert n["additive_shift_dev"] > 1e-2


# ------------------------------------------------------------------ residual


def test_residual_full_block_trains_best(residual):
    result = residual
    _common(result, "residual")
    n = result.numbers
    m = n["models"]
    assert list(m) == n["variants"] == ["both", "residual", "norm", "neither"]
    for name in ("both", "residual", "norm", "neither"):
        assert math.isfinite(m[name]["val_loss"]) and math.isfinite(m[name]["early_loss"])
        assert len(m[name]["losses"]) == n["steps"]  # the curve the figure draws
    assert m["both"]["val_loss"] < m["neither"]["val_loss"]
    assert m["both"]["train_loss"] < m["neither"]["train_loss"]
    assert m["both"]["val_loss"] < n["unigram_loss"] - 1.0  # it learned far more than word frequencies
    assert m["both"]["early_loss"] < m["neither"]["early_loss"]
    assert n["best"] == "both" and f"'residual + LayerNorm' ({m['both']['val_loss']:.2f})" in result.text


# ------------------------------------------------------------------ both languages


@pytest.mark.parametrize("name", ["why-v", "order", "residual"])
def test_chinese_text(name, why_v, order, residual):
    zh = lessons.run(name, lang="zh")  # the measurements are cached: this only renders
    en = {"why-v": why_v, "order": order, "residual": residual}[name]
    assert HAN.search(zh.text) and HAN.search(zh.headline) and HAN.search(zh.title)
    assert zh.numbers == en.numbers and zh.figures == []
    assert zh.title == lessons.title(name, "zh") != lessons.title(name, "en")


def test_bad_language():
    with pytest.raises(ValueError, match="fr"):
        lessons.run("order", lang="fr")


# ------------------------------------------------------------------ the training helper


def test_fit_is_deterministic_and_learns():
    tok, ids = tokenize("我 打了 你 ， 你 哭了 。\n你 打了 我 ， 我 哭了 。\n" * 40)
    assert " " not in [tok.decode([i]) for i in ids.tolist()]  # single spaces are not tokens
    cfg = ModelConfig(d_vocab=tok.vocab_size, n_ctx=8, d_model=16, n_heads=2, n_layers=1)
    tc = TrainConfig(steps=40, batch_size=4, lr=1e-2, min_lr=1e-3, warmup_steps=5, eval_steps=2)
    a, b = fit(ids, cfg, tc, seed=3), fit(ids, cfg, tc, seed=3)
    # bit for bit by construction: the same process, thread count, seeds and operations
    assert a.losses == b.losses and a.val_loss == b.val_loss
    assert all(torch.equal(p, q) for p, q in zip(a.model.parameters(), b.model.parameters()))
    assert a.loss_after(40, window=10) < a.losses[0]


def _small():
    tok, ids = tokenize("我 打了 你 ， 你 哭了 。\n你 打了 我 ， 我 哭了 。\n" * 40)
    cfg = ModelConfig(d_vocab=tok.vocab_size, n_ctx=8, d_model=16, n_heads=2, n_layers=1)
    tc = TrainConfig(steps=30, batch_size=4, lr=1e-2, min_lr=1e-3, warmup_steps=5, eval_steps=2, eval_interval=10)
    return tok, ids, cfg, tc


def test_fit_evaluates_and_watches_when_asked():
    _, ids, cfg, tc = _small()
    seen = []
    f = fit(ids, cfg, tc, seed=1, eval_every=10, watch=lambda step, model: seen.append(step), watch_every=10)
    assert seen == [0, 10, 20, 30] and [s for s, _, _ in f.evals] == [10, 20, 30]
    assert f.evals[-1] == (30, f.train_loss, f.val_loss) and len(f.losses) == 30
    plain = fit(ids, cfg, tc, seed=1)  # watching and evaluating change no number
    assert plain.losses == f.losses and plain.evals == [f.evals[-1]]


def test_fit_is_the_trainers_loop_in_memory(tmp_path):
    """fit and run_loop (what `qkv train` runs) drive the same loop: the same seed gives the same
    steps (the log's losses, rounded as it rounds them), evaluations and weights, bit for bit."""
    from qkv.core.model.gpt import GPT
    from qkv.core.text.batches import split_ids
    from qkv.core.train.lm import LMData
    from qkv.core.train.loop import Run, Start, run_loop

    tok, ids, cfg, tc = _small()
    f = fit(ids, cfg, tc, seed=tc.seed)
    torch.manual_seed(tc.seed)
    model = GPT(cfg)
    train_ids, val_ids = split_ids(ids, tc.val_fraction, cfg.n_ctx)
    run = Run(Start(model, tok, tc), LMData(train_ids, val_ids, tc, cfg.n_ctx), tc.steps, torch.device("cpu"), {})
    result = run_loop(tmp_path, run, progress=False)
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [e["loss"] for e in log if "loss" in e] == [round(x, 6) for x in f.losses]
    assert [e["step"] for e in log if "train_loss" in e] == [10, 20, 30]
    assert (result.train_loss, result.val_loss) == (f.train_loss, f.val_loss)
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), f.model.parameters()))


def test_a_lessons_threads_are_fixed_and_given_back():
    from qkv.core.machine import threads

    before = torch.get_num_threads()
    with threads.fixed(1):
        assert torch.get_num_threads() == 1
        tiny = torch.tensor([1e-39]) * torch.tensor([1.0])  # subnormal: flushed to zero
        assert tiny.item() == 0.0
    assert torch.get_num_threads() == before
    assert (torch.tensor([1e-39]) * torch.tensor([1.0])).item() != 0.0
