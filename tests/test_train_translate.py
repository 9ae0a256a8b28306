"""Tests for qkv.core.train.translate: an encoder-decoder trains on sentence pairs with train.py's loop:
checkpoints that load as a Seq2Seq, an exact resume, a clean stop on NaN, both directions, TSV files."""

from __future__ import annotations

import math

import pytest
import torch
from cli_util import eval_lines, step_losses

from qkv.core.decode.translate import collate, make_examples
from qkv.core.model.seq2seq import Seq2Seq, seq2seq_loss
from qkv.core.text.corpus import pairs
from qkv.core.train import checkpoint
from qkv.core.train import translate as tt
from qkv.core.train.lm import TrainingStopped, train
from qkv.core.train.translate import direction_of, train_translation

# a tiny encoder-decoder and few steps: each run takes well under a second
TINY = [
    "n_layers=1",
    "n_encoder_layers=1",
    "d_model=32",
    "n_heads=2",
    "d_mlp=64",
    "steps=20",
    "batch_size=8",
    "eval_interval=10",
    "eval_steps=2",
]
N = 200  # training pairs from the built-in corpus


def run(out, **kw):
    """A tiny run (or a resume, with its own settings) into `out`."""
    if not kw.get("resume"):
        kw.setdefault("n_sentences", None if kw.get("pairs_path") else N)
        kw.setdefault("overrides", TINY)
    return train_translation(out=out, progress=False, **kw)


def assert_same_weights(a, b) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for name in sa:
        assert torch.equal(sa[name], sb[name]), name


@pytest.fixture
def tsv(tmp_path):
    """200 corpus pairs as a TSV file (zh TAB en)."""
    path = tmp_path / "pairs.tsv"
    path.write_text(
        "".join(f"{p.text('zh')}\t{p.text('en')}\n" for p in pairs("train", n_sentences=200)), encoding="utf-8"
    )
    return path


def test_training_writes_a_loadable_seq2seq(tmp_path):
    out = tmp_path / "run"
    result = run(out, overrides=TINY + ["steps=40", "lr=1e-2", "warmup_steps=5"])
    ckpt = checkpoint.load_checkpoint(out)
    assert isinstance(ckpt.model, Seq2Seq) and ckpt.model.cfg.arch == "seq2seq"
    assert ckpt.model.cfg.share_embeddings and ckpt.model.cfg.tie_embeddings  # the preset's, not overridden
    assert ckpt.tokenizer.tokens[:3] == ["<pad>", "<s>", "</s>"]
    assert ckpt.config["task"] == {"kind": "translate", "source": "zh", "target": "en"}
    assert direction_of(ckpt.config) == ("zh", "en")
    data = ckpt.config["data"]
    assert data["kind"] == "builtin" and data["n_sentences"] == N and data["pairs"] == N
    assert data["val_pairs"] > 200  # the held-out frames whose words the N training pairs use
    assert data["val_pairs"] + data["val_left_out"] == len(pairs("heldout"))
    assert result.step == 40 and ckpt.state["step"] == 40
    # the first loss is that of a near-uniform guess; 40 steps bring both losses well below it
    vocab = ckpt.tokenizer.vocab_size
    assert abs(step_losses(out)[0][1] - math.log(vocab)) < 0.3
    assert result.train_loss < math.log(vocab) - 1.5 and result.val_loss < math.log(vocab) - 1.5
    assert [d["step"] for d in eval_lines(out)] == [10, 20, 30, 40]


def test_val_loss_is_the_mean_over_heldout_target_tokens(tmp_path):
    """The val loss is what seq2seq_loss gives on the held-out pairs, padding not counted."""
    out = tmp_path / "run"
    result = run(out, overrides=TINY + ["steps=10", "eval_steps=50"])
    model, tok = checkpoint.load(out)
    known = [(p.zh, p.en) for p in pairs("heldout") if all(w in tok.ids for w in p.zh + p.en)]
    src, src_mask, tgt_in, tgt_out = collate(make_examples(tok, known, model.cfg.n_ctx))
    with torch.no_grad():
        expected = seq2seq_loss(model(src, tgt_in, src_mask), tgt_out).item()
    assert result.val_loss == pytest.approx(expected, rel=1e-4)
    assert checkpoint.read_config(out)["data"]["val_pairs"] == len(known)


