"""Tests for qkv.train: the loss goes down, runs are reproducible, resume is exact, failures are clean."""

from __future__ import annotations

import json
import math

import pytest
import torch
from cli_util import eval_lines, log_lines, step_losses

from qkv.core.spec.config import TrainConfig
from qkv.core.text import corpus
from qkv.core.train import checkpoint
from qkv.core.train import lm as train_mod
from qkv.core.train.lm import train
from qkv.core.train.loop import TrainingStopped, lr_at

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
TEXT = corpus.generate(n_sentences=200, lang="en")
TEXT_ZH = corpus.generate(n_sentences=200)


def weights(out) -> dict[str, torch.Tensor]:
    model, _ = checkpoint.load(out)
    return model.state_dict()


def assert_same_weights(a: dict, b: dict) -> None:
    """Bit for bit: used only for runs in this one process, with the same ops, seeds and thread count."""
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name


# ---------------------------------------------------------------------------- learning


def test_training_lowers_the_loss(tmp_path):
    out = tmp_path / "run"
    result = train(TEXT, out=out, overrides=TINY + ["steps=60", "lr=1e-2", "warmup_steps=5"], progress=False)
    vocab = checkpoint.load(out)[1].vocab_size
    first = step_losses(out)[0][1]
    # an untrained model (N(0, 0.02) weights) predicts nearly uniformly: loss ~ ln(vocab)
    assert abs(first - math.log(vocab)) < 0.3
    assert result.step == 60
    assert result.val_loss is not None and result.train_loss is not None
    assert result.val_loss < math.log(vocab) - 0.6
    assert result.train_loss < math.log(vocab) - 0.6
    assert eval_lines(out)[-1] == {
        "step": 60,
        "train_loss": round(result.train_loss, 6),
        "val_loss": round(result.val_loss, 6),
    }
    state = json.loads((out / "state.json").read_text())
    assert state["step"] == 60
    assert (out / state["model"]).is_file() and (out / state["optimizer"]).is_file()
    # one line per step, eval lines every eval_interval
    assert [s for s, _ in step_losses(out)] == list(range(1, 61))
    assert [d["step"] for d in eval_lines(out)] == [10, 20, 30, 40, 50, 60]


def test_same_seed_same_losses_other_seed_differs(tmp_path):
    train(TEXT, out=tmp_path / "a", overrides=TINY, progress=False)
    train(TEXT, out=tmp_path / "b", overrides=TINY, progress=False)
    train(TEXT, out=tmp_path / "c", overrides=TINY + ["seed=7"], progress=False)
    # exact: the same process runs the same ops from the same seeds, so every float is the same
    assert step_losses(tmp_path / "a") == step_losses(tmp_path / "b")
    assert eval_lines(tmp_path / "a") == eval_lines(tmp_path / "b")
    assert step_losses(tmp_path / "a") != step_losses(tmp_path / "c")
    assert_same_weights(weights(tmp_path / "a"), weights(tmp_path / "b"))


# ---------------------------------------------------------------------------- resume


@pytest.mark.parametrize("extra, until", [([], 10), (["dropout=0.2"], 15)])
def test_resume_is_exact(tmp_path, extra, until):
    a, b = tmp_path / "a", tmp_path / "b"
    train(TEXT, out=a, overrides=TINY + extra, progress=False)
    first = train(TEXT, out=b, overrides=TINY + extra, until=until, progress=False)
    assert first.step == until
    assert checkpoint.load_checkpoint(b).state["step"] == until
    assert [s for s, _ in step_losses(b)] == list(range(1, until + 1))
    # a kill while a log line was being written leaves half a line: resume must cope
    with open(b / "log.jsonl", "a", encoding="utf-8") as f:
        f.write(f'{{"step": {until + 1}, "lo')
    second = train(TEXT, out=b, resume=True, progress=False)
    assert second.step == 30
    # exact equality, every step: same process and ops, and each step's batch and dropout masks come from
    # generators seeded by (seed, step), so the resumed run computes the very numbers of the uninterrupted one
    assert step_losses(a) == step_losses(b)
    assert [d for d in eval_lines(b) if d["step"] != until or until % 10 == 0] == eval_lines(a)
    assert_same_weights(weights(a), weights(b))
    # the optimizer state is the same too
    oa = checkpoint.load_checkpoint(a, with_optimizer=True).optimizer_state
    ob = checkpoint.load_checkpoint(b, with_optimizer=True).optimizer_state
    for i, s in oa["state"].items():
        for key, t in s.items():
            assert torch.equal(t, ob["state"][i][key]), (i, key)  # exact, for the same reason


def test_dropout_changes_the_losses(tmp_path):
    """Guard for the test above: with dropout on, the run really is different (masks are drawn)."""
    train(TEXT, out=tmp_path / "a", overrides=TINY + ["steps=5"], progress=False)
    train(TEXT, out=tmp_path / "b", overrides=TINY + ["steps=5", "dropout=0.2"], progress=False)
    assert step_losses(tmp_path / "a") != step_losses(tmp_path / "b")


