"""The seeing-through commands end to end through `qkv.apps.cli.main`: output, JSON, one-line errors."""

from __future__ import annotations

import json

import pytest
import torch

from qkv import GPT, ModelConfig, train_tokenizer
from qkv.analysis.schema import validate
from qkv.apps.cli import main
from qkv.core.train.checkpoint import save

TEXT = "我 投资了 苹果 ， 股价 上涨了 。\n我 吃了 苹果 ， 味道 很 甜 。\n"


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    tok = train_tokenizer("char", TEXT)
    torch.manual_seed(0)
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=24, d_model=16, n_heads=2, n_layers=2))
    out = tmp_path_factory.mktemp("ckpt") / "run"
    save(out, model, tok)
    return out


def ok(capsys, argv) -> tuple[str, str]:
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out, err


def one_line_error(capsys, argv) -> str:
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc != 0 and "Traceback" not in err + out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qkv: error: "), err
    return lines[0]


def test_trace_json_validates_and_checks(capsys, ckpt):
    out, err = ok(capsys, ["trace", "--ckpt", str(ckpt), "我 投资了 苹果", "--check"])
    doc = json.loads(out)
    validate(doc)
    assert doc["check"]["passed"] is True and "checks pass" in err
    assert doc["tokens"][:3] == ["我", "␣", "投"]
    assert doc["activations"]["blocks.1.attn.hook_pattern"]["shape"] == [2, 8, 8]


def test_trace_names_and_out_file(capsys, ckpt, tmp_path):
    path = tmp_path / "t.json"
    ok(capsys, ["trace", "--ckpt", str(ckpt), "苹果", "--names", "blocks.0.attn.hook_z", "probs", "--out", str(path)])
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert set(doc["activations"]) == {"blocks.0.attn.hook_z", "probs"}
    assert "unknown activation" in one_line_error(
        capsys, ["trace", "--ckpt", str(ckpt), "苹果", "--names", "hook_nope"]
    )
    # with --check the whole trace is recorded first, but the names are checked all the same
    assert "hook_nope" in one_line_error(
        capsys, ["trace", "--ckpt", str(ckpt), "苹果", "--check", "--names", "hook_nope"]
    )


def test_attend_json_and_errors(capsys):
    out, _ = ok(
        capsys, ["attend", "--q", "sqrt(2),0", "--k", "ln(2),0; 0,1; 0,-1", "--v", "0,0; 4,0; 0,4", "--format", "json"]
    )
    doc = json.loads(out)
    validate(doc)
    assert doc["display"]["weights"] == ["1/2", "1/4", "1/4"] and doc["z"] == pytest.approx([1, 1])
    assert "row" in one_line_error(capsys, ["attend", "--q", "1,0", "--k", "1,0; 0", "--v", "0,0; 1,1"])
    one_line_error(capsys, ["attend", "--q", "__import__('os')", "--k", "1", "--v", "1"])


def test_explain_and_its_errors(capsys, ckpt):
    out, _ = ok(capsys, ["explain", "--ckpt", str(ckpt), "我 投资了 苹果", "--layer", "1", "--head", "0"])
    assert "Step 1" in out and "◀" in out
    doc = json.loads(ok(capsys, ["explain", "--ckpt", str(ckpt), "苹果", "--format", "json"])[0])
    validate(doc)
    assert "out of range" in one_line_error(capsys, ["explain", "--ckpt", str(ckpt), "苹果", "--layer", "5"])
    assert "𝄞" in one_line_error(capsys, ["explain", "--ckpt", str(ckpt), "苹果𝄞"])


def test_figure_and_its_errors(capsys, ckpt, tmp_path):
    path = tmp_path / "head.svg"
    ok(
        capsys,
        [
            "figure",
            "head",
            "--ckpt",
            str(ckpt),
            "--text",
            "我 吃了 苹果",
            "--layer",
            "0",
            "--head",
            "1",
            "--out",
            str(path),
            "--lang",
            "zh",
        ],
    )
    assert "<svg" in path.read_text(encoding="utf-8")
    one_line_error(capsys, ["figure", "head", "--ckpt", str(ckpt), "--text", "苹果", "--out", str(tmp_path / "x.gif")])
    # no --ckpt: the bundled model, which reads any text but at most n_ctx = 64 tokens
    assert "65 tokens" in one_line_error(
        capsys, ["figure", "hull", "--text", " ".join(["苹果"] * 65), "--out", str(tmp_path / "x.png")]
    )


def test_trace_check_with_names_checks_everything_then_filters(capsys, ckpt):
    out, err = ok(capsys, ["trace", "--ckpt", str(ckpt), "苹果", "--check", "--names", "probs"])
    doc = json.loads(out)
    assert set(doc["activations"]) == {"probs"} and doc["check"]["passed"] is True


def test_check_refuses_a_partial_trace(ckpt):
    from qkv import check, load

    model, tok = load(ckpt)
    _, trace = model.run_with_trace(torch.tensor([tok.encode("苹果")]), names=["probs"])
    with pytest.raises(ValueError, match="whole trace"):
        check(trace)


def test_trace_of_a_text_longer_than_n_ctx_says_what_it_kept(capsys, ckpt):
    text = "我 投资了 苹果 ， 股价 上涨了 。我 吃了 苹果"  # a char tokenizer: 26 tokens, n_ctx = 24
    out, err = ok(capsys, ["trace", "--ckpt", str(ckpt), text])
    assert len(text) == 26 and err.splitlines() == [
        "warning: the text has 26 tokens; only the last 24 (n_ctx) are traced"
    ]
    doc = json.loads(out)
    assert "".join(doc["tokens"]).replace("␣", " ") == text[-24:]
