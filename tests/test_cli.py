"""Tests for the `qkv` command: it works, and bad input gives one line `qkv: error: ...`, never a traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qkv.apps.cli import main
from qkv.core.decode.sample import generate
from qkv.core.hub.bundled import default_ckpt, default_translate_ckpt
from qkv.core.text import corpus
from qkv.core.train import checkpoint
from qkv.core.train.lm import train

TINY = [
    "n_layers=1",
    "d_model=32",
    "n_heads=2",
    "n_ctx=16",
    "steps=30",
    "batch_size=4",
    "eval_interval=10",
    "eval_steps=2",
]
from cli_util import run_error, run_ok  # noqa: E402
from conftest import TEXT  # noqa: E402 (the text of the text_file fixture)


def sets(pairs) -> list[str]:
    return [a for pair in pairs for a in ("--set", pair)]


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory) -> Path:
    """A trained checkpoint shared by the read-only tests (copy it before changing it)."""
    out = tmp_path_factory.mktemp("ckpt") / "run"
    train(TEXT, out=out, overrides=TINY + ["lr=1e-2", "warmup_steps=5"], progress=False)
    return out


# ---------------------------------------------------------------------------- train


def test_train_creates_a_checkpoint_and_prints_a_summary(capsys, tmp_path, text_file):
    out_dir = tmp_path / "run"
    out, err = run_ok(capsys, ["train", "--text", str(text_file), "--out", str(out_dir), "--quiet", *sets(TINY)])
    assert err == ""  # --quiet: no progress bar
    assert out.startswith("trained to step 30 in ")
    assert "train loss" in out and "val loss" in out and str(out_dir) in out
    assert len(out.strip().splitlines()) == 1
    c = checkpoint.load_checkpoint(out_dir)
    assert c.state["step"] == 30
    assert c.config["data"]["kind"] == "file" and c.config["data"]["path"] == str(text_file.resolve())
    assert c.model.cfg.n_layers == 1 and c.model.cfg.d_model == 32
    # the printed losses are the checkpoint's
    assert f"train loss {c.state['train_loss']:.4f}" in out


def test_train_progress_bar_goes_to_stderr(capsys, tmp_path, text_file):
    out, err = run_ok(
        capsys, ["train", "--text", str(text_file), "--out", str(tmp_path / "r"), *sets(TINY + ["steps=3"])]
    )
    assert out.strip().splitlines() == [out.strip()] and out.startswith(
        "trained to step 3 "
    )  # stdout: the summary only
    assert "step 3: train loss " in err  # the evaluation, printed above the bar
    assert "3/3" in err  # the bar itself is on stderr


def test_train_until_then_resume(capsys, tmp_path, text_file):
    a, b = tmp_path / "a", tmp_path / "b"
    run_ok(capsys, ["train", "--text", str(text_file), "--out", str(a), "--quiet", *sets(TINY)])
    out, _ = run_ok(
        capsys, ["train", "--text", str(text_file), "--out", str(b), "--quiet", "--until", "10", *sets(TINY)]
    )
    assert out.startswith("trained to step 10 ")
    out, _ = run_ok(capsys, ["train", "--out", str(b), "--resume", "--quiet"])  # the text is found again
    assert out.startswith("trained to step 30 ")

    def losses(d):
        return [json.loads(line).get("loss") for line in (d / "log.jsonl").read_text().splitlines()]

    assert losses(a) == losses(b)  # bit for bit: one process and thread count, and resume restores every state
    line = run_error(capsys, ["train", "--out", str(b), "--resume", "--quiet"])
    assert "already trained to step 30" in line
    line = run_error(capsys, ["train", "--text", str(text_file), "--out", str(b), "--quiet", *sets(TINY)])
    assert "already holds a checkpoint" in line and "--force" in line
    out, _ = run_ok(
        capsys, ["train", "--text", str(text_file), "--out", str(b), "--quiet", "--force", *sets(TINY + ["steps=5"])]
    )
    assert out.startswith("trained to step 5 ")


# ---------------------------------------------------------------------------- generate / info


def test_generate_streams_prompt_and_continuation(capsys, ckpt):
    out, err = run_ok(
        capsys, ["generate", "--ckpt", str(ckpt), "--prompt", "the ", "--max-new-tokens", "13", "--seed", "1"]
    )
    assert err == ""  # 4 + 13 tokens: the 13th is picked from 16 = n_ctx, no more
    assert out.startswith("the ") and out.endswith("\n")
    continuation = out[len("the ") : -1]
    assert len(continuation) == 13  # a char tokenizer: one character per token
    model, tok = checkpoint.load(ckpt)
    # the same process, threads and code path (the KV cache): bit for bit
    assert continuation == generate(model, tok, "the ", 13, temperature=0.8, seed=1)


def test_generate_says_when_it_passes_n_ctx(capsys, ckpt):
    out, err = run_ok(
        capsys, ["generate", "--ckpt", str(ckpt), "--prompt", "the ", "--max-new-tokens", "14", "--seed", "1"]
    )
    assert err.splitlines() == [
        "note: 4 prompt + 14 new tokens pass n_ctx = 16: from new token 14 on, "
        "each is picked from the last 16 tokens only"
    ]
    assert len(out) == len("the ") + 14 + 1


def test_generate_streams_words_with_their_spaces(capsys, tmp_path):
    """A word tokenizer without whitespace tokens puts a space between words when decoding; the stream
    writes the same text, the space between the prompt's last word and the first new one included."""
    import torch

    from qkv import GPT, ModelConfig, train_tokenizer

    tok = train_tokenizer("word", corpus.generate(0, 200, "en"), whitespace=False)
    torch.manual_seed(0)
    checkpoint.save(
        tmp_path / "w", GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=32, d_model=32, n_heads=2, n_layers=1)), tok
    )
    model, tok = checkpoint.load(tmp_path / "w")
    out, _ = run_ok(
        capsys,
        ["generate", "--ckpt", str(tmp_path / "w"), "--prompt", "i ate", "--max-new-tokens", "12", "--seed", "3"],
    )
    new = generate(model, tok, "i ate", 12, temperature=0.8, seed=3)
    assert new.startswith(" ") and out == tok.decode(tok.encode("i ate")) + new + "\n"
    assert out.count("  ") == 0  # one space between words, never two


