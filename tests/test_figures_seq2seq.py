"""qkv figure on a translation model: the alignment figure (cross-attention, target × source) of one
head or of every head with their mean, the two sentences' words on its axes, the corpus's gold
alignment drawn when the translation is the corpus's; the hull figure of one target step among the
source values; one-line errors for a figure the model cannot give."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from matplotlib.patches import Rectangle
from test_explain_seq2seq import SOURCE, tiny_pairs, tiny_translator
from test_figures import CJK, assert_written, capture, labels

from qkv.apps.cli import main
from qkv.apps.figure import figure
from qkv.core.train.checkpoint import load
from qkv.presentation import fonts, plot_alignment

WRITTEN = ["grandpa", "ate", "some", "banana", ".", "</s>"]


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    return tiny_translator(tmp_path_factory.getbasetemp())


def ticks(ax, axis):
    return [t.get_text() for t in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels())]


def gold_boxes(ax):
    return sorted((round(p.get_y() + 0.42), round(p.get_x() + 0.42)) for p in ax.patches if isinstance(p, Rectangle))


def cross_pattern(ckpt, layer):
    model, tok = load(ckpt)
    src = torch.tensor([tok.encode(SOURCE)])
    tgt = torch.tensor([[1] + [tok.ids[w] for w in WRITTEN[:-1]]])
    _, tr = model.run_with_trace(src, tgt)
    return tr[f"decoder.blocks.{layer}.cross_attn.hook_pattern"][0].numpy()  # (n_heads, T_target, T_source)


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_one_head_with_the_words_on_its_axes_and_the_gold_alignment(ckpt, tmp_path, monkeypatch, suffix):
    seen = capture(monkeypatch, plot_alignment)
    out = figure("alignment", tmp_path / f"a{suffix}", ckpt=ckpt, text=SOURCE, layer=0, head=1)
    assert_written(out)
    ax = seen[0].axes[0]
    assert ticks(ax, "x") == SOURCE.split() and ticks(ax, "y") == WRITTEN  # columns: source, rows: target
    np.testing.assert_array_equal(ax.images[0].get_array(), cross_pattern(ckpt, 0)[1])
    pair = tiny_pairs()[4]
    assert pair.text("zh") == SOURCE and gold_boxes(ax) == sorted((e, z) for z, e in pair.links)
    cells = [t.get_text() for t in ax.texts]
    assert len(cells) == 6 * 5 and all(c.startswith(("0.", "1.")) for c in cells)  # the weights, in the cells


def test_without_a_head_the_mean_comes_first_then_every_head(ckpt, tmp_path, monkeypatch):
    seen = capture(monkeypatch, plot_alignment)
    figure("alignment", tmp_path / "all.png", ckpt=ckpt, text=SOURCE)  # default: the last decoder layer
    panels = [ax for ax in seen[0].axes if ax.images]
    A = cross_pattern(ckpt, 1)
    assert len(panels) == 1 + A.shape[0]
    np.testing.assert_allclose(panels[0].images[0].get_array(), A.mean(0), rtol=1e-6)
    for h, ax in enumerate(panels[1:]):
        np.testing.assert_array_equal(ax.images[0].get_array(), A[h])
        assert gold_boxes(ax) == gold_boxes(panels[0])
    assert ticks(panels[0], "y") == WRITTEN and ticks(panels[-1], "x") == SOURCE.split()


def test_no_gold_alignment_for_a_sentence_not_in_the_corpus(ckpt, tmp_path, monkeypatch):
    seen = capture(monkeypatch, plot_alignment)
    figure("alignment", tmp_path / "odd.png", ckpt=ckpt, text="香蕉 爷爷 吃了 。", head=0)
    fig = seen[0]
    words = " ".join(" ".join(labels(fig)).split())  # the caption is wrapped to the figure's width
    assert (
        gold_boxes(fig.axes[0]) == [] and "No gold alignment: the source is not one of the corpus's sentences." in words
    )
    assert ticks(fig.axes[0], "x") == ["香蕉", "爷爷", "吃了", "。"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_figure_speaks_the_chosen_language(ckpt, tmp_path, monkeypatch, lang):
    seen = capture(monkeypatch, plot_alignment)
    figure("alignment", tmp_path / "l.png", ckpt=ckpt, text=SOURCE, lang=lang)
    words = labels(seen[0])
    assert len(words) >= 4
    if lang == "zh":
        assert all(CJK.search(w) for w in words) and fonts.missing_glyphs("".join(words)) == []
    else:
        assert not [w for w in words if CJK.search(w)]
    assert fonts.missing_glyphs("".join(SOURCE.split())) == []  # the source words on the axis draw as characters


def test_cli_alignment_and_hull(ckpt, tmp_path, capsys):
    assert (
        main(
            [
                "figure",
                "alignment",
                "--ckpt",
                str(ckpt),
                "--text",
                SOURCE,
                "--layer",
                "1",
                "--head",
                "0",
                "--out",
                str(tmp_path / "a.png"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "figure",
                "hull",
                "--ckpt",
                str(ckpt),
                "--text",
                SOURCE,
                "--head",
                "1",
                "--token",
                "0",
                "--out",
                str(tmp_path / "h.svg"),
            ]
        )
        == 0
    )
    assert_written(tmp_path / "a.png")
    assert b"grandpa" in (tmp_path / "h.svg").read_bytes()  # its title names the target step


@pytest.mark.parametrize(
    "args, words",
    [
        (["alignment", "--ckpt", "BUNDLED", "--text", "我 投资了 苹果"], "needs a translation model"),
        (["attention", "--ckpt", "TINY", "--text", SOURCE], "qkv figure alignment"),
        (["alignment", "--ckpt", "TINY", "--text", "榴莲"], "'榴莲'"),
        (["alignment", "--ckpt", "TINY", "--text", SOURCE, "--layer", "3"], "the decoder has 2 layers"),
        (["alignment", "--ckpt", "TINY", "--text", SOURCE, "--head", "2"], "2 heads"),
    ],
)
def test_cli_bad_input_is_one_line(ckpt, tmp_path, capsys, args, words):
    from qkv.core.hub.bundled import default_ckpt

    args = [str({"BUNDLED": default_ckpt(), "TINY": ckpt}.get(a, a)) for a in args]
    assert main(["figure", *args, "--out", str(tmp_path / "x.png")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("qkv: error: ") and words in err[0], err
    assert not (tmp_path / "x.png").exists()