@pytest.mark.parametrize("extra, until", [([], 10), (["dropout=0.2"], 15)])
def test_resume_is_exact(tmp_path, extra, until):
    a, b = tmp_path / "a", tmp_path / "b"
    run(a, overrides=TINY + extra)
    assert run(b, overrides=TINY + extra, until=until).step == until
    assert run(b, resume=True).step == 20
    # exact: each step's pairs and dropout masks come from generators seeded by (seed, step)
    assert step_losses(a) == step_losses(b)
    assert [d for d in eval_lines(b) if d["step"] != until or until % 10 == 0] == eval_lines(a)
    assert_same_weights(checkpoint.load(a)[0], checkpoint.load(b)[0])


def test_dropout_and_seed_change_the_losses(tmp_path):
    """Guard for the test above: the runs it compares could differ."""
    run(tmp_path / "a", overrides=TINY + ["steps=5"])
    run(tmp_path / "b", overrides=TINY + ["steps=5", "dropout=0.2"])
    run(tmp_path / "c", overrides=TINY + ["steps=5", "seed=7"])
    assert step_losses(tmp_path / "a") != step_losses(tmp_path / "b")
    assert step_losses(tmp_path / "a") != step_losses(tmp_path / "c")


def test_resume_refuses_other_data_direction_or_task(tmp_path):
    out = tmp_path / "run"
    run(out, until=10)
    with pytest.raises(ValueError, match="translates zh-en; it cannot be resumed as en-zh"):
        run(out, resume=True, direction="en-zh")
    with pytest.raises(ValueError, match="--n-sentences cannot be combined"):
        run(out, resume=True, n_sentences=300)
    with pytest.raises(ValueError, match="model settings cannot change"):
        run(out, resume=True, overrides=["d_model=64"])
    with pytest.raises(
        ValueError, match=r"holds a translation model \(encoder-decoder\); resume it with qkv train --task translate"
    ):
        train(out=out, resume=True, progress=False)
    gpt = tmp_path / "gpt"
    train(
        "a b c d e f g h\n" * 20,
        out=gpt,
        overrides=["n_layers=1", "d_model=16", "n_ctx=8", "steps=2", "batch_size=2", "eval_interval=2", "eval_steps=1"],
        progress=False,
    )
    with pytest.raises(ValueError, match="holds a GPT; resume it with qkv train without --task translate"):
        run(gpt, resume=True)
    assert checkpoint.load_checkpoint(out).state["step"] == 10  # nothing above touched it


def _nan_after(monkeypatch, n_good: int) -> None:
    """Make the training loss NaN from training step n_good + 1 on (the evaluation does not use seq2seq_loss)."""
    real, calls = tt.seq2seq_loss, {"n": 0}

    def loss(logits, targets, pad_id=0):
        calls["n"] += 1
        value = real(logits, targets, pad_id)
        return value * float("nan") if calls["n"] > n_good else value

    monkeypatch.setattr(tt, "seq2seq_loss", loss)


@pytest.mark.slow
def test_nan_loss_stops_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch):
    good, out = tmp_path / "good", tmp_path / "run"
    run(good, until=10)
    _nan_after(monkeypatch, 15)
    with pytest.raises(TrainingStopped) as info:
        run(out)
    assert "step 16" in str(info.value) and "nan" in str(info.value) and "step 10" in str(info.value)
    assert checkpoint.load_checkpoint(out).state["step"] == 10
    assert_same_weights(checkpoint.load(out)[0], checkpoint.load(good)[0])
    assert max(s for s, _ in step_losses(out)) == 15  # the NaN step was not logged
    monkeypatch.undo()
    run(out, resume=True)
    run(good, resume=True)
    assert step_losses(out) == step_losses(good)


def test_ctrl_c_keeps_the_steps_done(tmp_path, monkeypatch):
    out = tmp_path / "run"
    real, calls = tt.seq2seq_loss, {"n": 0}

    def loss(logits, targets, pad_id=0):
        calls["n"] += 1
        if calls["n"] == 13:
            raise KeyboardInterrupt
        return real(logits, targets, pad_id)

    monkeypatch.setattr(tt, "seq2seq_loss", loss)
    with pytest.raises(KeyboardInterrupt):
        run(out)
    assert checkpoint.load_checkpoint(out).state["step"] == 12  # saved on the way out, between evaluations


def _heldout_loss(model, tok, source: str, target: str) -> float:
    known = [(p.side(source), p.side(target)) for p in pairs("heldout") if all(w in tok.ids for w in p.zh + p.en)]
    src, src_mask, tgt_in, tgt_out = collate(make_examples(tok, known, model.cfg.n_ctx))
    with torch.no_grad():
        return seq2seq_loss(model(src, tgt_in, src_mask), tgt_out).item()