def test_generate_seed_is_reproducible(capsys, ckpt):
    argv = ["generate", "--ckpt", str(ckpt), "--prompt", "i ", "--max-new-tokens", "30", "--temperature", "1.0"]
    a, _ = run_ok(capsys, argv + ["--seed", "5"])
    b, _ = run_ok(capsys, argv + ["--seed", "5"])
    c, _ = run_ok(capsys, argv + ["--seed", "6"])
    d, _ = run_ok(capsys, argv + ["--seed", "5", "--no-cache"])
    d2, _ = run_ok(capsys, argv + ["--seed", "5", "--no-cache"])
    e, _ = run_ok(capsys, argv + ["--seed", "5", "--top-k", "3", "--top-p", "0.9"])
    assert a == b and d == d2  # the same seed, process, threads and code path: bit for bit
    assert a != c
    assert len(e) == len(a) == len(d) and e != a  # top-k and top-p change what is drawn
    model, tok = checkpoint.load(ckpt)
    assert e[len("i ") : -1] == generate(model, tok, "i ", 30, temperature=1.0, top_k=3, top_p=0.9, seed=5)


def test_generate_no_cache_picks_the_same_tokens(capsys, ckpt):
    """The KV cache (GPT.stepper: one query through SDPA) and --no-cache (the whole window through
    GPT.forward) do different float32 arithmetic: their logits agree to ~1e-6, not bit for bit, so
    the texts cannot be compared bit for bit by construction. Greedy picks are provably the same when
    at every step the best logit leads the second by far more than that: checked, then the texts."""
    import torch

    prompt = "i "
    argv = ["generate", "--ckpt", str(ckpt), "--prompt", prompt, "--max-new-tokens", "30", "--temperature", "0"]
    cached, _ = run_ok(capsys, argv)
    model, tok = checkpoint.load(ckpt)
    ids, n_ctx = tok.encode(cached[:-1]), model.cfg.n_ctx
    with torch.no_grad():
        for t in range(len(tok.encode(prompt)), len(ids)):  # the logits that picked ids[t], as --no-cache computes them
            logits = model(torch.tensor([ids[max(0, t - n_ctx) : t]]))[0, -1]
            best, second = logits.topk(2).values.tolist()
            assert logits.argmax() == ids[t] and best - second > 1e-3, (t, best, second)
    uncached, _ = run_ok(capsys, argv + ["--no-cache"])
    assert uncached == cached


def test_generate_greedy(capsys, ckpt):
    argv = ["generate", "--ckpt", str(ckpt), "--prompt", "a", "--max-new-tokens", "20", "--temperature", "0"]
    a, _ = run_ok(capsys, argv + ["--seed", "1"])
    b, _ = run_ok(capsys, argv + ["--seed", "2"])
    assert a == b and len(a) == 1 + 20 + 1


