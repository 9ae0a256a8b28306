"""A learner's findings on the Chinese wording, the figures and what the page offers a model, checked
without a browser (the page's own findings are in test_web_browser_findings.py):

- positions, layers and heads are 0-based: Chinese says 位置 3 / 层 0 / 头 2, never 第 3 个 (which reads
  1-based), in the zh catalogue and in the page's Chinese strings;
- the context lesson's cue word is a 线索词, not a 提示词 (a prompt);
- MiniLM (an English WordPiece vocabulary) is offered English side-by-side sentences, and the page is
  told its unknown token;
- no two texts of a figure overlap (measured with matplotlib's renderer), and the embedding map says
  why 苹果 need not sit with the fruits in the built-in corpus.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Annotation

import qkv
from qkv.core.hub.bundled import default_ckpt
from qkv.presentation.i18n import catalogue

ROOT = Path(qkv.__file__).resolve().parent
ZH = ROOT / "presentation" / "messages" / "zh"
STATIC = ROOT / "apps" / "web" / "static"
CJK = re.compile(r"[\u3400-\u9fff]")


def zh_catalogue() -> dict[str, str]:
    """Every message of the Chinese catalogue but errors.py (another area's), the lessons' own included:
    "area.name" -> text."""
    out = {}
    for path in sorted(ZH.rglob("*.py")):
        if path.name in ("__init__.py", "errors.py"):
            continue
        area = ".".join(path.relative_to(ZH).with_suffix("").parts)
        module = importlib.import_module(f"qkv.presentation.messages.zh.{area}")
        out.update({f"{area}.{k}": v for k, v in module.MESSAGES.items() if isinstance(v, str)})
    for path in sorted((ROOT / "lessons").glob("*/zh.py")):  # a lesson's words live in its folder
        area = f"lessons.{path.parent.name}"
        out.update({f"{area}.{k}": v for k, v in catalogue("zh", area).items() if isinstance(v, str)})
    return out


STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`')


def page_chinese() -> dict[str, str]:
    """Every string literal of the page (static/*.js, index.html) that holds Chinese: "file:line" -> text."""
    out = {}
    for path in sorted(STATIC.glob("*.js")) + [STATIC / "index.html"]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in STRING.finditer(line):
                s = m.group(1) if m.group(1) is not None else m.group(2)
                if CJK.search(s):
                    out[f"{path.name}:{n}:{m.start()}"] = s
    return out


# 第 N 个 / 第 {i} 个 / 第 j 个 … and 第 {l} 层: an ordinal for a 0-based position, layer or head
ORDINAL = re.compile(r"第\s*(\{[^}]*\}|\d+|[A-Za-z])\s*(个|层)")


def test_the_sources_of_chinese_text_are_found():
    catalogue, page = zh_catalogue(), page_chinese()
    assert len(catalogue) > 300 and "lessons.context.text" in catalogue and "figures.hull.trace_title" in catalogue
    assert len(page) > 200 and any("热力图" in s for s in page.values())
    assert ORDINAL.search("第 {l} 层，第 {h} 个头") and ORDINAL.search("第 3 个词元") and ORDINAL.search("第 i 个词")
    assert not ORDINAL.search("层 0，头 2；位置 3；排第 1 名；第一步；第 3 步")


@pytest.mark.parametrize("where", ["catalogue", "page"])
def test_chinese_says_position_layer_head_n_never_an_ordinal(where):
    texts = zh_catalogue() if where == "catalogue" else page_chinese()
    bad = {k: ORDINAL.findall(v) for k, v in texts.items() if ORDINAL.search(v)}
    assert bad == {}


def test_the_words_for_positions_layers_and_heads_are_there():
    catalogue, page = zh_catalogue(), " ".join(page_chinese().values())
    assert "层 {layer} 头 {head}" in catalogue["figures.attention.head_title"]
    assert "位置 {pos}" in catalogue["explain.title_head"]
    assert "层 {l}，头 {h}" in page and "位置 {pa}" in page


def test_the_cue_word_is_a_clue_word_not_a_prompt():
    catalogue = zh_catalogue()
    assert [k for k, v in catalogue.items() if k.startswith("lessons.") and "提示词" in v] == []
    assert [k for k, v in page_chinese().items() if "提示词" in v] == []
    assert catalogue["lessons.context.text"].count("线索词") == 2


@pytest.mark.slow
def test_the_context_lesson_says_clue_word_in_chinese():
    from qkv import lessons

    text = lessons.run("context", lang="zh").text
    assert "线索词" in text and "提示词" not in text and not ORDINAL.search(text)


# ---------------------------------------------------------------------------
# 6. what the page is offered for MiniLM (and for the bundled model)
# ---------------------------------------------------------------------------


def test_minilm_is_offered_english_side_by_side_sentences_and_names_its_unknown_token(minilm):
    from qkv.apps.web.model_doc import model_doc

    model, tok = minilm
    doc = model_doc(model, tok, "minilm")
    assert doc["model"]["unknown_token"] == "[UNK]"
    side = doc["side"]
    assert side and not CJK.search(side["a"] + side["b"]), side
    for text in (side["a"], side["b"], *doc["examples"], doc["compare"]["a"], doc["compare"]["b"]):
        assert "[UNK]" not in tok.pieces(text), text
    assert "[UNK]" in tok.pieces("我打了你")  # what the bundled model is offered would not do


def test_the_api_offers_the_side_pair(minilm):
    from fastapi.testclient import TestClient

    from qkv.apps.web.server import create_app

    client = TestClient(create_app(*minilm, "minilm"), base_url="http://127.0.0.1:8000")
    info = client.get("/api/model").json()
    assert info["side"]["a"].lower().split() and not CJK.search(info["side"]["a"])
    assert info["model"]["unknown_token"] == "[UNK]"
    views = [client.post("/api/view", json={"text": info["side"][k]}).json() for k in ("a", "b")]
    assert all("[UNK]" not in v["tokens"] for v in views)
    unk = client.post("/api/view", json={"text": "我投资了苹果"}).json()
    assert "[UNK]" in unk["tokens"]  # what the page's note counts


def test_the_bundled_model_keeps_its_chinese_pair_and_has_no_unknown_token():
    from qkv.apps.web.model_doc import model_doc

    model, tok = qkv.load(default_ckpt())
    doc = model_doc(model, tok, "bundled")
    assert doc["side"] == {"a": "我打了你", "b": "你打了我"} and doc["model"]["unknown_token"] is None


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
