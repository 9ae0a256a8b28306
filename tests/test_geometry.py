"""numbers.py (safe parsing, exact forms), geometry.py (the hull claim) and plot_hull.py (its picture)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qkv.analysis.numbers import closed_form, fmt, latex, parse_matrix, parse_number, parse_vector
from qkv.core.see.hull import convex_weights, hull_polygon, pca_2d, project
from qkv.presentation import fonts
from qkv.presentation.plot_hull import hull_figure

# ---------------------------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "x, text, tex",
    [
        (math.sqrt(2), "√2", r"\sqrt{2}"),
        (math.log(2), "ln 2", r"\ln 2"),
        (3 / 7, "3/7", r"\frac{3}{7}"),
        (-5.0, "-5", "-5"),
        (2 * math.sqrt(3) / 3, "2√3/3", r"\frac{2\sqrt{3}}{3}"),
        (math.pi, "π", r"\pi"),
        (-math.sqrt(2) / 2, "-√2/2", r"-\frac{\sqrt{2}}{2}"),
        (1.5 * math.log(3), "(3 ln 3)/2", r"\frac{3\,\ln 3}{2}"),
        (math.sqrt(2) * math.log(2), "√2·ln 2", r"\sqrt{2}\,\ln 2"),
        (math.e, "e", "e"),
        (0.5, "1/2", r"\frac{1}{2}"),
        (-0.0, "0", "0"),
    ],
)
def test_closed_forms(x, text, tex):
    assert closed_form(x) == text
    assert fmt(x) == text
    assert latex(x) == tex


@pytest.mark.parametrize("x", [0.123456789, math.sqrt(2) + 1e-9, 1 / 67, 1e20, math.nan, math.inf, 1e-13, -1e-320])
def test_no_closed_form(x):
    assert closed_form(x) is None


def test_fmt_falls_back_to_six_digits():
    assert fmt(0.123456789) == "0.123457"
    assert latex(1.23456789e-7) == r"1.23457 \times 10^{-7}"
    assert fmt(math.inf) == "∞"
    assert fmt(1e-13) == "1e-13" and fmt(0.0) == "0"  # a number that is not 0 never shows as 0


@pytest.mark.parametrize(
    "text, value",
    [
        ("1/2", 0.5),
        ("sqrt(2)", math.sqrt(2)),
        ("ln(2)", math.log(2)),
        ("log(2)", math.log(2)),
        ("log(8, 2)", 3.0),
        ("exp(1)", math.e),
        ("2^-3", 0.125),
        ("2**3", 8.0),
        ("-(1+2)*3", -9.0),
        ("pi/2", math.pi / 2),
        ("e", math.e),
        (" 3 ", 3.0),
        ("\u22121", -1.0),
    ],
)
def test_parse_number(text, value):
    assert parse_number(text) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os')",
        "().__class__",
        "os.system",
        "lambda: 1",
        "[i for i in (1, 2)]",
        "{1: 2}",
        "abs(-1)",
        "x",
        "True",
        "1j",
        "'1'",
        "1 if 1 else 2",
        "sqrt(x=2)",
        "sqrt()",
        "1/0",
        "ln(-1)",
        "(-8)**0.5",
        "2**10**10",
        "",
        "1,2",
        "1 < 2",
        "f(1)(2)",
    ],
)
def test_parse_number_refuses(text):
    with pytest.raises(ValueError) as info:
        parse_number(text)
    assert "\n" not in str(info.value)


def test_parse_vector_and_matrix():
    assert parse_vector("sqrt(2),0") == [math.sqrt(2), 0.0]
    assert parse_vector("log(8, 2), 1") == [3.0, 1.0]  # commas inside brackets belong to the call
    assert parse_matrix("ln(2),0; 0,1; 0,-1") == [[math.log(2), 0.0], [0.0, 1.0], [0.0, -1.0]]
    for bad, says in [
        ("1,2; 3", "row 2"),
        ("1,,2", "empty entry"),
        ("1,2;;3,4", "row 2"),
        ("", "empty"),
        ("1,2; 3,y", "row 2"),
    ]:
        with pytest.raises(ValueError, match=says) as info:
            parse_matrix(bad)
        assert "\n" not in str(info.value)


# --------------------------------------------------------------------------------------------- geometry


def test_seed_triangle():
    V = [[0, 0], [4, 0], [0, 4]]
    r = convex_weights([1, 1], V)
    assert r.inside and r.distance == 0.0
    np.testing.assert_allclose(r.weights, [0.5, 0.25, 0.25], atol=1e-12)  # affinely independent: unique
    out = convex_weights([3, 3], V)  # beyond the hypotenuse x + y = 4, L1 distance 2
    assert not out.inside and out.distance == pytest.approx(2.0, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 8), d=st.integers(1, 6), seed=st.integers(0, 2**32 - 1), log_scale=st.floats(-3, 3))
def test_random_hulls(n, d, seed, log_scale):
    rng = np.random.default_rng(seed)
    V = rng.normal(size=(n, d)) * 10**log_scale
    a = rng.dirichlet(np.ones(n))
    z = a @ V
    r = convex_weights(z, V)
    assert r.inside and r.distance == 0.0
    assert np.all(r.weights >= 0) and r.weights.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(r.weights @ V, z, atol=1e-9 * (1 + np.abs(V).max()))
    # a point beyond the farthest value along some direction u is outside, by at least the gap
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    gap = 0.01 * np.abs(V).max()
    outside = z + (np.max(V @ u) - z @ u + gap) * u
    r = convex_weights(outside, V)
    assert not r.inside and r.distance >= 0.99 * gap


def test_degenerate_hulls():
    V = np.array([[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]])  # 2 points in 3-D: a segment
    assert convex_weights([0.5, 0.5, 0.5], V).inside
    np.testing.assert_allclose(convex_weights([0.5, 0.5, 0.5], V).weights, [0.75, 0.25], atol=1e-12)
    assert not convex_weights([1.0, 1.0, 1.1], V).inside  # off the line
    assert not convex_weights([3.0, 3.0, 3.0], V).inside  # on the line, past the end
    assert convex_weights([7.0], [[7.0]]).inside and not convex_weights([7.5], [[7.0]]).inside  # one point
    with pytest.raises(ValueError, match="coordinates"):
        convex_weights([1.0, 2.0], V)


def test_pca_2d():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 5))
    P, mean, C = pca_2d(X)
    np.testing.assert_allclose(C @ C.T, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(P, (X - mean) @ C.T)
    a = rng.dirichlet(np.ones(6))  # linear maps keep convex combinations
    np.testing.assert_allclose(project(a @ X, mean, C)[0], a @ P, atol=1e-12)
    P2, mean2, _ = pca_2d([[1.0, 2.0], [3.0, 4.0]])  # d = 2: coordinates kept
    np.testing.assert_array_equal(P2, [[1.0, 2.0], [3.0, 4.0]])
    P1, _, C1 = pca_2d([[1.0], [3.0]])  # d = 1: padded with a zero coordinate
    np.testing.assert_array_equal(P1, [[1.0, 0.0], [3.0, 0.0]])
    assert pca_2d(np.ones((1, 4)))[2].shape == (2, 4)  # one point in 4-D still gets two directions


def test_hull_polygon():
    tri = hull_polygon([[0, 0], [4, 0], [0, 4], [1, 1]])
    assert {tuple(p) for p in tri} == {(0, 0), (4, 0), (0, 4)}
    x, y = tri[:, 0], tri[:, 1]
    assert 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) > 0  # counter-clockwise
    assert hull_polygon([[1, 1], [1, 1]]).shape == (1, 2)
    assert {tuple(p) for p in hull_polygon([[0, 0], [1, 1], [3, 3], [2, 2]])} == {(0, 0), (3, 3)}
    assert hull_polygon([[0, 0], [1, 2]]).shape == (2, 2)


def test_hull_polygon_of_huge_points():
    """Points near 1e300 (Qhull's roundoff would overflow on them as given) keep their triangle."""
    P = np.array([[-9.5e283, -4.7e299], [7.1e299, 2.4e299], [-7.1e299, 2.4e299], [0.0, 1e299]])
    assert {tuple(p) for p in hull_polygon(P)} == {tuple(p) for p in P[:3]}
    # the same picture, scaled down, gives the same vertices: the hull does not depend on the units
    assert {tuple(p / 1e299) for p in hull_polygon(P)} == {tuple(p) for p in hull_polygon(P / 1e299)}


# ---------------------------------------------------------------------------------------------- figure


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_seed_figure(tmp_path, suffix):
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    fig = hull_figure([[0, 0], [4, 0], [0, 4]], [1, 1], [0.5, 0.25, 0.25], tmp_path / f"hull{suffix}", lang="zh")
    assert fig.path.exists() and fig.path.stat().st_size > 1000
    data = fig.path.read_bytes()
    assert data.startswith(b"\x89PNG") if suffix == ".png" else (b"<svg" in data)
    assert not fig.projected and "凸" in fig.title
    assert fonts.missing_glyphs(fig.caption + fig.title) == []  # the CJK font draws every character
    assert len(plt.get_fignums()) == before  # closed


def test_figure_projects_high_dimensions(tmp_path):
    rng = np.random.default_rng(1)
    V = rng.normal(size=(5, 4))
    a = rng.dirichlet(np.ones(5))
    en = hull_figure(V, a @ V, a, tmp_path / "en.png")
    zh = hull_figure(V, a @ V, a, tmp_path / "zh.svg", lang="zh", caption="自定义说明")
    assert en.projected and "PCA" in en.caption and "linear map" in en.caption
    assert zh.projected and zh.caption.startswith("自定义说明") and "PCA" in zh.caption and "线性" in zh.caption
    assert fonts.missing_glyphs(zh.caption) == []
    assert not hull_figure(V[:, :2], a @ V[:, :2], a, tmp_path / "2d.png").projected


def test_figure_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        hull_figure([[0, 0], [1, 0]], [0.5, 0], [0.5, 0.5], tmp_path / "x.pdf")
    with pytest.raises(ValueError, match="weights"):
        hull_figure([[0, 0], [1, 0]], [0.5, 0], [1.0], tmp_path / "x.png")
    with pytest.raises(ValueError):
        hull_figure([[0, 0], [1, 0]], [0.5, 0], [0.5, 0.5], tmp_path / "x.png", lang="fr")
