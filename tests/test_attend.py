"""qkv.attend (qkv.analysis.attend, shown by qkv.presentation.derivation): one query's attention derived step by
step, checked against the seed's worked example."""

import contextlib
import dataclasses
import io
import json
import math
import re

import numpy as np
import pytest
import torch

import qkv
from qkv.apps.cli import commands
from qkv.apps.cli.parser import build_parser
from qkv.core.see.hull import HullResult
from qkv.presentation.derivation import attend

# the seed's example: q = (√2, 0), keys (ln 2, 0), (0, 1), (0, −1), values the triangle (0,0), (4,0), (0,4)
SEED = dict(q="sqrt(2),0", K="ln(2),0; 0,1; 0,-1", V="0,0; 4,0; 0,4")


def test_seed_numbers():
    d = attend(**SEED)
    assert d.d_k == 2.0
    np.testing.assert_allclose(d.scores, [math.log(2), 0, 0], atol=1e-12)
    np.testing.assert_allclose(d.weights, [1 / 2, 1 / 4, 1 / 4], atol=1e-12)
    np.testing.assert_allclose(d.z, [1, 1], atol=1e-12)
    np.testing.assert_allclose(d.exps, [2, 1, 1], atol=1e-12)
    np.testing.assert_allclose(d.exps_shifted, [1, 1 / 2, 1 / 2], atol=1e-12)
    assert d.hull.inside and d.hull.distance == 0.0
    np.testing.assert_allclose(d.hull.weights, [1 / 2, 1 / 4, 1 / 4], atol=1e-12)


def test_inputs_in_any_form_agree():
    q, K, V = [math.sqrt(2), 0], [[math.log(2), 0], [0, 1], [0, -1]], [[0, 0], [4, 0], [0, 4]]
    for args in [
        (q, K, V),
        (np.array(q), np.array(K), np.array(V)),
        (torch.tensor(q), torch.tensor(K), torch.tensor(V)),
        (["sqrt(2)", "0"], K, V),
    ]:
        np.testing.assert_allclose(attend(*args).z, [1, 1], atol=1e-12)


@pytest.mark.parametrize(
    "lang, words",
    [
        ("en", ["Match", "convex hull", "W_O", "residual", "dropout"]),
        ("zh", ["匹配", "凸包", "W_O", "残差", "dropout", "归一化"]),
    ],
)
def test_seed_text(lang, words):
    text = attend(**SEED).to_text(lang)
    for shown in [
        "q = (√2, 0)",
        "k1 = (ln 2, 0)",
        "s = (ln 2, 0, 0)",
        "e^s = (2, 1, 1)",
        "(1, 1/2, 1/2)",
        "a = (1/2, 1/4, 1/4)",
        "z = (1, 1)",
        "w = (1/2, 1/4, 1/4)",
        "√2·ln 2",
    ]:
        assert shown in text, shown
    for word in words:
        assert word in text, word
    assert ("Yes" in text) if lang == "en" else ("在。" in text)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_seed_markdown_and_latex(lang):
    d = attend(**SEED)
    md = d.to_markdown(lang)
    assert r"s = \left(\ln 2, 0, 0\right)" in md and r"\frac{1}{4}" in md and md.startswith("### ")
    assert d._repr_markdown_() == d.to_markdown("en")
    tex = d.to_latex(lang)
    assert r"a = \left(\frac{1}{2}, \frac{1}{4}, \frac{1}{4}\right)" in tex
    assert r"z = \boxed{\left(1, 1\right)}" in tex
    assert tex.count(r"\begin{gather*}") == tex.count(r"\end{gather*}") > 0
    assert "\\_" in tex or "$" in tex  # prose underscores never reach LaTeX bare


def _cli(argv):
    args = build_parser().parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        commands.attend(args)
    return out.getvalue(), err.getvalue()


def test_cli_json_seed(tmp_path):
    figure = tmp_path / "hull.png"
    out, err = _cli(
        [
            "attend",
            "--q",
            "sqrt(2),0",
            "--k",
            "ln(2),0; 0,1; 0,-1",
            "--v",
            "0,0; 4,0; 0,4",
            "--format",
            "json",
            "--figure",
            str(figure),
        ]
    )
    data = json.loads(out)
    assert (data["format"], data["version"], data["kind"]) == ("qkv-explain", 1, "attend")
    assert data["scores"] == pytest.approx([math.log(2), 0, 0], abs=1e-12)
    assert data["weights"] == pytest.approx([0.5, 0.25, 0.25], abs=1e-12)
    assert data["z"] == pytest.approx([1, 1], abs=1e-12)
    shown = data["display"]
    assert shown["scores"] == ["ln 2", "0", "0"] and shown["weights"] == ["1/2", "1/4", "1/4"]
    assert shown["z"] == ["1", "1"] and shown["q"] == ["√2", "0"] and shown["sqrt_d_k"] == "√2"
    assert data["latex"]["weights"][0] == r"\frac{1}{2}"
    assert data["hull"]["inside"] is True and data["hull"]["weights"] == pytest.approx([0.5, 0.25, 0.25], abs=1e-9)
    for key, value in data["display"].items():  # display mirrors every numeric field
        if key != "hull":
            assert np.shape(value) == np.shape(data[key]), key
    assert figure.exists() and figure.stat().st_size > 0 and str(figure) in err