def test_resume_rejects_a_different_text(tmp_path):
    out = tmp_path / "run"
    train(TEXT, out=out, overrides=TINY, until=10, progress=False)
    with pytest.raises(ValueError, match="text differs"):
        train(TEXT + "one more line .\n", out=out, resume=True, progress=False)
    with pytest.raises(ValueError, match="trained on a string"):
        train(out=out, resume=True, progress=False)
    with pytest.raises(ValueError, match="model settings cannot change"):
        train(TEXT, out=out, resume=True, overrides=["d_model=64"], progress=False)
    # nothing above touched the checkpoint
    assert checkpoint.load_checkpoint(out).state["step"] == 10


def test_resume_of_a_file_run_rereads_the_file(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text(TEXT, encoding="utf-8")
    a, b = tmp_path / "a", tmp_path / "b"
    train(text_path=path, out=a, overrides=TINY, progress=False)
    train(text_path=path, out=b, overrides=TINY, until=20, progress=False)
    train(out=b, resume=True, progress=False)
    assert step_losses(a) == step_losses(b)  # exact, as in test_resume_is_exact
    path.write_text(TEXT + "changed .\n", encoding="utf-8")
    with pytest.raises(ValueError, match="text differs"):
        train(out=b, resume=True, overrides=["steps=40"], progress=False)


def test_resume_a_finished_run_and_extend_it(tmp_path):
    out = tmp_path / "run"
    train(TEXT, out=out, overrides=TINY + ["steps=10"], progress=False)
    with pytest.raises(ValueError, match="already trained to step 10"):
        train(TEXT, out=out, resume=True, progress=False)
    result = train(TEXT, out=out, resume=True, overrides=["steps=15"], progress=False)
    assert result.step == 15 and result.train_loss is not None
    assert [s for s, _ in step_losses(out)] == list(range(1, 16))


def test_resume_needs_a_checkpoint(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        train(TEXT, out=tmp_path / "nowhere", resume=True, progress=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="config.json"):
        train(TEXT, out=tmp_path / "empty", resume=True, progress=False)
    with pytest.raises(ValueError, match="config.json"):
        train(out=tmp_path / "empty", resume=True, progress=False)


def test_until_out_of_range(tmp_path):
    for until in (0, 31, -1):
        with pytest.raises(ValueError, match="--until must be between 1 and 30"):
            train(TEXT, out=tmp_path / "run", overrides=TINY, until=until, progress=False)
    assert not (tmp_path / "run" / "state.json").exists()


# ---------------------------------------------------------------------------- failures


def _nan_after(monkeypatch, n_good: int) -> None:
    """Make the training loss (not the evaluation loss) NaN from training step n_good + 1 on."""
    real = train_mod.lm_loss
    calls = {"n": 0}

    def lm_loss(logits, targets):
        loss = real(logits, targets)
        if torch.is_grad_enabled():  # training; evaluate() runs under inference_mode
            calls["n"] += 1
            if calls["n"] > n_good:
                return loss * float("nan")
        return loss

    monkeypatch.setattr(train_mod, "lm_loss", lm_loss)


def test_nan_loss_stops_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch):
    good, out = tmp_path / "good", tmp_path / "run"
    train(TEXT, out=good, overrides=TINY, until=10, progress=False)
    _nan_after(monkeypatch, 15)
    with pytest.raises(TrainingStopped) as info:
        train(TEXT, out=out, overrides=TINY, progress=False)
    message = str(info.value)
    assert "step 16" in message and "nan" in message
    assert "step 10" in message and str(out) in message
    ckpt = checkpoint.load_checkpoint(out)
    assert ckpt.state["step"] == 10
    assert_same_weights(ckpt.model.state_dict(), weights(good))
    assert max(s for s, _ in step_losses(out)) == 15  # the NaN step was not logged
    # the kept checkpoint resumes (with the real loss again) exactly like an uninterrupted run
    monkeypatch.undo()
    train(TEXT, out=out, resume=True, progress=False)
    train(TEXT, out=good, resume=True, progress=False)
    assert step_losses(out) == step_losses(good)  # exact, as in test_resume_is_exact


def test_nan_loss_before_any_checkpoint(tmp_path, monkeypatch):
    out = tmp_path / "run"
    _nan_after(monkeypatch, 3)
    with pytest.raises(TrainingStopped, match="step 4") as info:
        train(TEXT, out=out, overrides=TINY, progress=False)
    assert "no checkpoint was saved" in str(info.value)
    assert not (out / "state.json").exists()


def test_existing_checkpoint_needs_force_or_resume(tmp_path):
    out = tmp_path / "run"
    train(TEXT, out=out, overrides=TINY + ["steps=10"], progress=False)
    before = (out / "state.json").read_bytes()
    with pytest.raises(ValueError, match="already holds a checkpoint"):
        train(TEXT, out=out, overrides=TINY + ["steps=10"], progress=False)
    assert (out / "state.json").read_bytes() == before
    result = train(TEXT, out=out, overrides=TINY + ["steps=12", "eval_interval=5"], force=True, progress=False)
    assert result.step == 12
    assert checkpoint.load_checkpoint(out).state["step"] == 12
    assert sorted(p.name for p in out.glob("*.safetensors")) == [
        "model-0000012.safetensors",
        "optimizer-0000012.safetensors",
    ]
    assert [s for s, _ in step_losses(out)] == list(range(1, 13))  # the old log is gone


@pytest.mark.parametrize(
    "bad, match",
    [
        (["n_layer=2"], "unknown setting.*n_layers"),
        (["n_layers=abc"], "expected an integer"),
        (["n_layers=0"], "n_layers"),
        (["dropout=1.5"], "dropout"),
        (["lr"], "key=value"),
    ],
)
def test_bad_overrides(tmp_path, bad, match):
    with pytest.raises(ValueError, match=match):
        train(TEXT, out=tmp_path / "run", overrides=TINY + bad, progress=False)
    assert not (tmp_path / "run").exists()


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="unknown preset"):
        train(TEXT, out=tmp_path / "run", preset="huge", progress=False)
    with pytest.raises(ValueError, match="empty"):
        train("  \n", out=tmp_path / "run", progress=False)
    with pytest.raises(ValueError, match="n_ctx \\+ 1 = 17"):
        train("abcdef", out=tmp_path / "run", overrides=TINY, progress=False)
    with pytest.raises(ValueError, match="d_vocab"):
        train(TEXT, out=tmp_path / "run", overrides=TINY + ["d_vocab=3"], progress=False)
    assert not (tmp_path / "run").exists()


