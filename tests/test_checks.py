"""Tests for qkv.check: the invariants hold on real traces, and broken ones are reported."""

from __future__ import annotations

import pytest
import torch

from qkv import GPT, ModelConfig
from qkv.core.see.invariants import check

IDS = torch.randint(0, 19, (2, 9), generator=torch.Generator().manual_seed(3))


def model_for(**kw) -> GPT:
    torch.manual_seed(0)
    cfg = dict(d_vocab=19, n_ctx=12, d_model=16, n_heads=2, n_layers=2, init_std=0.3)
    return GPT(ModelConfig(**{**cfg, **kw}))


def by_name(report, name, layer=0):
    return next(i for i in report.items if i.name.startswith(name) and i.layer == layer)


@pytest.mark.parametrize("pos", ["learned", "sinusoidal", "rope", "none"])
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_every_invariant_holds_in_eval_mode(pos, norm):
    model = model_for(pos=pos, norm=norm).eval()
    _, trace = model.run_with_trace(IDS)
    report = check(trace)
    assert report.passed, str(report)
    names = {i.name for i in report.items}
    assert {
        "rows sum to 1",
        "masked weights are 0",
        "z lies in the convex hull of the values",
        "heads' results + b_O = attn_out",
    } <= names
    hull = by_name(report, "z lies")
    assert hull.checked == 2 * 2 * 9  # every (sequence, head, position)
    assert not report.training and "evaluation mode" in str(report)


def test_non_causal_model_checks_all_keys():
    _, trace = model_for(causal=False, pos="none").eval().run_with_trace(IDS)
    report = check(trace)
    assert report.passed and not any(i.name.startswith("masked") for i in report.items)


def test_attention_dropout_breaks_rows_and_may_leave_the_hull():
    model = model_for(dropout_attn=0.5).train()
    torch.manual_seed(0)
    _, trace = model.run_with_trace(IDS)
    report = check(trace)
    rows = by_name(report, "rows sum to 1")
    assert not rows.passed and rows.failures and rows.worst > 0.1
    b, h, i, total = rows.failures[0]
    assert abs(trace["pattern", 0][b, h, i].sum().item() - total) < 1e-5 and abs(total - 1) > 1e-5
    assert report.training and "training mode" in str(report)
    # the residual sums still hold: there is no residual dropout here
    assert by_name(report, "resid_mid").passed
    # evaluation mode restores every invariant
    _, trace = model.eval().run_with_trace(IDS)
    assert check(trace).passed


def test_some_z_leaves_the_hull_under_dropout():
    model = model_for(dropout_attn=0.6, init_std=1.0).train()
    torch.manual_seed(1)
    _, trace = model.run_with_trace(torch.randint(0, 19, (4, 12), generator=torch.Generator().manual_seed(0)))
    hull = by_name(check(trace), "z lies")
    assert not hull.passed and hull.worst > 1e-3


def test_residual_dropout_breaks_the_residual_sum():
    model = model_for(dropout_resid=0.5).train()
    _, trace = model.run_with_trace(IDS)
    report = check(trace)
    assert not by_name(report, "resid_mid").passed
    assert by_name(report, "rows sum to 1").passed


def test_a_point_outside_the_hull_is_reported_outside():
    model = model_for().eval()
    _, trace = model.run_with_trace(IDS)
    z = trace["blocks.1.attn.hook_z"]
    v = trace["v", 1]
    z[1, 5, 0] = v[1, :6, 0].max(0).values + 1.0  # beyond every value, coordinate by coordinate
    report = check(trace)
    hull = by_name(report, "z lies", layer=1)
    assert not hull.passed and [f[:3] for f in hull.failures] == [(1, 0, 5)]
    assert by_name(report, "z lies", layer=0).passed


def test_a_broken_row_and_a_mask_leak_are_reported():
    _, trace = model_for().eval().run_with_trace(IDS)
    pattern = trace["pattern", 0]
    pattern[0, 1, 3, 0] += 0.2  # row (0, 1, 3) now sums to 1.2
    pattern[1, 0, 2, 7] = 0.05  # a weight on a future token
    report = check(trace)
    rows = by_name(report, "rows sum to 1")
    assert (0, 1, 3) in [f[:3] for f in rows.failures]
    assert not by_name(report, "masked").passed
    assert report.to_json()["passed"] is False


def test_hull_check_spreads_over_at_most_max_points():
    _, trace = model_for().eval().run_with_trace(IDS)
    report = check(trace, max_hull_points=10)
    assert by_name(report, "z lies").checked == 10