def test_cli_text_zh_and_dk():
    out, _ = _cli(["attend", "--q", "sqrt(2),0", "--k", "ln(2),0; 0,1; 0,-1", "--v", "0,0; 4,0; 0,4", "--lang", "zh"])
    assert "a = (1/2, 1/4, 1/4)" in out and "凸包" in out
    out, _ = _cli(["attend", "--q=-1,0", "--k", "1,0; 0,1", "--v", "1; 3", "--dk", "1/4", "--format", "markdown"])
    assert "d_k = \\frac{1}{4}" in out  # s = q·k / √(1/4) = 2 q·k: scores (−2, 0)


def test_cli_bad_input_is_one_line_valueerror():
    with pytest.raises(ValueError, match="columns") as info:
        _cli(["attend", "--q", "1,2,3", "--k", "1,0; 0,1", "--v", "1; 2"])
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "q, K, V, says",
    [
        ("1,2", "1,0; 0,1; 1", "1;2;3", "row 3"),  # ragged keys
        ("1,2", "1,0,0; 0,1,0", "1;2", "columns"),  # K columns != len(q)
        ("1,2", "1,0; 0,1", "1;2;3", "one value per key"),  # V rows != K rows
        ("1,2", "", "1", "empty"),  # empty K
        ("1,2", [], [[1.0]], "empty"),
        ("1,x", "1,0", "1", "q"),  # unparsable
        ("__import__('os')", "1", "1", "not allowed"),
        ("1,2; 3,4", "1,0", "1", "one vector"),
        ([1.0, 2.0], [[1.0, 0.0], [0.0]], [[1.0], [2.0]], "different lengths"),
        ([1.0, float("nan")], [[1.0, 0.0]], [[1.0]], "finite"),
    ],
)
def test_bad_inputs(q, K, V, says):
    with pytest.raises(ValueError, match=says) as info:
        attend(q, K, V)
    assert "\n" not in str(info.value)


def test_bad_dk_and_lang():
    for d_k in (0, -1, "-2", float("inf")):
        with pytest.raises(ValueError, match="d_k"):
            attend([1.0], [[1.0]], [[1.0]], d_k=d_k)
    with pytest.raises(ValueError, match="language"):
        attend([1.0], [[1.0]], [[1.0]]).to_text("fr")


@pytest.mark.parametrize("seed", range(12))
def test_random_against_the_library_formula(seed):
    rng = np.random.default_rng(seed)
    n, d, d_v = rng.integers(1, 7), rng.integers(1, 9), rng.integers(1, 6)
    q, K, V = rng.normal(size=d) * 2, rng.normal(size=(n, d)) * 2, rng.normal(size=(n, d_v))
    der = attend(q, K, V)
    assert der.weights.min() >= 0 and der.weights.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(der.z, der.weights @ V, atol=1e-12)
    np.testing.assert_allclose(der.contributions.sum(axis=0), der.z, atol=1e-12)
    t = lambda x: torch.tensor(x, dtype=torch.float64)[None, None]  # (1, 1, T, d)
    z, pattern, scores = qkv.attention(t(q[None]), t(K), t(V))  # the library's own formula
    np.testing.assert_allclose(der.scores, scores[0, 0, 0].numpy(), atol=1e-12)
    np.testing.assert_allclose(der.weights, pattern[0, 0, 0].numpy(), atol=1e-12)
    np.testing.assert_allclose(der.z, z[0, 0, 0].numpy(), atol=1e-12)
    assert der.hull.inside
    np.testing.assert_allclose(der.hull.weights @ V, der.z, atol=1e-9)
    json.dumps(der.to_json())  # always serialisable


def test_huge_scores_stay_finite_and_serialisable():
    der = attend([1000.0], [[1.0], [0.9]], [[0.0], [1.0]], d_k=1)
    assert np.isinf(der.exps[0]) and np.all(np.isfinite(der.weights))
    data = json.loads(json.dumps(der.to_json(), allow_nan=False))
    assert data["exps"][0] is None and data["display"]["exps"][0] == "∞"
    assert data["weights"][0] == pytest.approx(1.0)