# ---------------------------------------------------------------------------- tokenizers


@pytest.mark.parametrize("kind, vocab_size", [("word", None), ("bpe", 300)])
def test_word_and_bpe_tokenizers_train(tmp_path, kind, vocab_size):
    from qkv.core.decode.sample import generate

    out = tmp_path / kind
    result = train(
        TEXT,
        out=out,
        tokenizer=kind,
        vocab_size=vocab_size,
        overrides=TINY + ["lr=1e-2", "warmup_steps=5"],
        progress=False,
    )
    model, tok = checkpoint.load(out)
    assert tok.kind == kind
    assert model.cfg.d_vocab == tok.vocab_size
    assert json.loads((out / "config.json").read_text())["tokenizer"] == kind
    losses = [loss for _, loss in step_losses(out)]
    assert all(math.isfinite(x) for x in losses)
    assert result.val_loss < losses[0] - 0.3
    text = generate(model, tok, "the", 5, temperature=0)
    assert isinstance(text, str) and text


# ---------------------------------------------------------------------------- schedule


def test_lr_schedule():
    tc = TrainConfig(steps=100, warmup_steps=10, lr=1e-3, min_lr=1e-4)
    warm = [lr_at(s, tc) for s in range(10)]
    assert warm[0] == pytest.approx(1e-4)
    assert warm[9] == pytest.approx(1e-3)  # reaches lr at the end of warmup
    steps = [b - a for a, b in zip(warm, warm[1:])]
    assert all(d == pytest.approx(1e-4) for d in steps)  # linear
    assert lr_at(10, tc) == pytest.approx(1e-3)
    after = [lr_at(s, tc) for s in range(10, 100)]
    assert all(a > b for a, b in zip(after, after[1:]))  # strictly decreasing after warmup
    assert lr_at(99, tc) == pytest.approx(1e-4)  # min_lr at the last step (0-based step 99)
    assert min(after) >= 1e-4 - 1e-12 and max(after) <= 1e-3 + 1e-12
    # the halfway point of the cosine is the mean of lr and min_lr
    mid = TrainConfig(steps=21, warmup_steps=0, lr=2.0, min_lr=0.0)
    assert lr_at(0, mid) == pytest.approx(2.0)
    assert lr_at(10, mid) == pytest.approx(1.0)
    assert lr_at(20, mid) == pytest.approx(0.0, abs=1e-12)


def test_logged_lr_follows_the_schedule(tmp_path):
    out = tmp_path / "run"
    train(TEXT, out=out, overrides=TINY + ["steps=20", "warmup_steps=4", "lr=1e-2", "min_lr=1e-3"], progress=False)
    lrs = [d["lr"] for d in log_lines(out) if "lr" in d]
    assert len(lrs) == 20
    assert lrs[3] == pytest.approx(1e-2)
    assert lrs[-1] == pytest.approx(1e-3)


def test_an_error_after_the_bar_starts_on_a_line_of_its_own(tmp_path, text_file, monkeypatch, capsys):
    """An error once training has begun (here: the model cannot be wrapped) ends the progress bar's
    line before the CLI prints it."""
    from qkv.apps.cli import main
    from qkv.core.machine.processes import World

    def refuse(self, model):
        raise RuntimeError("the model could not be wrapped")

    monkeypatch.setattr(World, "wrap", refuse)
    out = tmp_path / "run"
    argv = ["train", "--text", str(text_file), "--out", str(out)] + [a for s in TINY for a in ("--set", s)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "\nqkv: error: the model could not be wrapped\n" in "\n" + err.replace("\r", "\n")
    assert err.splitlines()[-1] == "qkv: error: the model could not be wrapped"  # not glued onto the bar
