"""Hostile tokenizer.json files (issue 32, causes A, B, C) and three wordings.

Each file is a small valid byte-level BPE tokenizer.json (test_pretrained_dirs' GPT-2 directory) with one
part edited, beside the same tiny random GPT-2. What the round found, and what qkv does now:

    A  tokenizers panics on an encode (pyo3's PanicException, a BaseException that passed every handler):
       a nested Split regex, an empty Replace pattern, a huge Prepend are refused when the file is read;
       a truncation stride >= max_length is switched off; a panic qkv cannot foresee ((a|a)+$) becomes
       a one-line refusal; and the CLI's and server's last resorts answer any panic in one line / JSON
    B  a 5 KB file multiplies every encode: padding is switched off, chained growing Replaces refused
    C  ids beyond the vocabulary: a post-processor's special token is refused when read, and every
       encode's ids are checked

Each test fails on the code before the fix (a traceback, a PanicException, an IndexError, a million ids).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
from cli_util import run_error, run_ok
from test_pretrained_dirs import gpt2_dir  # noqa: F401

from qkv.core.hub.pretrained import load_pretrained

os.environ.setdefault("HF_HUB_OFFLINE", "1")
fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from qkv.apps.web.server import create_app  # noqa: E402

BACKTRACK = "a" * 40 + "b"  # what a backtracking regex chokes on


def _split(regex: str):
    def edit(spec):
        split = {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}
        spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [split, spec["pre_tokenizer"]]}

    return edit


def _normalizer(*steps):
    def edit(spec):
        spec["normalizer"] = {"type": "Sequence", "normalizers": list(steps)}

    return edit


def _replace(pattern: dict, content: str) -> dict:
    return {"type": "Replace", "pattern": pattern, "content": content}


def _special_beyond(spec):
    template = [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]
    spec["post_processor"] = {
        "type": "TemplateProcessing",
        "single": template,
        "pair": template + [{"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [99_999], "tokens": ["<s>"]}},
    }


def _padding(length: int, pad_id: int = 0):
    def edit(spec):
        strategy = {"Fixed": length}
        spec["padding"] = {
            "strategy": strategy,
            "direction": "Right",
            "pad_to_multiple_of": None,
            "pad_id": pad_id,
            "pad_type_id": 0,
            "pad_token": "<pad>",
        }

    return edit


def _truncation(spec):
    spec["truncation"] = {"direction": "Right", "max_length": 4, "strategy": "LongestFirst", "stride": 4}


# name -> (edit, what the one line must say)
REFUSED = {
    "nested Split regex": (_split("(a+)+$"), "(a+)+$"),
    "empty Replace pattern": (_normalizer(_replace({"String": ""}, "x")), "empty"),
    "Replace regex matching empty": (_normalizer(_replace({"Regex": "a*"}, "x")), "a*"),
    "huge Prepend": (_normalizer({"type": "Prepend", "prepend": "x" * 100_000}), "100,000"),
    "22 chained Replace a->aa": (_normalizer(*[_replace({"String": "a"}, "aa")] * 22), "Replace x2"),
    "special token beyond the vocabulary": (_special_beyond, "99999"),
    "groups nested 400 deep": (_split("(" * 400 + "a" + ")" * 400), "too deep"),
}


def hostile(src, dst, edit):
    """A copy of the directory `src` whose tokenizer.json is edited by edit(spec)."""
    shutil.copytree(src, dst)
    spec = json.loads((dst / "tokenizer.json").read_text(encoding="utf-8"))
    edit(spec)
    (dst / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    return dst


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_hostile_tokenizer_is_refused_when_read_in_one_line(gpt2_dir, tmp_path, capsys, name):  # noqa: F811
    edit, needle = REFUSED[name]
    d = hostile(gpt2_dir[0], tmp_path / "m", edit)
    with pytest.raises(ValueError) as caught:
        load_pretrained(d)
    assert needle in str(caught.value) and "tokenizer.json" in str(caught.value)
    assert len(str(caught.value).splitlines()) == 1
    line = run_error(capsys, ["explain", "hello " + BACKTRACK, "--ckpt", str(d)])
    assert needle in line, line


def run_error_zh(capsys, argv) -> str:
    """run_error for a command said in Chinese (its one line starts "qkv: 错误：")."""
    from qkv.apps.cli import main

    rc = main([*argv, "--lang", "zh"])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc != 0 and "Traceback" not in err + out and len(lines) == 1, err
    assert lines[0].startswith("qkv: 错误："), lines[0]
    return lines[0]


def test_the_refusal_is_said_in_chinese(gpt2_dir, tmp_path, capsys):  # noqa: F811
    d = hostile(gpt2_dir[0], tmp_path / "m", _normalizer(*[_replace({"String": "a"}, "aa")] * 22))
    line = run_error_zh(capsys, ["explain", "hello", "--ckpt", str(d)])
    assert "规范化步骤" in line and "倍" in line, line


@pytest.mark.parametrize("edit", [_padding(1_000_000), _padding(16, pad_id=1_000_000), _truncation])
def test_padding_and_truncation_are_switched_off(gpt2_dir, tmp_path, capsys, edit):  # noqa: F811
    """A pad to a million ids, a pad id beyond the vocabulary, a stride that panics: none is run."""
    d = hostile(gpt2_dir[0], tmp_path / "m", edit)
    _, tokenizer = load_pretrained(d)
    ids = tokenizer.encode("hello world, the cat sat on the mat")
    assert 0 < len(ids) < 20 and max(ids) < tokenizer.vocab_size
    out, _ = run_ok(capsys, ["explain", "hello world, the cat sat", "--ckpt", str(d)])
    assert out


def _panicking_dir(gpt2_dir, tmp_path):  # noqa: F811
    """A regex qkv's check does not see ((a|a)+$ is not a repeated repetition) but Oniguruma gives up on."""
    return hostile(gpt2_dir[0], tmp_path / "m", _split("(a|a)+$"))