def test_nonunique_weights_are_explained():
    # four values on a square, equal weights: z = centre, and the LP returns some other valid combination
    der = attend([0.0, 0.0], [[1, 0], [0, 1], [-1, 0], [0, -1]], [[0, 0], [2, 0], [2, 2], [0, 2]])
    np.testing.assert_allclose(der.weights, [0.25] * 4, atol=1e-12)
    np.testing.assert_allclose(der.z, [1, 1], atol=1e-12)
    assert der.hull.inside and np.count_nonzero(der.hull.weights > 1e-12) <= 3  # a vertex solution of the LP
    np.testing.assert_allclose(der.hull.weights @ der.V, [1, 1], atol=1e-12)
    assert "may differ" in der.to_text("en") and "不唯一" in der.to_text("zh")


def test_outside_verdict_is_rendered():
    der = attend(**SEED)
    broken = dataclasses.replace(der, hull=HullResult(inside=False, distance=0.5, weights=der.weights))
    assert "No: z is at L1 distance 1/2" in broken.to_text("en") and "不在" in broken.to_text("zh")
    assert broken.to_json()["hull"]["inside"] is False


@pytest.mark.parametrize(
    "q, K, V, d_k, says",
    [
        ("1e200", "1e200; -1e200", "1;2", None, "q·k1: the term 1e+200·1e+200 overflows"),
        ("1,1", "1,1; 1e308,1e308", "1;2", None, "q·k2: the sum overflows"),
        ("1e300", "1;1", "1;2", "1e-300", "s1 = 1e+300 / √1e-300 overflows"),
        ("1e154", "1e154; -1e154", "1;2", None, "s2 − max s = -1e+308 − 1e+308 overflows"),
    ],
)
def test_an_overflow_is_one_line_naming_the_step_and_no_warning(q, K, V, d_k, says):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would raise here instead
        with pytest.raises(ValueError) as info:
            attend(q, K, V, d_k=d_k)
    assert str(info.value).startswith(says) and "largest float" in str(info.value) and "\n" not in str(info.value)


def test_exps_may_overflow_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        der = attend("1e3", "1; 0.5", "0;1", d_k=1)
    assert np.isinf(der.exps[0]) and der.weights[0] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "q, K, V, says",
    [
        ([1.0] * 1001, [[1.0] * 1001], [[1.0]], "q has 1,001 entries; attend takes at most 1,000 per vector"),
        ([1.0], [[1.0]], [[1.0] * 20_000], "each value has 20,000 entries; attend takes at most 1,000 per vector"),
        (
            [1.0] * 100,
            [[1.0] * 100] * 60,
            [[1.0] * 100] * 60,
            "q, K and V hold 12,100 numbers; attend derives at most 10,000",
        ),
    ],
)
def test_inputs_too_big_to_derive_are_refused_at_once(q, K, V, says, monkeypatch):
    """The hull check's LP matrix grows with the square of the value size (10,000 entries took 5 GB):
    the refusal comes before any computation (the LP is never reached)."""
    import qkv.analysis.attend as attend_module

    def no_lp(*args, **kwargs):
        raise AssertionError("the LP ran on inputs that should have been refused first")

    monkeypatch.setattr(attend_module, "convex_weights", no_lp)
    with pytest.raises(ValueError, match=re.escape(says)):
        attend(q, K, V)


@pytest.mark.parametrize("q, shown", [([-1.0, 0.0], "+"), ([1.0, 0.0], "-")])
def test_the_shift_by_the_maximum_is_written_with_one_sign(q, shown):
    """s − max s with a negative maximum reads e^(s + |m|), never e^(s - -m), in text and in LaTeX."""
    d = attend(q, [[1.0, 0.0], [2.0, 0.0]], [[0.0, 0.0], [1.0, 1.0]])
    m = d.max_score
    assert (m < 0) == (shown == "+")
    text, tex = d.to_text(), d.to_latex()
    assert f"e^(s {shown} " in text and "- -" not in text and "- −" not in text
    assert f"e^{{s {shown} " in tex and "- -" not in tex


def test_cli_reads_the_numbers_the_pages_playground_reads():
    """√2, ln 2, π, 2√3 and 3 ln 2 (the playground's notations, static/exact.js) are the numbers
    sqrt(2), ln(2), pi, 2*sqrt(3) and 3*ln(2): the same derivation, number for number."""
    page = ["--q", "√2, 0", "--k", "ln 2, 0; 0, 1; 0, −1", "--v", "0,0; 2√3,0; 0,3 ln 2", "--dk", "π/2"]
    python = ["--q", "sqrt(2), 0", "--k", "ln(2), 0; 0, 1; 0, -1", "--v", "0,0; 2*sqrt(3),0; 0,3*ln(2)", "--dk", "pi/2"]
    as_page, _ = _cli(["attend", *page, "--format", "json"])
    as_python, _ = _cli(["attend", *python, "--format", "json"])
    assert json.loads(as_page) == json.loads(as_python)
    with pytest.raises(ValueError, match="cannot read '2 3' as a number"):  # two numbers with no sign between
        _cli(["attend", "--q", "2 3", "--k", "1", "--v", "1"])
