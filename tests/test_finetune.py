"""Fine-tuning (`qkv train --init`, qkv.core.train.init) and the Llama-layout export, against transformers.

A random GPT-2 and a random Llama directory (tiny, built by transformers offline, with the byte-level
BPE tokenizer of llm_dirs.py): the loss of the first step that qkv logs equals transformers' loss on
the batch that LMData draws for step 0; the fine-tuned model exported with export_hf gives
transformers qkv's logits; a fine-tuned run stopped and resumed ends with the weights of one that was
not; and what --init cannot do is refused in one line.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest
import torch
from llm_dirs import TEXT, byte_level_tokenizer, random_model, save_dir

transformers = pytest.importorskip("transformers")

from qkv.apps.cli import main  # noqa: E402
from qkv.core.hub.export import export_hf  # noqa: E402
from qkv.core.io.refusal import Refusal  # noqa: E402
from qkv.core.spec.config import TrainConfig  # noqa: E402
from qkv.core.text.batches import get_batch, split_ids  # noqa: E402
from qkv.core.train.checkpoint import load, load_checkpoint  # noqa: E402
from qkv.core.train.lm import train  # noqa: E402
from qkv.core.train.loop import step_seed  # noqa: E402

ATOL = 1e-5
SHORT = ["steps=3", "eval_interval=3", "eval_steps=2", "block_size=32", "lr=1e-3", "min_lr=1e-4"]


def gpt2_model():
    """A random GPT2LMHeadModel (its config's dropout 0.1 left as transformers has it; the tests --set it to 0)."""
    hc = transformers.GPT2Config(
        vocab_size=320, n_positions=64, n_embd=48, n_layer=2, n_head=4, bos_token_id=None, eos_token_id=None
    )
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(hc).eval()


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    """{"gpt2": directory, "llama": directory, "text": a text file}, each written once."""
    root, tok = tmp_path_factory.mktemp("finetune"), byte_level_tokenizer()
    for name in ("gpt2", "llama"):
        (root / name).mkdir()
    found = {
        "gpt2": save_dir(gpt2_model(), root / "gpt2", tok),
        "llama": save_dir(random_model("llama"), root / "llama", tok),
    }
    (root / "text.txt").write_text(TEXT, encoding="utf-8")
    return {**found, "text": root / "text.txt"}


def hf_of(d):
    model = transformers.AutoModelForCausalLM.from_pretrained(d, attn_implementation="eager")
    return model.float().eval()


def first_batch(tokenizer, tc: TrainConfig):
    """The (x, y) that LMData trains on at step 0 (lm.py: split_ids, then get_batch seeded by step_seed)."""
    ids = torch.tensor(tokenizer.encode(TEXT), dtype=torch.long)
    train_ids, _ = split_ids(ids, tc.val_fraction, tc.block_size)
    g = torch.Generator().manual_seed(step_seed(tc.seed, 0))
    return get_batch(train_ids, tc.batch_size, tc.block_size, g)  # each (B, T)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_first_step_loss_is_transformers_loss(dirs, tmp_path, family):
    out = tmp_path / "run"
    train(
        text_path=dirs["text"],
        out=out,
        init=dirs[family],
        overrides=[*SHORT, "dropout=0"],
        until=1,
        progress=False,
        precision="float32",
    )  # transformers' loss is float32's (auto may pick bf16 autocast on this CPU)
    logged = json.loads((out / "log.jsonl").read_text().splitlines()[0])
    ckpt = load_checkpoint(out)
    assert ckpt.config["init"]["path"] == str(dirs[family].resolve())
    x, y = first_batch(ckpt.tokenizer, ckpt.train_config)
    with torch.no_grad():
        logits = hf_of(dirs[family])(x).logits  # (B, T, d_vocab)
    theirs = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten()).item()
    assert logged["step"] == 1 and abs(logged["loss"] - theirs) < ATOL


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_exported_fine_tune_gives_transformers_its_logits(dirs, tmp_path, family):
    out = tmp_path / "run"
    train(text_path=dirs["text"], out=out, init=dirs[family], overrides=SHORT, progress=False)
    model, tokenizer = load(out)
    before = load(dirs[family])[0]
    assert (model.embed.weight - before.embed.weight).abs().max() > 1e-4  # it did train
    export_hf(model, tokenizer, tmp_path / "hf")
    ids = torch.tensor([tokenizer.encode("the cat sat on the mat. 我昨天吃了苹果。")])
    with torch.no_grad():
        ours, theirs = model(ids), hf_of(tmp_path / "hf")(ids).logits
    assert torch.allclose(ours, theirs, atol=ATOL, rtol=0)