def test_en_zh_learns_the_other_direction(tmp_path):
    out = tmp_path / "run"
    run(out, direction="en-zh", overrides=TINY + ["steps=40", "lr=1e-2", "warmup_steps=5"])
    ckpt = checkpoint.load_checkpoint(out)
    assert ckpt.config["task"] == {"kind": "translate", "source": "en", "target": "zh"}
    # it writes Chinese: English -> Chinese is far more likely under it than Chinese -> English
    assert (
        _heldout_loss(ckpt.model, ckpt.tokenizer, "en", "zh")
        < _heldout_loss(ckpt.model, ckpt.tokenizer, "zh", "en") - 1
    )


def test_a_tsv_file_trains_and_resumes(tmp_path, tsv):
    a, b = tmp_path / "a", tmp_path / "b"
    run(a, pairs_path=tsv)
    run(b, pairs_path=tsv, until=10)
    run(b, resume=True)  # rereads the file its config names
    assert step_losses(a) == step_losses(b)
    data = checkpoint.read_config(b)["data"]
    assert data["kind"] == "file" and data["path"] == str(tsv.resolve())
    # the last tenth of the pairs validates, those whose words the training pairs have
    assert data["pairs"] == 180 and data["val_pairs"] + data["val_left_out"] == 20 and data["val_pairs"] > 10
    assert eval_lines(b)[-1]["val_loss"] is not None
    lines = tsv.read_text(encoding="utf-8").splitlines(keepends=True)
    tsv.write_text("".join(lines[1:] + lines[:1]), encoding="utf-8")  # the same pairs in another order
    with pytest.raises(ValueError, match="the set of sentence pairs differs from the one"):
        run(b, resume=True, overrides=["steps=30"])
    tsv.write_text("".join(lines) + "苹果\tapple\n", encoding="utf-8")
    with pytest.raises(ValueError, match="trained with 180 pairs, now there are 181"):
        run(b, resume=True, overrides=["steps=30"])
    tsv.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ValueError, match="trained with 180 pairs, now there are 162"):
        run(b, resume=True, overrides=["steps=30", "val_fraction=0.19"])


def test_a_tsv_file_may_name_other_languages(tmp_path):
    path = tmp_path / "fr.tsv"
    path.write_text("le chat\tthe cat\nle chien\tthe dog\n", encoding="utf-8")
    run(tmp_path / "run", pairs_path=path, direction="fr-en", overrides=TINY + ["steps=2"])
    assert direction_of(checkpoint.read_config(tmp_path / "run")) == ("fr", "en")
    for bad in ("fr_en", "en-en", "FR-EN", "fr-"):
        with pytest.raises(ValueError, match="SOURCE-TARGET, two different language codes"):
            run(tmp_path / "other", pairs_path=path, direction=bad)


@pytest.mark.parametrize(
    "content, match",
    [
        ("我 吃了\ti ate\nno tab here\n", "line 2: expected 'source<TAB>target'"),
        ("我 吃了\t \n", "line 1: expected 'source<TAB>target', both non-empty"),
        (b"\xff\xfe a\tb\n", "not UTF-8"),
        ("\n\n", "holds no pairs"),
        ("a\tb <s>\n", "special token"),
        (" ".join(["w"] * 50) + "\tx\n", "longer .* than n_ctx=40"),
    ],
)
def test_bad_tsv_files(tmp_path, content, match):
    path = tmp_path / "bad.tsv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(ValueError, match=match):
        run(tmp_path / "run", pairs_path=path, overrides=TINY + ["val_fraction=0"])
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(direction="fr-en"), "built-in corpus translates zh-en or en-zh"),
        (dict(direction="zh_en"), "zh-en or en-zh"),
        (dict(preset="nope"), "unknown preset"),
        (dict(overrides=["arch=gpt"]), "encoder-decoder"),
        (dict(overrides=TINY + ["d_vocab=10"]), "smaller than the tokenizer"),
        (dict(overrides=TINY + ["n_ctx=8"]), "than n_ctx=8"),
        (dict(until=21), "--until must be between 1 and 20"),
    ],
)
def test_bad_settings(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        run(tmp_path / "run", **kw)
    assert not (tmp_path / "run").exists()


def test_existing_checkpoint_needs_force_or_resume(tmp_path):
    out = tmp_path / "run"
    run(out, overrides=TINY + ["steps=2"])
    with pytest.raises(ValueError, match="already holds a checkpoint"):
        run(out, overrides=TINY + ["steps=2"])
    assert run(out, overrides=TINY + ["steps=3"], force=True).step == 3


def test_the_gpt_trainer_refuses_a_seq2seq_preset():
    with pytest.raises(ValueError, match="--task translate"):
        train("a b c\n", out="unused", preset="translate", progress=False)