def test_a_panic_while_encoding_is_one_line(gpt2_dir, tmp_path, capsys):  # noqa: F811
    d = _panicking_dir(gpt2_dir, tmp_path)
    _, tokenizer = load_pretrained(d)  # the check at load lets it through
    with pytest.raises(ValueError, match="tokenizers library stopped"):
        tokenizer.encode(BACKTRACK)
    line = run_error(capsys, ["explain", BACKTRACK, "--ckpt", str(d)])
    assert "tokenizers library stopped" in line, line
    line = run_error_zh(capsys, ["explain", BACKTRACK, "--ckpt", str(d)])
    assert "tokenizers 库中止了" in line, line


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_panic_leaves_one_line_on_the_terminal(gpt2_dir, tmp_path):  # noqa: F811
    """Rust's own panic message (and backtrace) goes to descriptor 2, past Python: kept off it too."""
    d = _panicking_dir(gpt2_dir, tmp_path)
    env = {**os.environ, "RUST_BACKTRACE": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-m", "qkv", "explain", BACKTRACK, "--ckpt", str(d)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode != 0 and not done.stdout
    assert done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr
    assert done.stderr.startswith("qkv: error: the tokenizer failed on this text"), done.stderr


def test_the_server_answers_a_panic_while_encoding_in_json(gpt2_dir, tmp_path):  # noqa: F811
    model, tokenizer = load_pretrained(_panicking_dir(gpt2_dir, tmp_path))
    client = TestClient(create_app(model, tokenizer, "hostile"), base_url="http://127.0.0.1")
    r = client.post("/api/view", json={"text": BACKTRACK})
    assert r.status_code == 400 and r.headers["content-type"].startswith("application/json")
    assert "tokenizers library stopped" in r.json()["error"]


def a_panic() -> BaseException:
    """A real pyo3_runtime.PanicException, from tokenizers itself (an empty Replace pattern before ByteLevel)."""
    from tokenizers import normalizers

    try:
        _bare(normalizer=normalizers.Replace("", "x")).encode("ab")
    except BaseException as e:
        assert type(e).__name__ == "PanicException" and not isinstance(e, Exception)
        return e
    raise AssertionError("tokenizers no longer panics on an empty Replace pattern")


def _raise_panic(*args, **kw):
    raise a_panic()


def test_the_cli_says_any_panic_in_one_line(gpt2_dir, capsys, monkeypatch):  # noqa: F811
    """The last resort: a panic from anywhere (here the tokenizer, bypassing its guard) is one line, not a traceback."""
    from qkv.core.text.tokenizers.base import HFBacked

    monkeypatch.setattr(HFBacked, "encode", _raise_panic)
    line = run_error(capsys, ["explain", "hello", "--ckpt", str(gpt2_dir[0])])
    assert "panic" in line and "index out of bounds" in line, line


def test_the_server_answers_any_panic_in_json(gpt2_dir, monkeypatch):  # noqa: F811
    model, tokenizer = load_pretrained(gpt2_dir[0])
    client = TestClient(create_app(model, tokenizer, "hostile"), base_url="http://127.0.0.1")
    monkeypatch.setattr(tokenizer, "encode", _raise_panic)  # after the app's own encodes at start-up
    r = client.post("/api/view", json={"text": "hello"})
    assert r.status_code == 500 and r.headers["content-type"].startswith("application/json")
    assert r.json()["status"] == 500 and "panic" in r.json()["error"]
    assert client.get("/api/model").status_code == 200  # the server goes on


def _bare(**parts):
    """A `tokenizers` object (byte-level BPE on a few words) with `parts` set, not checked by qkv."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=270, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(["the cat sat on the mat"] * 10, trainer=trainer)
    for key, value in parts.items():
        setattr(tok, key, value)
    return tok


def test_every_id_an_encode_gives_is_checked_against_the_vocabulary():
    from tokenizers.processors import TemplateProcessing

    from qkv.core.text.tokenizers.safety import Bound, encode

    post = TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 99_999)])
    hf = _bare(post_processor=post)
    with pytest.raises(ValueError, match=r"the id 99999 \(token \?\), beyond its vocabulary of \d+ tokens"):
        encode(hf, "the cat", Bound())


def test_an_encode_longer_than_its_bound_is_refused():
    from tokenizers import normalizers

    from qkv.core.text.tokenizers.safety import MAX_GROWTH, Bound, encode

    hf = _bare(normalizer=normalizers.Replace("q", "q" * 40))  # not settled: 40 times longer, bound says 1
    assert len(encode(hf, "qq", Bound(growth=MAX_GROWTH))) == 80
    with pytest.raises(ValueError, match="multiplies the text"):
        encode(hf, "qq", Bound())


# ------------------------------------------------------------------ wordings


def test_a_dangling_weights_link_is_called_a_broken_link(gpt2_dir, tmp_path):  # noqa: F811
    d = tmp_path / "m"
    shutil.copytree(gpt2_dir[0], d)
    (d / "model.safetensors").unlink()
    (d / "model.safetensors").symlink_to(tmp_path / "gone.safetensors")
    with pytest.raises(ValueError, match="model.safetensors is a broken link: it points to .*gone.safetensors"):
        load_pretrained(d)


def test_float_ids_are_refused_by_their_dtype(gpt2_dir):  # noqa: F811
    import qkv

    model, _ = load_pretrained(gpt2_dir[0])
    with pytest.raises(ValueError, match="whole numbers; got a tensor of dtype float32"):
        qkv.logit_lens(model, torch.tensor([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="dtype bool"):
        qkv.logit_lens(model, torch.tensor([True, False]))


def test_what_descriptor_2_gets_during_a_quiet_call_is_kept_unless_it_panicked(capfd):
    from qkv.core.text.tokenizers.rust_stderr import quiet

    with quiet():
        os.write(2, b"kept\n")
    with pytest.raises(BaseException) as caught, quiet():
        os.write(2, b"thread '<unnamed>' panicked\n")
        raise a_panic()
    assert type(caught.value).__name__ == "PanicException"
    assert capfd.readouterr().err.splitlines() == ["kept"]  # the panic's own lines (tokenizers' hook too) are gone


def test_the_growth_of_a_precompiled_map_is_its_longest_replacement():
    import base64

    from qkv.core.text.tokenizers.safety import _factor

    trie = b"\x01\x02\x03\x04"
    blob = len(trie).to_bytes(4, "little") + trie + "ab\0ａｂｃｄｅｆ\0".encode()
    assert _factor({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode()}) == 6
    assert _factor({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}) == 1  # T5's: shrinks
    assert _factor({"type": "Prepend", "prepend": "▁"}) == 2  # Llama 2's: one ▁ a piece
    with pytest.raises(ValueError, match="Frobnicate"):
        _factor({"type": "Frobnicate"})