@pytest.mark.slow
def test_resumed_fine_tune_has_the_weights_of_an_uninterrupted_one(dirs, tmp_path):
    settings = ["steps=4", "eval_interval=2", "eval_steps=1", "block_size=16", "lr=1e-3"]
    # (one thread, as conftest.py sets for every test: the same sums in the same order)
    train(text_path=dirs["text"], out=tmp_path / "whole", init=dirs["llama"], overrides=settings, progress=False)
    train(text_path=dirs["text"], out=tmp_path / "cut", init=dirs["llama"], overrides=settings, until=2, progress=False)
    train(out=tmp_path / "cut", resume=True, progress=False)
    whole, cut = load(tmp_path / "whole")[0].state_dict(), load(tmp_path / "cut")[0].state_dict()
    assert all(torch.allclose(whole[k], cut[k], atol=1e-6, rtol=0) for k in whole)
    config = json.loads((tmp_path / "cut" / "config.json").read_text())
    assert config["init"]["kind"] == "pretrained" and config["train"]["block_size"] == 16  # kept by the resume


def refused(argv: list[str]) -> str:
    """What `qkv argv` says on stderr; it must end non-zero with one line."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    lines = err.getvalue().strip().splitlines()
    assert code not in (0, None) and len(lines) == 1, err.getvalue()
    return lines[0]


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    d = tmp_path_factory.mktemp("bert")
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator([TEXT], trainers.WordPieceTrainer(vocab_size=80, special_tokens=["[UNK]", "[CLS]"]))
    tok.save(str(d / "tokenizer.json"))
    hc = transformers.BertConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=40,
    )  # fmt: skip
    transformers.BertModel(hc).save_pretrained(d)
    return d


def test_refusals_are_one_line(dirs, bert_dir, tmp_path):
    base = ["train", "--text", str(dirs["text"]), "--out", str(tmp_path / "run"), "--quiet", "--lang", "en"]
    assert "does not continue text" in refused([*base, "--init", str(bert_dir)])
    assert "no such file or directory" in refused([*base, "--init", str(tmp_path / "nothing")])
    assert "--tokenizer" in refused([*base, "--init", str(dirs["llama"]), "--tokenizer", "bpe"])
    assert "d_model" in refused([*base, "--init", str(dirs["llama"]), "--set", "d_model=32"])
    assert "n_ctx=128" in refused([*base, "--init", str(dirs["llama"]), "--set", "block_size=129"])
    assert "--init" in refused([*base, "--preset", "finetune"])
    assert "--init" in refused([*base, "--task", "translate", "--init", str(dirs["llama"])])
    assert not (tmp_path / "run" / "state.json").exists()
    zh = refused([*base[:-1], "zh", "--init", str(tmp_path / "nothing")])
    assert "没有这个文件或目录" in zh


def test_resume_refuses_init(dirs, tmp_path):
    with pytest.raises(Refusal):
        train(text_path=dirs["text"], out=tmp_path / "run", resume=True, init=dirs["llama"], progress=False)


@pytest.mark.slow
def test_cli_fine_tunes_and_generates(dirs, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["train", "--init", str(dirs["llama"]), "--text", str(dirs["text"]), "--out", str(out), "--quiet"]
    assert main([*argv, "--set", "steps=2", "--set", "eval_interval=2", "--set", "eval_steps=1"]) in (0, None)
    config = json.loads((out / "config.json").read_text())
    assert config["train"]["lr"] == 3e-5 and config["train"]["block_size"] == 128  # the preset finetune
    assert config["model"]["norm"] == "rms" and config["model"]["n_ctx"] == 128  # the init's model, unchanged
    stops = load(dirs["llama"])[0].stop_ids
    assert stops and load(out)[0].stop_ids == stops  # its generation still ends at the init's end of text
    capsys.readouterr()
    assert main(["generate", "--ckpt", str(out), "--prompt", "the cat", "--max-new-tokens", "4", "--seed", "0"]) in (
        0,
        None,
    )
    assert capsys.readouterr().out.strip()
    assert main(["explain", "the cat", "--ckpt", str(out)]) in (0, None)
    assert main(["export", "--ckpt", str(out), "--hf", str(tmp_path / "hf")]) in (0, None)
    assert (tmp_path / "hf" / "model.safetensors").exists()


@pytest.mark.slow
@pytest.mark.subprocess
def test_two_processes_fine_tune_what_one_does(dirs, tmp_path):
    settings = [f"--set={s}" for s in ("steps=4", "eval_interval=4", "eval_steps=1", "block_size=32", "lr=1e-3")]
    train(
        text_path=dirs["text"],
        out=tmp_path / "one",
        init=dirs["llama"],
        overrides=[s[6:] for s in settings],
        progress=False,
        precision="float32",  # one float type on both sides (auto may pick bf16 autocast on this CPU)
    )
    argv = ["train", "--nproc", "2", "--init", str(dirs["llama"]), "--text", str(dirs["text"]), "--quiet"]
    argv += ["--precision", "float32"]
    run = subprocess.run(
        [sys.executable, "-m", "qkv", *argv, "--out", str(tmp_path / "two"), *settings],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "QKV_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr
    one, two = load(tmp_path / "one")[0].state_dict(), load(tmp_path / "two")[0].state_dict()
    assert all(torch.allclose(one[k], two[k], atol=1e-6, rtol=0) for k in one)
    assert json.loads((tmp_path / "two" / "config.json").read_text())["init"]["kind"] == "pretrained"


def test_a_run_as_init_takes_the_preset_window_at_most_its_context_and_refuses_other_token_data(capsys, tmp_path):
    """The finetune preset's block_size (128) is cut to a qkv run's n_ctx (64) unless --set gives one;
    token data written with another tokenizer than the init's is refused (its ids would mean other tokens)."""
    from cli_util import run_error, run_ok

    text = tmp_path / "a.txt"
    text.write_text("the cat sat on the mat, and the dog ate the hat.\n" * 80, encoding="utf-8")
    short = ["--set", "steps=2", "--set", "eval_interval=2", "--set", "eval_steps=1", "--quiet"]
    run_ok(capsys, ["train", "--text", str(text), "--out", str(tmp_path / "run"), *short])
    run_ok(
        capsys, ["train", "--init", str(tmp_path / "run"), "--text", str(text), "--out", str(tmp_path / "ft"), *short]
    )
    assert load_checkpoint(tmp_path / "ft").train_config.block_size == 64  # the run's n_ctx, not the preset's 128
    too_long = ["--set", "block_size=65"]
    line = run_error(capsys, ["train", "--init", str(tmp_path / "run"), "--text", str(text), *short, *too_long])
    assert "block_size=65 is longer than the model's context (n_ctx=64)" in line
    run_ok(
        capsys, ["tokenize", "--text", str(text), "--tokenizer", "word", "--out", str(tmp_path / "words"), "--quiet"]
    )
    run_ok(
        capsys,
        [
            "tokenize",
            "--text",
            str(text),
            "--tokenizer",
            str(tmp_path / "run"),
            "--out",
            str(tmp_path / "own"),
            "--quiet",
        ],
    )
    init = ["train", "--init", str(tmp_path / "run"), *short]
    line = run_error(capsys, [*init, "--data", str(tmp_path / "words"), "--out", str(tmp_path / "ft2")])
    assert "the token data was written with another tokenizer" in line and not (tmp_path / "ft2").exists()
    run_ok(capsys, [*init, "--data", str(tmp_path / "own"), "--out", str(tmp_path / "ft3")])  # the run's own tokenizer
