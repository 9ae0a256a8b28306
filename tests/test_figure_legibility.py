"""Figures a learner can read: no two texts of a figure overlap (measured with matplotlib's renderer), and
the embedding map says why 苹果 need not sit with the fruits in the built-in corpus."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Annotation

import qkv
from qkv.core.hub.bundled import default_ckpt

# ---------------------------------------------------------------------------
# 7. figures: no two texts overlap; the embedding map's caption
# ---------------------------------------------------------------------------


@pytest.fixture()
def saved(monkeypatch):
    """Every Figure written while the test runs (matplotlib's savefig, wherever it is called from)."""
    figures = []
    real = Figure.savefig

    def savefig(self, *args, **kwargs):
        figures.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return figures


def text_boxes(fig) -> list[tuple[str, object]]:
    """(text, window extent) of every text a reader reads: figure texts (captions), titles, point labels
    and other texts in the axes, and each legend as one box."""
    renderer = fig.canvas.get_renderer()
    texts = list(fig.texts)
    for ax in fig.axes:
        texts += [ax.title, *ax.texts]
    out = [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_visible() and t.get_text().strip()]
    for ax in fig.axes:
        if ax.get_legend() is not None:
            out.append(("<legend>", ax.get_legend().get_window_extent(renderer)))
    return out


def overlaps(fig, slack: float = 0.5) -> list[tuple[str, str]]:
    boxes = text_boxes(fig)
    bad = []
    for i, (a, p) in enumerate(boxes):
        for b, q in boxes[i + 1 :]:
            w = min(p.x1, q.x1) - max(p.x0, q.x0)
            h = min(p.y1, q.y1) - max(p.y0, q.y0)
            if w > slack and h > slack:
                bad.append((a, b))
    return bad


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_hull_figure_of_crowded_values_has_no_overlapping_text(tmp_path, saved, lang):
    from qkv.presentation.plot_hull import hull_figure

    rng = np.random.default_rng(0)
    V = np.vstack([np.zeros(8), 0.02 * rng.normal(size=(3, 8)), np.eye(8)[:2] * 3])  # four values close together
    a = np.array([0.4, 0.1, 0.1, 0.1, 0.2, 0.1])
    labels = ["我", "投资了", "苹果", "，", "股价", "上涨了"]
    hull_figure(V, a @ V, a, tmp_path / "hull.png", labels=labels, lang=lang)
    fig = saved[-1]
    caption = [t.get_text() for t in fig.texts]
    assert len(caption) >= 3  # the caption and the PCA note, one Text per line
    assert overlaps(fig) == []


def test_the_convex_lessons_figures_have_no_overlapping_text(tmp_path, saved):
    from qkv import lessons

    lessons.run("convex", lang="zh", out=tmp_path)
    assert (tmp_path / "convex_head.png").exists() and len(saved) == 3
    for fig in saved:
        assert overlaps(fig) == []


@pytest.mark.slow
def test_the_transform_lessons_word_cloud_has_no_overlapping_labels(tmp_path, saved):
    from qkv import lessons

    lessons.run("transform", lang="zh", out=tmp_path)
    cloud = [f for f in saved if any(isinstance(t, Annotation) for ax in f.axes for t in ax.texts)]
    assert cloud and all(overlaps(f) == [] for f in cloud)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_embedding_map_says_why_apple_may_sit_with_the_companies(tmp_path, saved, lang):
    from qkv.presentation.plot_embedding import embedding_map

    model, tok = qkv.load(default_ckpt())
    words = ["苹果", "香蕉", "梨", "葡萄", "华为", "百度", "小米", "原子能", "太阳能"]
    embedding_map(model, tok, tmp_path / "emb.png", tokens=words, lang=lang)
    fig = saved[-1]
    caption = "".join(t.get_text() for t in fig.texts)
    assert "苹果" in caption and "小米" in caption
    assert ("内置语料" in caption and "词义句" in caption) if lang == "zh" else ("built-in corpus" in caption)
    assert overlaps(fig) == []
    # no such word shown: no caption
    embedding_map(model, tok, tmp_path / "emb2.png", tokens=["香蕉", "梨", "华为"], lang=lang)
    assert saved[-1].texts == []


def test_the_caption_is_true_of_the_built_in_corpus():
    """The sense sentences put 苹果 after food verbs and after company verbs, and 香蕉 only in fruit lines."""
    from qkv.core.text.corpus import default_text
    from qkv.core.text.corpus.lexicon import AMBIGUOUS, COMPANY_CUES

    lines = [line.split() for line in default_text().splitlines()]
    food = {c.split()[0] for c, _ in AMBIGUOUS["苹果"]["food_cues"]}
    company = {c for c, _ in COMPANY_CUES}
    before = [w[w.index("苹果") - 1] for w in lines if "苹果" in w and w.index("苹果") > 0]
    assert any(b in food for b in before) and any(b in company for b in before)
    assert not any("香蕉" in w and (company & set(w) or "股价" in w) for w in lines)


def test_chinese_column_labels_stand_upright_and_others_turn():
    """A vertical Chinese label is its characters stacked upright (turned on its side, 三 reads as 川);
    a label with Latin letters in it is turned a quarter, as before."""
    from qkv.presentation.figures import column_labels

    ax = Figure().subplots()
    column_labels(ax, range(3), ["下午", "三", "图书馆"], rotate=True)
    shown = ax.get_xticklabels()
    assert [x.get_text() for x in shown] == ["下\n午", "三", "图\n书\n馆"]
    assert all(x.get_rotation() == 0 for x in shown)
    column_labels(ax, range(3), ["下午", "三点", "hello"], rotate=True)
    assert [x.get_text() for x in ax.get_xticklabels()] == ["下午", "三点", "hello"]
    assert all(x.get_rotation() == 90 for x in ax.get_xticklabels())
    column_labels(ax, range(2), ["下午", "三"], rotate=False)
    assert [(x.get_text(), x.get_rotation()) for x in ax.get_xticklabels()] == [("下午", 0), ("三", 0)]