def test_generate_unknown_characters_are_named(capsys, ckpt):
    line = run_error(capsys, ["generate", "--ckpt", str(ckpt), "--prompt", "the 你好 ☃"])
    assert "'你'" in line and "'好'" in line and "'☃'" in line
    assert "vocabulary" in line


def test_generate_long_prompt_warns_and_still_generates(capsys, ckpt):
    prompt = "the " * 10  # 40 characters, n_ctx = 16
    rc = main(["generate", "--ckpt", str(ckpt), "--prompt", prompt, "--max-new-tokens", "10", "--seed", "0"])
    out, err = capsys.readouterr()
    assert rc == 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning:") and "40 tokens" in lines[0] and "16" in lines[0]
    assert out.startswith(prompt) and len(out) == len(prompt) + 10 + 1


def test_info_prints_step_and_parameters(capsys, ckpt):
    out, _ = run_ok(capsys, ["info", "--ckpt", str(ckpt)])
    model, tok = checkpoint.load(ckpt)
    first = out.splitlines()[0]
    assert "step 30" in first
    assert f"{model.num_params():,} parameters" in first
    assert f"char tokenizer with {tok.vocab_size} tokens" in first
    assert "  n_layers = 1" in out and "  d_model = 32" in out
    assert "train_loss:" in out and "val_loss:" in out


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "content, match",
    [
        (None, "does not exist"),
        (b"", "empty"),
        (b" \n\n ", "empty"),
        (b"caf\xe9 au lait\n" * 10, "not UTF-8 \\(byte 3"),
        (b"short text", "n_ctx \\+ 1 = 17"),
    ],
)
def test_train_bad_text_file(capsys, tmp_path, content, match):
    import re

    path = tmp_path / "text.txt"
    if content is not None:
        path.write_bytes(content)
    line = run_error(capsys, ["train", "--text", str(path), "--out", str(tmp_path / "run"), "--quiet", *sets(TINY)])
    assert re.search(match, line), line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "args, match",
    [
        (sets(["n_layer=2"]), "unknown setting \\(did you mean n_layers\\?\\)"),
        (sets(["n_layers=abc"]), "n_layers=abc: expected an integer"),
        (sets(["n_layers=0"]), "n_layers must be between 1 and"),
        (sets(["dropout=1.5"]), "dropout_embed must be in"),
        (sets(["lr=-1"]), "lr must be in"),
        (sets(["d_model=33"]), "not divisible by n_heads"),
        (sets(["tie_embeddings=maybe"]), "expected true or false"),
        (sets(["n_layers"]), "key=value"),
        (["--preset", "huge"], "unknown preset 'huge'"),
        (["--until", "31"], "--until must be between 1 and 30; got 31"),
        (["--until", "0"], "--until must be between 1 and 30; got 0"),
        (["--tokenizer", "bpe", "--vocab-size", "100"], "at least 256"),
    ],
)
def test_train_bad_settings(capsys, tmp_path, text_file, args, match):
    import re

    line = run_error(
        capsys, ["train", "--text", str(text_file), "--out", str(tmp_path / "run"), "--quiet", *sets(TINY), *args]
    )
    assert re.search(match, line), line
    assert not (tmp_path / "run").exists()


def test_train_resume_in_an_empty_dir(capsys, tmp_path, text_file):
    empty = tmp_path / "empty"
    empty.mkdir()
    line = run_error(capsys, ["train", "--out", str(empty), "--resume", "--quiet"])
    assert "config.json" in line
    line = run_error(capsys, ["train", "--text", str(text_file), "--out", str(empty), "--resume", "--quiet"])
    assert "config.json" in line
    assert list(empty.iterdir()) == []


@pytest.mark.parametrize("command", ["generate", "info"])
def test_checkpoint_dir_missing(capsys, tmp_path, command):
    line = run_error(capsys, [command, "--ckpt", str(tmp_path / "nope")])
    assert "does not exist" in line and "nope" in line


@pytest.mark.parametrize("name", ["config.json", "tokenizer.json", "state.json", "model-0000030.safetensors"])
@pytest.mark.parametrize("command", ["generate", "info"])
def test_checkpoint_with_a_missing_file(capsys, tmp_path, ckpt, name, command):
    d = tmp_path / "ckpt"
    shutil.copytree(ckpt, d)
    (d / name).unlink()
    line = run_error(capsys, [command, "--ckpt", str(d)])
    assert name in line


