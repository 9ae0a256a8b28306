"""Every subcommand with every numeric flag at 0, negative, huge, NaN, inf and not a number.

Each case either has a documented meaning (and then runs: exit 0) or is refused with exactly one line
`qkv: error: ...` on stderr and a non-zero exit; never a traceback, never a warning. In-process through
`qkv.apps.cli.main` (fast); `serve` is only validated (a host that cannot be bound ends it).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import warnings

import pytest

from qkv.apps.cli import main
from qkv.core.hub.bundled import default_ckpt
from qkv.core.text import corpus

SENTENCE = "我 投资了 苹果 ，"
BUNDLED = str(default_ckpt())
VALUES = {"zero": "0", "negative": "-1", "huge": "1" + "0" * 30, "nan": "nan", "inf": "inf", "text": "abc"}
FLOAT_VALUES = {**VALUES, "huge": "1e400"}  # a float that huge is inf; 1e30 is tried as "big"
TINY = [
    f"--set={kv}"
    for kv in (
        "n_layers=1",
        "d_model=16",
        "n_heads=2",
        "n_ctx=8",
        "steps=2",
        "batch_size=2",
        "eval_interval=1",
        "eval_steps=1",
    )
]
GENERATE = ["generate", "--ckpt", BUNDLED, "--prompt", SENTENCE, "--max-new-tokens", "2"]
TRAIN = ["train", "--text", "{tmp}/text.txt", "--out", "{tmp}/run", "--quiet", *TINY]
FIGURE = ["figure", "hull", "--text", SENTENCE, "--out", "{tmp}/hull.png"]
ATTEND = ["attend", "--k", "1,0; 0,1", "--v", "1; 2"]

# (command line, flag, values, the kinds of value with a meaning: they run)
FLAGS = [
    (GENERATE, "--max-new-tokens", VALUES, {"zero"}),  # the prompt alone
    (GENERATE, "--temperature", FLOAT_VALUES, {"zero"}),  # greedy
    (GENERATE, "--top-k", VALUES, {"huge"}),  # more than the vocabulary: nothing left out
    (GENERATE, "--top-p", FLOAT_VALUES, set()),
    (GENERATE, "--seed", VALUES, {"zero"}),
    (["explain", SENTENCE], "--layer", VALUES, {"zero", "negative"}),  # negative: counted from the end
    (["explain", SENTENCE, "--layer", "0"], "--head", VALUES, {"zero", "negative"}),
    (["explain", SENTENCE], "--token", VALUES, {"zero", "negative"}),
    (["explain", SENTENCE], "--top", VALUES, {"huge"}),  # every row
    (FIGURE, "--layer", VALUES, {"zero", "negative"}),
    (FIGURE, "--head", VALUES, {"zero", "negative"}),
    (FIGURE, "--token", VALUES, {"zero", "negative"}),
    (ATTEND + ["--q", "1,0"], "--dk", FLOAT_VALUES, set()),
    (ATTEND + ["--q", "1,0"], "--dk", {"big": "1e30"}, {"big"}),
    (ATTEND, "--q", {k: f"{v},1" for k, v in FLOAT_VALUES.items()}, {"zero", "negative"}),
    (ATTEND, "--q", {"big": "1e30,1"}, {"big"}),
    (["serve", "--host", "256.0.0.1"], "--port", VALUES, set()),  # port 0 is valid: the host ends it
    (TRAIN, "--until", VALUES, set()),
    (["corpus"], "-n", VALUES, set()),
    (["corpus"], "--seed", VALUES, {"zero"}),
    (TRAIN + ["--tokenizer", "word"], "--vocab-size", VALUES, {"huge"}),  # at most: every word
    (TRAIN + ["--tokenizer", "bpe"], "--vocab-size", VALUES, set()),
    (TRAIN, "--vocab-size", VALUES, set()),  # a char tokenizer takes none: every value is refused, not ignored
    *[
        (TRAIN, "--set", {kind: f"{key}={v}" for kind, v in {**VALUES, "huge float": "1e400"}.items()}, valid)
        for key, valid in (
            ("steps", set()),
            ("lr", set()),
            ("batch_size", set()),
            ("n_ctx", set()),
            ("dropout", {"zero"}),
            ("seed", {"zero"}),
        )
    ],
]
CASES = [
    pytest.param(line, flag, kind, value, kind in valid, id=f"{line[0]} {flag} {value[:12]}")
    for line, flag, values, valid in FLAGS
    for kind, value in values.items()
]

# other bad input, one per subcommand, with what the line must name
OTHERS = [
    (["info", "--ckpt", "{tmp}/text.txt"], "not a checkpoint directory"),
    (["info", "--ckpt", "{tmp}/none"], "does not exist"),
    (["lesson", "nope"], "unknown lesson 'nope'"),
    (["demo", "--out", "{tmp}/text.txt"], "not a checkpoint directory"),
    (["trace", ""], "empty"),
    (["trace", "苹果", "--names", "hook_nope"], "hook_nope"),
    (["trace", "苹果", "--check", "--names", "hook_nope"], "hook_nope"),
    ([*TRAIN, "--tokenizer", "word", "--vocab-size", "2"], "the vocabulary is too small for the text (2 tokens kept"),
    (
        ["figure", "loss", "--log", "{tmp}/binary", "--out", "{tmp}/loss.png"],
        "binary/log.jsonl is not a training log: not UTF-8 text (byte 0)",
    ),
    (["figure", "loss", "--log", "{tmp}/binary/log.jsonl", "--out", "{tmp}/loss.png"], "not UTF-8"),
    (["attend", "--q", "1e200", "--k", "1e200; -1e200", "--v", "1; 2"], "q·k1: the term 1e+200·1e+200 overflows"),
    (["attend", "--q", "1", "--k", "1; 1", "--v", "1e308; -1e308", "--figure", "{tmp}/a.png"], "cannot draw values"),
    (["attend", "--q", ",".join(["1"] * 1001), "--k", "1", "--v", "1"], "at most 1,000 per vector"),
    (["generate", "--ckpt", BUNDLED, "--seed", str(2**64)], "--seed: must be between 0 and 9223372036854775807"),
]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    (d / "text.txt").write_text(corpus.generate(n_sentences=60, lang="en"), encoding="utf-8")
    (d / "binary").mkdir()
    (d / "binary" / "log.jsonl").write_bytes(bytes(range(255, 0, -1)) * 4)
    return d


def run(argv: list[str]) -> tuple[int, str, str, list[str]]:
    """(exit code, stdout, stderr, warnings) of `qkv ARGV` in this process."""
    out, err = io.StringIO(), io.StringIO()
    with (
        warnings.catch_warnings(record=True) as caught,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        warnings.simplefilter("always")
        try:
            code = main(argv)
        except SystemExit as e:  # argparse: a usage error
            code = e.code
    return code, out.getvalue(), err.getvalue(), [f"{w.category.__name__}: {w.message}" for w in caught]


def one_line_error(argv) -> str:
    code, out, err, caught = run(argv)
    assert code != 0, (argv, out, err)
    assert "Traceback" not in out + err and not caught, (err, caught)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qkv: error:"), err
    return lines[0]


@pytest.mark.parametrize("line, flag, kind, value, valid", CASES)
def test_every_numeric_flag(tmp, line, flag, kind, value, valid):
    shutil.rmtree(tmp / "run", ignore_errors=True)  # a run that trained leaves its checkpoint
    argv = [a.format(tmp=tmp) for a in line] + [f"{flag}={value}"]
    if not valid:
        one_line_error(argv)
        return
    code, out, err, caught = run(argv)
    assert code == 0, (argv, err)
    assert out and "Traceback" not in err and not caught and "Warning" not in err, (err, caught)


@pytest.mark.parametrize("argv, needle", OTHERS, ids=[" ".join(a)[:40] for a, _ in OTHERS])
def test_other_bad_input_is_one_line_naming_it(tmp, argv, needle):
    assert needle in one_line_error([a.format(tmp=tmp) for a in argv])
