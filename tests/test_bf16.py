"""--dtype bfloat16 for a qkv run: its weights are cast (qkv.load, and every command that reads a model),
its logits are as close to float32's as Hugging Face's own bfloat16 GPT-2 on the same weights, generate
and explain run in it (explain says so), a CPU without native bfloat16 is told it will be slower, and
float32 stays the default. Every check holds on any x86 CPU, with or without AMX or AVX-512 BF16."""

from __future__ import annotations

import pytest
import torch
from cli_util import run_ok

from qkv.analysis.schema import validate
from qkv.core.decode.sample import generate_ids
from qkv.core.hub.pretrained import loading_dtype
from qkv.core.machine import cpu
from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig
from qkv.core.text.tokenizers import train_tokenizer
from qkv.core.train.checkpoint import load, save

TEXT = "the cat sat on the mat, and the dog sat on the log.\n"
PROMPT = "the cat"
NOTE = {"en": "no native bfloat16", "zh": "没有原生 bfloat16"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny qkv run, GPT-2-shaped (tied embeddings, no unembedding bias, tanh GELU), random weights
    large enough (std 0.3) that its logits are far apart."""
    tokenizer = train_tokenizer("char", TEXT)
    cfg = ModelConfig(
        d_vocab=tokenizer.vocab_size,
        n_ctx=32,
        d_model=64,
        n_heads=4,
        n_layers=2,
        tie_embeddings=True,
        unembed_bias=False,
        activation="gelu_tanh",
        init_std=0.3,
    )
    torch.manual_seed(0)
    d = tmp_path_factory.mktemp("bf16") / "run"
    save(d, GPT(cfg).eval(), tokenizer)
    return d


def test_a_run_loads_in_bfloat16_when_asked(run):
    model, _ = load(run, dtype="bfloat16")
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    assert model(torch.tensor([[1, 2, 3]])).dtype == torch.bfloat16
    with loading_dtype("bfloat16"):  # the CLI's --dtype
        assert next(load(run)[0].parameters()).dtype == torch.bfloat16
    # float32 stays the default, exact
    assert {p.dtype for p in load(run)[0].parameters()} == {torch.float32}


@pytest.mark.slow
def test_bfloat16_logits_are_as_close_to_float32_as_hugging_faces(run):
    """Both run in bfloat16 in their own orders: qkv's distance from the float32 logits is of the size of
    transformers' (GPT2LMHeadModel on the same weights, cast to bfloat16), and both are nonzero."""
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    from qkv.core.hub.adapters.gpt2 import to_hf

    exact, tokenizer = load(run)
    theirs = to_hf(exact).to(torch.bfloat16).eval()
    ours, _ = load(run, dtype="bfloat16")
    x = torch.tensor([tokenizer.encode(TEXT[:30])])
    with torch.no_grad():
        ref = exact(x).double()
        mine = (ours(x).double() - ref).abs().max().item()
        hers = (theirs(x).logits.double() - ref).abs().max().item()
    assert 0 < mine <= 2 * hers + 1e-3 * ref.abs().max().item(), (mine, hers)
    assert hers > 0  # transformers too computed in bfloat16


def test_generate_in_bfloat16(run, capsys, monkeypatch):
    monkeypatch.setattr(cpu, "bf16_support", lambda flags=None: "avx512")
    argv = ["generate", "--ckpt", str(run), "--prompt", PROMPT, "--max-new-tokens", "6", "--temperature", "0"]
    argv += ["--device", "cpu"]
    out, err = run_ok(capsys, [*argv, "--dtype", "bfloat16"])
    model, tokenizer = load(run, dtype="bfloat16")
    ids = tokenizer.encode(PROMPT)
    new = list(generate_ids(model, ids, 6, temperature=0))
    assert out == PROMPT + tokenizer.decode(new, prev=ids[-1]) + "\n"
    assert NOTE["en"] not in err  # the CPU has native bfloat16 here
    default, err = run_ok(capsys, argv)  # without --dtype: float32, as before
    exact, _ = load(run)
    assert default == PROMPT + tokenizer.decode(list(generate_ids(exact, ids, 6, temperature=0)), prev=ids[-1]) + "\n"
    assert NOTE["en"] not in err


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_cpu_without_native_bfloat16_is_told(run, capsys, monkeypatch, lang):
    monkeypatch.setattr(cpu, "bf16_support", lambda flags=None: "none")
    argv = ["generate", "--ckpt", str(run), "--prompt", PROMPT, "--max-new-tokens", "2", "--device", "cpu"]
    _, err = run_ok(capsys, [*argv, "--dtype", "bfloat16", "--lang", lang])
    assert err.count(NOTE[lang]) == 1 and len(err.strip().splitlines()) == 1, err  # one line, not a refusal
    _, err = run_ok(capsys, [*argv, "--lang", lang])
    assert NOTE[lang] not in err  # float32: nothing to say
    _, err = run_ok(capsys, ["explain", "the cat", "--ckpt", str(run), "--dtype", "bfloat16", "--lang", lang])
    assert NOTE[lang] in err


def test_explain_says_its_dtype(run, capsys):
    import json

    argv = ["explain", "the cat", "--ckpt", str(run), "--layer", "0", "--head", "1"]
    out, _ = run_ok(capsys, [*argv, "--dtype", "bfloat16"])
    assert "Computed in bfloat16" in out.split("\n\n")[1]  # the paragraph after the title
    out, _ = run_ok(capsys, [*argv, "--dtype", "bfloat16", "--lang", "zh"])
    assert "以 bfloat16 计算" in out
    out, _ = run_ok(capsys, [*argv, "--dtype", "bfloat16", "--format", "json"])
    doc = json.loads(out)
    assert doc["model"]["dtype"] == "bfloat16"
    validate(doc)  # the schema knows the field
    with pytest.raises(pytest.importorskip("jsonschema").ValidationError):
        validate({**doc, "model": {**doc["model"], "dtype": "bf16"}})
    out, _ = run_ok(capsys, argv)
    assert "Computed in" not in out
    out, _ = run_ok(capsys, [*argv, "--format", "json"])
    assert json.loads(out)["model"]["dtype"] == "float32"


def test_a_translation_explained_in_bfloat16_says_so_under_its_title(monkeypatch):
    from qkv.presentation import explanation

    monkeypatch.setattr(explanation, "translation_blocks", lambda d, lang: [("title", "T"), ("p", "rest")])
    doc = {"kind": "translation", "model": {"dtype": "bfloat16"}}
    blocks = explanation._blocks(doc, "en")
    assert blocks[0] == ("title", "T") and blocks[2] == ("p", "rest")
    assert blocks[1][1].startswith("Computed in bfloat16")
    assert len(explanation._blocks({**doc, "model": {"dtype": "float32"}}, "zh")) == 2