def test_checkpoint_whose_tensors_do_not_match_its_config(capsys, tmp_path, ckpt):
    d = tmp_path / "ckpt"
    shutil.copytree(ckpt, d)
    config = json.loads((d / "config.json").read_text())
    config["model"]["d_model"] = 64
    (d / "config.json").write_text(json.dumps(config))
    line = run_error(capsys, ["generate", "--ckpt", str(d), "--prompt", "the"])
    assert "has shape" in line and "config.json" in line
    line = run_error(capsys, ["info", "--ckpt", str(d)])
    assert "has shape" in line


def test_checkpoint_with_corrupt_weights(capsys, tmp_path, ckpt):
    d = tmp_path / "ckpt"
    shutil.copytree(ckpt, d)
    path = d / "model-0000030.safetensors"
    path.write_bytes(path.read_bytes()[:100])
    line = run_error(capsys, ["generate", "--ckpt", str(d)])
    assert "not a valid safetensors file" in line


@pytest.mark.parametrize(
    "args, match",
    [
        (["--temperature", "-1"], "temperature"),
        (["--temperature", "nan"], "temperature"),
        (["--top-k", "0"], "top_k"),
        (["--top-p", "0"], "top_p"),
        (["--top-p", "1.5"], "top_p"),
        (["--max-new-tokens", "-5"], "max_new_tokens"),
        (["--prompt", ""], "prompt is empty"),
    ],
)
def test_generate_bad_settings(capsys, ckpt, args, match):
    line = run_error(capsys, ["generate", "--ckpt", str(ckpt), *args])
    assert match in line


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_real_process_prints_no_traceback(tmp_path):
    exe = Path(sys.executable).with_name("qkv")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "qkv"]
    env = {k: v for k, v in os.environ.items() if k != "QKV_DEBUG"}
    proc = subprocess.run(
        cmd + ["train", "--text", "/nonexistent", "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == ["qkv: error: text file /nonexistent does not exist"]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "argv, match",
    [
        (["train", "--until", "abc"], "--until: invalid int value: 'abc'"),
        (["train", "--tokenizer", "xyz"], "--tokenizer: invalid choice: 'xyz'"),
        (["generate", "--ckpt", "x", "--top-k", "1.5"], "--top-k: invalid int value"),
        (
            ["generate", "--ckpt", "x", "--seed", str(2**64)],  # torch said "Overflow when unpacking long long"
            "--seed: must be between 0 and 9223372036854775807 (2**63 - 1); got 18446744073709551616",
        ),
        (["generate", "--ckpt", "x", "--seed=-1"], "--seed: must be between 0 and"),
        (["frob"], "invalid choice: 'frob'"),
        ([], "required: command"),
    ],
)
def test_usage_errors_are_one_line_too(capsys, argv, match):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qkv: error: ") and match in lines[0], err


def test_help_still_works(capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", "--help"])
    assert info.value.code == 0
    assert "--resume" in capsys.readouterr().out


def test_corpus_prints_the_builtin_text_and_probes(capsys):
    out, _ = run_ok(capsys, ["corpus", "-n", "5", "--seed", "2"])
    assert out == corpus.generate(2, 5, "both")
    out, _ = run_ok(capsys, ["corpus", "--probes", "order", "-n", "3", "--lang", "en"])
    probes = corpus.probes("order", "en")[:3]
    assert out.splitlines() == [f"{p.prompt} [{p.expected}]  not: {' / '.join(p.alternatives)}" for p in probes]


def test_info_says_what_a_checkpoint_holds_in_chinese_with_lang_zh(capsys):
    """The lines of `qkv info` that are sentences come from the catalogue: Chinese under --lang zh; the
    configuration's key = value lines are the same in both languages."""
    for ckpt, sentences in ((default_ckpt(), 1), (default_translate_ckpt(), 4)):
        en, _ = run_ok(capsys, ["info", "--ckpt", str(ckpt)])
        zh, _ = run_ok(capsys, ["info", "--ckpt", str(ckpt), "--lang", "zh"])
        en, zh = en.splitlines(), zh.splitlines()
        assert len(en) == len(zh) and en[sentences:] == zh[sentences:]
        assert all(re.search("[\u4e00-\u9fff]", line) for line in zh[:sentences]), zh[:sentences]
        assert all(not re.search("[\u4e00-\u9fff]", line) for line in en[:sentences]), en[:sentences]
