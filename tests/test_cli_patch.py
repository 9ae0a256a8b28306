"""`qkv patch`, `qkv figure patching` and `qkv heads`: the tables in zh and en, their JSON the API's numbers,
and what they refuse in one line (no traceback, a non-zero exit)."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
import torch
from cli_util import run_error, run_ok

from qkv import GPT, ModelConfig, WordTokenizer
from qkv.analysis.head_scores import head_scores
from qkv.analysis.patch import patch_text
from qkv.apps.cli import main
from qkv.core.hub.bundled import default_ckpt
from qkv.core.train import checkpoint

CLEAN, CORRUPT = "我 昨天 吃了 苹果 ，", "我 上周 投资了 苹果 ，"
PATCH = ["patch", "--clean", CLEAN, "--corrupt", CORRUPT, "--answer", "味道", "--wrong", "股价"]
FIGURE = ["figure", "patching", "--clean", CLEAN, "--corrupt", CORRUPT, "--answer", "味道", "--wrong", "股价"]


@pytest.fixture(scope="module")
def bundled():
    model, tokenizer = checkpoint.load(default_ckpt())
    return model.eval(), tokenizer


@pytest.fixture(scope="module")
def words_ckpt(tmp_path_factory):
    """A checkpoint whose word tokenizer has no fallback: a word outside its vocabulary is refused."""
    tok = WordTokenizer.train("我 吃了 苹果 ， 味道 很 甜 。 我 投资了 苹果 ， 股价 上涨了 。")
    torch.manual_seed(0)
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=8, d_model=16, n_heads=2, n_layers=2))
    out = tmp_path_factory.mktemp("words") / "ckpt"
    checkpoint.save(out, model, tok)
    return out


def table_rows(out: str, first: str) -> list[list[str]]:
    """The rows of the printed table from its header (which starts with `first`) to the blank line after it."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(first))
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        rows.append(line.split())
    return rows


@pytest.mark.parametrize(
    "lang,corner,layer,words",
    [
        ("en", "layer \\ position", "layer", ["clean run", "corrupted run"]),
        ("zh", "层 \\ 位置", "层", ["干净运行", "损坏运行"]),
    ],
)
def test_patch_prints_the_table_in_both_languages(capsys, bundled, lang, corner, layer, words):
    model, tok = bundled
    want = patch_text(model, tok, CLEAN, CORRUPT, "味道", "股价")
    out, _ = run_ok(capsys, [*PATCH, "--lang", lang])
    for w in [*words, "1 昨天/上周", "2 吃了/投资了", f"{want.clean:.3f}", f"{want.corrupted:.3f}"]:
        assert w in out, w
    rows = table_rows(out, corner)
    assert [r[:2] for r in rows] == [[layer, str(L)] for L in range(model.cfg.n_layers)]
    for L, row in enumerate(rows):  # each cell: the value, then its share in brackets
        values = [float(c) for c in row[2::2]]
        assert values == pytest.approx(want.values[L].tolist(), abs=1.5e-3)
    if lang == "en":
        assert "layer 0, position 2 (吃了/投资了)" in out or "layer 1, position 2 (吃了/投资了)" in out
    else:
        assert "最大" in out and "，位置 2（吃了/投资了）" in out


def test_patch_json_is_the_api_document(capsys, bundled):
    model, tok = bundled
    out, _ = run_ok(capsys, [*PATCH, "--site", "z", "--json"])
    doc = json.loads(out)
    want = patch_text(model, tok, CLEAN, CORRUPT, "味道", "股价", site="z").to_json(tok)
    assert doc["kind"] == "patching" and doc["axes"] == ["layer", "head"]
    assert (doc["answer"], doc["wrong"], doc["tokens"]) == (want["answer"], want["wrong"], want["tokens"])
    assert torch.allclose(torch.tensor(doc["values"]), torch.tensor(want["values"]), atol=1e-5)
    assert len(doc["values"]) == model.cfg.n_layers and len(doc["values"][0]) == model.cfg.n_heads


def test_patch_heads_table(capsys, bundled):
    model, tok = bundled
    want = patch_text(model, tok, CLEAN, CORRUPT, "味道", "股价", site="z")
    out, _ = run_ok(capsys, [*PATCH, "--site", "z"])
    header = next(line for line in out.splitlines() if "layer \\ head" in line)
    assert header.split()[3:] == [w for h in range(model.cfg.n_heads) for w in ("head", str(h))]
    rows = table_rows(out, "layer \\ head")
    assert [[float(c) for c in r[2::2]] for r in rows] == [pytest.approx(v, abs=1.5e-3) for v in want.values.tolist()]
    L, H, _ = want.strongest(1)[0]
    assert f"layer {L}, head {H}: " in out


@pytest.mark.parametrize(
    "argv,said",
    [
        (["--clean", "我 吃了 苹果 ，"], "same number of tokens"),
        (["--answer", "味道 很"], "must each be one token"),
        (["--wrong", "味道很甜"], "must each be one token"),
        (["--ckpt", "minilm"], "has no logits"),
    ],
)
def test_patch_refuses_in_one_line(capsys, argv, said):
    args = list(PATCH)
    for flag, value in zip(argv[::2], argv[1::2]):
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    assert said in run_error(capsys, args)


