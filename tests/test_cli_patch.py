"""`qkv patch`, `qkv figure patching` and `qkv heads`: the tables in zh and en, their JSON the API's numbers,
and what they refuse in one line (no traceback, a non-zero exit)."""

from __future__ import annotations

import json

import pytest
import torch
from cli_util import run_error, run_ok

from qkv import GPT, ModelConfig, WordTokenizer
from qkv.analysis.head_scores import head_scores
from qkv.analysis.patch import patch_text
from qkv.apps.cli import main
from qkv.core import checkpoint
from qkv.core.bundled import default_ckpt

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
