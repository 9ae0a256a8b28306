"""What qkv offers by default is checked against the model it is offered for: the explorer's default
comparison on a cased GPT-2 tokenizer, `qkv export --hf .` into the empty current directory, and a
file saved with a byte-order mark read line by line."""

from __future__ import annotations

import os

import pytest
import torch
from checkpoint_util import tiny_model
from cli_util import run_error, run_ok
from fastapi.testclient import TestClient

from qkv.analysis.word_similarity import comparable
from qkv.apps.web.model_doc import PRETRAINED_COMPARISONS, model_doc
from qkv.apps.web.server import create_app
from qkv.core.train.checkpoint import load, save

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CASED = "I ate an apple. Apple sells phones. I sat on the river bank and put money in the bank.\n" * 20


@pytest.fixture(scope="module")
def cased_gpt2(tmp_path_factory):
    """A GPT-2 directory whose byte-level BPE keeps case, as GPT-2's own does: "Apple" is not "apple"."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel

    d = tmp_path_factory.mktemp("cased")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    tok.train_from_iterator(
        [CASED], trainers.BpeTrainer(vocab_size=320, initial_alphabet=alphabet, show_progress=False)
    )
    tok.save(str(d / "tokenizer.json"))
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=32, n_embd=32, n_layer=2, n_head=4)
    GPT2LMHeadModel(cfg).save_pretrained(d, safe_serialization=True)
    return d


def test_the_default_comparison_is_one_the_model_accepts(cased_gpt2):
    model, tok = load(cased_gpt2)
    a, b, word = PRETRAINED_COMPARISONS[0]
    assert not comparable(tok, a, b, word, model.cfg.n_ctx)  # the apple pair needs an uncased tokenizer
    pair = model_doc(model, tok, "gpt2")["compare"]
    assert pair is not None and pair["word"] == "bank"
    client = TestClient(create_app(model, tok, "gpt2"), base_url="http://127.0.0.1")
    offered = client.get("/api/model").json()["compare"]
    assert offered == pair
    r = client.post("/api/compare", json=offered)
    assert r.status_code == 200, r.text


def test_explain_html_of_a_cased_gpt2(cased_gpt2, tmp_path, capsys):
    out, _ = run_ok(capsys, ["explain", "the cat", "--ckpt", str(cased_gpt2), "--html", str(tmp_path / "p.html")])
    assert "wrote" in out and (tmp_path / "p.html").stat().st_size > 10_000


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny") / "ckpt"
    save(d, *tiny_model())
    return d


@pytest.mark.parametrize("target", [".", ""])
def test_export_into_the_empty_current_directory(target, tiny_ckpt, tmp_path, monkeypatch, capsys):
    here = tmp_path / "empty"
    here.mkdir()
    monkeypatch.chdir(here)
    inode = here.stat().st_ino
    run_ok(capsys, ["export", "--ckpt", str(tiny_ckpt), "--hf", target])
    assert (here / "config.json").is_file() and (here / "model.safetensors").is_file()
    assert here.stat().st_ino == inode  # the shell's current directory is still the directory it was
    hidden = [p.name for d in (tmp_path, here) for p in d.iterdir() if p.name.startswith(".")]
    assert not hidden  # no temporary directory left, beside it or inside it
    model, _ = load(here)
    assert model.loaded_from["architecture"] == "gpt2"


def test_export_into_the_current_directory_that_is_not_empty(tiny_ckpt, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    line = run_error(capsys, ["export", "--ckpt", str(tiny_ckpt), "--hf", "."])
    assert "not empty" in line
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_translate_stdin_skips_a_byte_order_mark(monkeypatch, capsys, tmp_path):
    import io
    import sys

    from qkv.apps.cli import main

    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO("\ufeff我 吃了 苹果\n我 吃了 苹果\n".encode()), "utf-8")
    )
    assert main(["translate", "-"]) == 0, capsys.readouterr().err
    first, second = capsys.readouterr().out.splitlines()
    assert first == second and first