def test_a_word_the_vocabulary_lacks_is_refused(capsys, words_ckpt):
    base = ["patch", "--ckpt", str(words_ckpt), "--clean", "我 吃了 苹果 ，", "--corrupt", "我 投资了 苹果 ，"]
    out, _ = run_ok(capsys, [*base, "--answer", "味道", "--wrong", "股价"])
    assert "layer 1" in out
    line = run_error(capsys, [*base, "--answer", "酸", "--wrong", "股价"])
    assert "'酸'" in line and "vocabulary" in line


def test_the_patching_figure(capsys, tmp_path):
    out, _ = run_ok(capsys, [*FIGURE, "--out", str(tmp_path / "p.png"), "--lang", "zh"])
    assert out.strip() == str(tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    run_ok(capsys, [*FIGURE, "--site", "z", "--out", str(tmp_path / "z.svg")])
    assert b"<svg" in (tmp_path / "z.svg").read_bytes()
    assert "--wrong" in run_error(capsys, [*FIGURE[:-2], "--out", str(tmp_path / "q.png")])
    assert "--clean" in run_error(capsys, ["figure", "positions", "--clean", CLEAN, "--out", str(tmp_path / "r.png")])
    assert ".png or .svg" in run_error(capsys, [*FIGURE, "--out", str(tmp_path / "p.pdf")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.png", "z.svg"]


def test_heads_prints_the_scores_in_both_languages(capsys, bundled):
    model, tok = bundled
    want = head_scores(model, tok)
    out, _ = run_ok(capsys, ["heads", "--json"])
    doc = json.loads(out)
    assert doc["kind"] == "head-scores"
    assert torch.allclose(torch.tensor(doc["scores"]["previous"], dtype=torch.float64), want.previous, atol=1e-9)
    en, _ = run_ok(capsys, ["heads"])
    zh, _ = run_ok(capsys, ["heads", "--lang", "zh"])
    assert en != zh and "头" in zh and "head" in en
    L, H, s = want.best("induction")
    assert f"{s:.3f}" in en and f"{s:.3f}" in zh


def test_heads_refuses_an_encoder_in_one_line(capsys):
    assert main(["heads", "--ckpt", "minilm"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and err.startswith("qkv: error: ")


# ------------------------------------------------------------------ the trial's findings


def refused_line(capsys, argv) -> str:
    """The one line a failing command writes, in either language ("qkv: error: " or "qkv: 错误：")."""
    rc = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc != 0 and "Traceback" not in err + out and len(lines) == 1, err
    assert lines[0].startswith(("qkv: error: ", "qkv: 错误：")), lines[0]
    return lines[0]


def columns(s: str) -> int:
    """Display columns of `s`, counted here on their own: an East Asian wide or full-width character 2."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def right_edges(line: str) -> list[int]:
    """The display column at which each run of non-blank characters (a cell) ends; cells are 2+ spaces apart."""
    edges, at = [], 0
    for m in re.finditer(r"\S+(?: \S+)*", line):
        at = columns(line[: m.end()])
        edges.append(at)
    return edges


def table_lines(out: str, first: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(first))
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    return lines[start:end]


@pytest.mark.parametrize("lang,said", [("en", "the same ('很')"), ("zh", "同一个（'很'）")])
def test_the_same_answer_and_wrong_word_is_refused(capsys, lang, said):
    args = [*PATCH, "--lang", lang]
    args[args.index("--answer") + 1] = args[args.index("--wrong") + 1] = "很"
    assert said in refused_line(capsys, args)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_unequal_lengths_show_the_tokens(capsys, lang):
    args = [*PATCH, "--lang", lang]
    args[args.index("--clean") + 1] = "我 昨天 吃了 榴莲 ，"
    line = refused_line(capsys, args)
    assert "我|昨天|吃了|榴|莲|，" in line and "我|上周|投资了|苹果|，" in line


@pytest.mark.parametrize("lang,caution", [("en", "Caution: "), ("zh", "注意：")])
def test_a_caution_when_the_runs_barely_differ(capsys, bundled, lang, caution):
    """Under 1 logit apart (measured here by the API): a caution line; 10 apart (the example): none."""
    model, tok = bundled
    near = "我 昨天 吃了 香蕉 ，"
    r = patch_text(model, tok, CLEAN, near, "味道", "股价")
    assert abs(r.clean - r.corrupted) < 1.0
    args = [*PATCH, "--lang", lang]
    args[args.index("--corrupt") + 1] = near
    out, _ = run_ok(capsys, args)
    lines = [line for line in out.splitlines() if line.startswith(caution)]
    assert len(lines) == 1 and f"{abs(r.clean - r.corrupted):.3f}" in lines[0]
    assert json.loads(run_ok(capsys, [*args, "--json"])[0])["gap_small"] is True
    out, _ = run_ok(capsys, [*PATCH, "--lang", lang])
    assert caution not in out
    assert json.loads(run_ok(capsys, [*PATCH, "--json"])[0])["gap_small"] is False


@pytest.mark.parametrize("site,corner", [("resid_pre", "层 \\ 位置"), ("z", "层 \\ 头")])
def test_the_zh_patching_table_is_aligned_by_display_width(capsys, site, corner):
    out, _ = run_ok(capsys, [*PATCH, "--lang", "zh", "--site", site])
    lines = table_lines(out, corner)
    edges = [right_edges(line)[1:] for line in lines]  # the value columns (right-aligned), after the layer
    assert len({len(e) for e in edges}) == 1 and len(edges[0]) >= 4
    assert all(e == edges[0] for e in edges), "\n".join(lines)


def test_the_zh_heads_tables_are_aligned_by_display_width(capsys):
    out, _ = run_ok(capsys, ["heads", "--lang", "zh"])
    blocks = out.strip().split("\n\n")[1:]
    assert len(blocks) == 4
    for block in blocks:
        lines = block.splitlines()[1:-1]  # the head row and one row per layer
        edges = [right_edges(line)[1:] for line in lines]
        assert len(edges[0]) == 4 and all(e == edges[0] for e in edges), block
        starts = [columns(line[: len(line) - len(line.lstrip())]) for line in lines]
        assert starts == [0] * len(lines)  # the layer names start each row


def test_the_kinds_are_called_as_on_the_page(capsys, bundled):
    """qkv heads names each kind with the page's head-label names (routes_heads.head_labels)."""
    from qkv.apps.web.routes_heads import head_labels

    model, tok = bundled
    names = head_labels(model, tok)["names"]
    for lang in ("en", "zh"):
        out, _ = run_ok(capsys, ["heads", "--lang", lang])
        for kind, block in zip(("previous", "duplicate", "induction", "first"), out.strip().split("\n\n")[1:]):
            first, last = block.splitlines()[0], block.splitlines()[-1]
            assert f"“{names[lang][kind]['short']}”" in first and f"“{names[lang][kind]['short']}”" in last
    assert names["zh"]["previous"]["short"] == "前一词元" and names["zh"]["first"]["short"] == "首词元"
    zh, _ = run_ok(capsys, ["heads", "--lang", "zh"])
    assert "前一个" not in zh and "“开头”" not in zh


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_patching_figure_draws_toward_the_clean_run_blue(tmp_path, lang):
    """Every cell a share of +1 (all the way to the clean run): the picture is mostly blue; -1: mostly red.
    The colour bar holds both colours equally, so the cells decide."""
    from matplotlib.image import imread

    from qkv.presentation.plot_patching import patching_heatmap

    def doc(share: float) -> dict:
        return {
            "site": "resid_pre", "axes": ["layer", "pos"], "values": [[share] * 3] * 2,
            "normalized": [[share] * 3] * 2, "clean": 1.0, "corrupted": 0.0, "gap_small": False,
            "tokens": {"clean": ["a", "b", "c"], "corrupted": ["a", "x", "c"]},
            "answer": None, "wrong": None, "position": 2,
        }  # fmt: skip

    def blue_minus_red(share: float) -> int:
        rgb = imread(patching_heatmap(doc(share), tmp_path / f"{share}.png", lang=lang, annotate=False))[..., :3]
        r, b = rgb[..., 0], rgb[..., 2]
        # RdBu's ends: red (0.40, 0, 0.12), blue (0.02, 0.19, 0.38)
        return int(((b - r) > 0.15).sum()) - int(((r - b) > 0.15).sum())

    assert blue_minus_red(1.0) > 10_000 and blue_minus_red(-1.0) < -10_000


def test_the_patching_colour_bar_says_blue_is_toward_the_clean_run():
    from matplotlib import colormaps

    from qkv.presentation.i18n import t
    from qkv.presentation.plot_patching import CMAP

    top, bottom = colormaps[CMAP](1.0), colormaps[CMAP](0.0)
    assert top[2] > top[0] + 0.2 and bottom[0] > bottom[2] + 0.2  # +1 blue, -1 red
    assert "blue: toward the clean run" in t("figures.patching.share_colours", "en")
    assert "蓝：向干净运行靠近" in t("figures.patching.share_colours", "zh")


def test_patch_whole_layers_table_json_and_figure(capsys, bundled, tmp_path):
    """--whole: one number a layer, each the corrupted run with that layer's whole activation patched in;
    the table has one column, the JSON one axis, and the figure draws it."""
    model, tok = bundled
    want = patch_text(model, tok, CLEAN, CORRUPT, "味道", "股价", site="attn_out", whole=True)
    out, _ = run_ok(capsys, [*PATCH, "--site", "attn_out", "--whole", "--json"])
    doc = json.loads(out)
    assert doc["axes"] == ["layer"] and doc["values"] == pytest.approx(want.values.tolist(), abs=1e-5)
    out, _ = run_ok(capsys, [*PATCH, "--site", "attn_out", "--whole", "--lang", "zh"])
    assert "整层" in out and f"{want.values[0].item():.3f}" in out
    run_ok(capsys, [*FIGURE, "--site", "attn_out", "--whole", "--out", str(tmp_path / "w.png")])
    assert (tmp_path / "w.png").stat().st_size > 0
