"""The transform panel in a real browser (Debian's Chromium, headless): the stretch of the chosen head's
W_Q, W_K, W_V, W_O as the Python API computes it, the word cloud's numbers, the 2-D toy against numpy,
the language switch, and the toy in the static export (no server).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from browser_fixtures import bring_into_view, browser, from_module, near, numbers, page, require_chromium  # noqa: F401
from browser_util import act, load_page

import qkv
from qkv.analysis.transform import head_matrices, random_twin
from qkv.analysis.transform_cloud import word_cloud
from qkv.core.hub.bundled import default_ckpt

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess]  # Chromium and qkv serve are processes of their own
ROUNDING = 6e-4  # the page writes 4 decimals; a product of three such matrices is good to a few 1e-4


@pytest.fixture(scope="module")
def bundled():
    model, tok = qkv.load(default_ckpt())
    return model.eval(), tok


def wait_for_head(pg, layer: int, head: int) -> None:
    pg.wait_for_function(
        "([l, h]) => { const e = document.querySelector('#tf-spectra-title');"
        " return document.querySelector('#tf-table tr[data-matrix=W_Q]') && qkv.state.layer === l &&"
        " qkv.state.head === h && e.dataset.shown === `${l}/${h}`; }",
        arg=[layer, head],
        timeout=30_000,
    )


def test_the_panels_singular_values_are_the_python_apis(page, server, bundled):
    model, tok = bundled
    load_page(page, server + "?lang=en")
    bring_into_view(page, "#transform")
    layer, head = model.cfg.n_layers - 1, model.cfg.n_heads - 1
    act(page, lambda: page.select_option("#layer", str(layer)))
    act(page, lambda: page.select_option("#head", str(head)))
    wait_for_head(page, layer, head)
    twin = random_twin(model, 0)

    def cell(name, field):
        return float(page.inner_text(f"#tf-table tr[data-matrix={name}] td[data-field={field}]"))

    for name, W in head_matrices(model, layer, head).items():
        expected = torch.linalg.svdvals(W).tolist()
        shown = numbers(page.text_content(f"#tf-table details[data-matrix={name}] .tf-sv"))
        assert len(shown) == len(expected) and all(near(a, b) for a, b in zip(shown, expected)), name
        assert near(cell(name, "s1"), expected[0]) and near(cell(name, "sr"), expected[-1])
        assert near(cell(name, "cond"), expected[0] / expected[-1]), name  # σ₁/σᵣ
        s = torch.linalg.svdvals(head_matrices(twin, layer, head)[name])
        assert near(cell(name, "rcond"), float(s[0] / s[-1])), name  # the random model's
    cloud = word_cloud(model, tok, layer, head)
    before = numbers(page.inner_text("#tf-cloud [data-side=before] [data-field=sep]"))
    after = numbers(page.inner_text("#tf-cloud [data-side=after] [data-field=sep]"))
    assert near(before[0], cloud["before"]["separation"]["ratio"]) and near(after[0], cloud["q"]["separation"]["ratio"])
    assert near(before[1], cloud["before"]["separation_2d"]["ratio"]) and near(
        after[1], cloud["q"]["separation_2d"]["ratio"]
    )
    page.select_option("#tf-proj", "v")
    after_v = numbers(page.inner_text("#tf-cloud [data-side=after] [data-field=sep]"))
    assert near(after_v[0], cloud["v"]["separation"]["ratio"])
    assert page.errors == []


def toy_numbers(pg) -> dict:
    read = lambda sel: numbers(pg.inner_text(sel))
    M, U, Vt = (np.array(read(f"#tf-{k}")).reshape(2, 2) for k in ("M", "U", "Vt"))
    return {
        "M": M,
        "U": U,
        "S": np.array(read("#tf-S")),
        "Vt": Vt,
        "det": read("#tf-det")[0],
        "text": pg.inner_text("#tf-svd"),
    }


def check_svd(shown: dict, M: np.ndarray) -> None:
    """The page's M, singular values and determinant are numpy's; its U and Vᵀ are orthogonal and give M back."""
    assert np.allclose(shown["M"], M, atol=6e-5)
    assert np.allclose(shown["S"], np.linalg.svd(M, compute_uv=False), atol=6e-5)
    assert abs(shown["det"] - np.linalg.det(M)) < 6e-5
    for R in (shown["U"], shown["Vt"]):
        assert np.allclose(R @ R.T, np.eye(2), atol=ROUNDING)
    assert np.linalg.det(shown["U"]) > 0  # U is a rotation; a mirror, if any, is in Vᵀ
    assert np.allclose(shown["U"] @ np.diag(shown["S"]) @ shown["Vt"], M, atol=ROUNDING)


def test_the_toys_matrix_and_svd_are_numpys(page, server):
    load_page(page, server + "?lang=en")
    bring_into_view(page, "#transform")
    # the four entries typed in
    for values in ((1.5, 0.3, -0.7, 0.9), (0.2, 1.1, 1.3, -0.4), (1.0, 2.0, 0.5, 1.0)):  # the last has det 0
        for k, v in zip("abcd", values):
            page.fill(f"#tf-{k}", str(v))
        M = np.array(values).reshape(2, 2)
        shown = toy_numbers(page)
        check_svd(shown, M)
        assert ("mirror" in shown["text"]) == (np.linalg.det(M) < -1e-9)
    # the sliders: scale, then shear, then rotate, for row vectors p·M (built here from the three matrices)
    for k, v in (("angle", 30), ("sx", 2), ("sy", 0.5), ("shear", 0.75)):
        page.fill(f"#tf-{k}", str(v))
    a = np.radians(30)
    M = np.diag([2, 0.5]) @ np.array([[1, 0], [0.75, 1]]) @ np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
    check_svd(toy_numbers(page), M)
    assert np.allclose([1, 0] @ M, toy_numbers(page)["M"][0], atol=6e-5)  # e₁ goes to the first row
    assert page.errors == []


def test_the_panel_speaks_both_languages(page, server):
    load_page(page, server + "?lang=en")
    bring_into_view(page, "#transform")
    wait_for_head(page, 0, 0)
    en_title = page.inner_text("#transform h2")
    sv = page.text_content("#tf-table details[data-matrix=W_Q] .tf-sv")
    page.fill("#tf-a", "-1")
    toy_en = toy_numbers(page)
    act(page, lambda: page.click("#lang"))  # the button is at the top: the card may have gone to sleep
    bring_into_view(page, "#transform")  # and is told the language as it wakes
    zh_title = page.inner_text("#transform h2")
    assert re.search(r"[\u4e00-\u9fff]", zh_title) and not re.search(r"[\u4e00-\u9fff]", en_title)
    assert [zh_title, en_title] == from_module(page, "i18n.js", "m => [m.I18N.zh.tf_title, m.I18N.en.tf_title]")
    assert re.search(r"[\u4e00-\u9fff]", page.inner_text("#tf-svd")) and "镜像" in page.inner_text("#tf-svd")
    assert page.text_content("#tf-table details[data-matrix=W_Q] .tf-sv") == sv  # the same numbers
    assert np.allclose(toy_numbers(page)["S"], toy_en["S"])
    keys = from_module(
        page, "i18n.js", "m => ['en', 'zh'].map(l => Object.keys(m.I18N[l]).filter(k => k.startsWith('tf_')).sort())"
    )
    assert keys[0] == keys[1] and len(keys[0]) > 20
    assert page.errors == []


def test_the_toy_works_in_the_static_export(browser, bundled_export):
    out = bundled_export
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        load_page(pg, out.as_uri() + "?lang=en")
        bring_into_view(pg, "#transform")
        assert pg.evaluate("qkv.mode") == "static"
        assert "qkv serve" in pg.inner_text("#tf-note") and pg.is_visible("#tf-note")
        for k, v in zip("abcd", (0.5, -1.2, 0.8, 0.3)):
            pg.fill(f"#tf-{k}", str(v))
        check_svd(toy_numbers(pg), np.array([[0.5, -1.2], [0.8, 0.3]]))
        assert errors == []
    finally:
        context.close()
