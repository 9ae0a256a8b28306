"""The checkpoint directory as a place to write: qkv touches only its own files, one run at a time; a
full disk or a kill leaves the last checkpoint loadable (every file checked before use: test_resume_checks)."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import torch
from conftest import TEXT  # the text of the text_file fixture
from rundir_util import QKV, TINY, lines, one_error, sets, snapshot
from safetensors.torch import save as st_save

from qkv.apps.cli import main
from qkv.core.hub.bundled import default_ckpt
from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig
from qkv.core.text.tokenizers import train_tokenizer
from qkv.core.train import checkpoint
from qkv.core.train import lm as train_mod
from qkv.core.train.lm import TrainingStopped, train
from qkv.core.train.lock import LOCK_NAME, DirectoryLocked, locked

# ---------------------------------------------------------------------------- only qkv's own files


def user_folder(d: Path) -> None:
    d.mkdir()
    (d / "config.json").write_text('{"mine": 1}\n')
    (d / "tokenizer.json").write_text('{"version": "1.0", "model": {}}\n')
    (d / "log.jsonl").write_text('{"step": 1, "loss": 2.0}\n')
    (d / "model-best.safetensors").write_bytes(b"x")
    (d / "model.safetensors").write_bytes(st_save({"w": torch.zeros(2)}, {"format": "pt"}))  # a Hugging Face file
    (d / "optimizer-0000020.safetensors").write_bytes(b"y")


@pytest.mark.parametrize("extra", [[], ["--force"], ["--resume"]])
def test_a_folder_that_is_not_qkvs_is_never_written(capsys, tmp_path, text_file, extra):
    u = tmp_path / "u"
    user_folder(u)
    before = snapshot(u)
    line = one_error(capsys, ["train", "--text", str(text_file), "--out", str(u), "--quiet", *sets(TINY), *extra])
    assert "not empty and holds no qkv checkpoint" in line
    tok = train_tokenizer("char", TEXT)
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=8, d_model=16, n_heads=2, n_layers=1))
    with pytest.raises(ValueError, match="holds no qkv checkpoint"):
        checkpoint.save(u, model, tok)
    assert snapshot(u) == before  # nothing changed, added (not even a lock file) or removed


def test_force_replaces_a_qkv_checkpoint_and_nothing_else(capsys, base, text_file):
    mine = {
        "model.safetensors": st_save({"w": torch.zeros(2)}, {"format": "pt"}),  # a Hugging Face file
        "model-0000099.safetensors": st_save({"w": torch.zeros(2)}),  # qkv's name, not qkv's file
        "optimizer-0000020.safetensors": b"y",
        "model-best.safetensors": b"x",
        "notes.txt": b"n",
        ".hidden": b"h",
    }
    for name, data in mine.items():
        (base / name).write_bytes(data)
    before = snapshot(base)
    line = one_error(capsys, ["train", "--text", str(text_file), "--out", str(base), "--quiet", *sets(TINY)])
    assert "already holds a checkpoint" in line and "--force" in line
    assert snapshot(base) == before
    # the new run's first checkpoint (step 10) may not reuse the old one's file names, and its second
    # (step 20) not the user's optimizer-0000020.safetensors
    assert main(["train", "--text", str(text_file), "--out", str(base), "--quiet", "--force", *sets(TINY)]) == 0
    after = snapshot(base)
    assert {k: after[k] for k in mine} == mine  # every file of the user's, byte for byte
    assert sorted(set(after) - set(mine)) == [
        "config.json",
        "log.jsonl",
        "model-0000020.safetensors",
        "optimizer-0000020-1.safetensors",
        "state.json",
        "tokenizer.json",
    ]
    assert checkpoint.load_checkpoint(base, with_optimizer=True).state["step"] == 20
    assert [json.loads(line)["step"] for line in after["log.jsonl"].decode().splitlines()][:2] == [1, 2]


def _bundled_weights() -> str:
    return json.loads((default_ckpt() / "state.json").read_text())["model"]


def test_weight_files_of_other_runs_are_left_alone(base, runs, text_file):
    """A qkv weight file copied in from another run (qkv's name and marker, another run id) and one from
    a version of qkv before run ids are someone else's: resuming and saving leaves them in place."""
    other = json.loads((runs["other"] / "state.json").read_text())["model"]
    copied = {
        "model-0000005.safetensors": (runs["other"] / other).read_bytes(),
        "model-0001500.safetensors": (default_ckpt() / _bundled_weights()).read_bytes(),
    }
    for name, data in copied.items():
        (base / name).write_bytes(data)
    train(text_path=text_file, out=base, resume=True, overrides=["steps=30"], progress=False)
    after = snapshot(base)
    assert {k: after[k] for k in copied} == copied
    assert checkpoint.load_checkpoint(base).state["step"] == 30


@pytest.mark.parametrize("stop", ["nan", "ctrl-c"])
def test_force_keeps_the_old_checkpoint_until_the_new_runs_first(base, monkeypatch, stop):
    """The new run stops before its first checkpoint, by a NaN loss or by Ctrl-C (which otherwise
    saves what was trained so far): a few steps of it never replace the trained checkpoint."""
    before = snapshot(base)
    real = train_mod.lm_loss
    calls = {"n": 0}

    def stop_after_3(logits, targets):
        calls["n"] += torch.is_grad_enabled()
        if calls["n"] > 3 and stop == "ctrl-c":
            raise KeyboardInterrupt
        return real(logits, targets) * (float("nan") if calls["n"] > 3 else 1.0)

    monkeypatch.setattr(train_mod, "lm_loss", stop_after_3)
    expected = (
        (TrainingStopped, r"still holds the previous one \(step 10\)") if stop == "nan" else (KeyboardInterrupt, None)
    )
    with pytest.raises(expected[0], match=expected[1]):
        train(
            TEXT, out=base, overrides=TINY + ["d_model=64", "n_layers=2"], tokenizer="word", force=True, progress=False
        )
    assert snapshot(base) == before  # the old checkpoint, its log included; the staged files are gone
    monkeypatch.undo()
    assert train(out=base, resume=True, progress=False).step == 20  # and it still resumes


def wait_for(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def start_run(out: Path, text_file: Path, *extra) -> subprocess.Popen:
    """A run that goes on until it is killed (no checkpoint for 100000 steps)."""
    args = sets(TINY + ["steps=100000", "eval_interval=100000"])
    return subprocess.Popen(
        QKV + ["train", "--text", str(text_file), "--out", str(out), "--quiet", *args, *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
@pytest.mark.subprocess
def test_kill_9_during_a_forced_run_leaves_the_old_checkpoint(base, text_file):
    before = snapshot(base)
    proc = start_run(base, text_file, "--force")
    try:
        wait_for(lambda: lines(base / "log.next.jsonl") >= 3 or proc.poll() is not None)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    now = snapshot(base)
    assert {k: now[k] for k in before} == before
    assert set(now) - set(before) <= {"config.next.json", "tokenizer.next.json", "log.next.jsonl", LOCK_NAME}
    assert checkpoint.load_checkpoint(base).state["step"] == 10
    train(
        text_path=text_file, out=base, overrides=TINY + ["steps=5"], force=True, progress=False
    )  # the lock died with it
    assert sorted(snapshot(base)) == [
        "config.json",
        "log.jsonl",
        "model-0000005.safetensors",
        "optimizer-0000005.safetensors",
        "state.json",
        "tokenizer.json",
    ]


def test_a_run_that_saved_nothing_can_be_started_again(tmp_path, monkeypatch):
    out = tmp_path / "run"
    monkeypatch.setattr(train_mod, "lm_loss", lambda logits, targets: logits.sum() * float("nan"))
    with pytest.raises(TrainingStopped, match="no checkpoint was saved"):
        train(TEXT, out=out, overrides=TINY, progress=False)
    monkeypatch.undo()
    assert train(TEXT, out=out, overrides=TINY + ["steps=3"], progress=False).step == 3  # no --force needed


# ---------------------------------------------------------------------------- one run at a time


def test_the_lock_is_exclusive_and_leaves_nothing(tmp_path):
    d = tmp_path / "d"
    with locked(d):
        assert (d / LOCK_NAME).read_text().startswith(f"pid {os.getpid()}, started ")
        with pytest.raises(DirectoryLocked, match=f"pid {os.getpid()}"):
            with locked(d):
                pass
    assert list(d.iterdir()) == []
    with locked(d):
        pass


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_second_run_on_a_locked_directory_fails_at_once(capsys, tmp_path, text_file, monkeypatch):
    out = tmp_path / "run"
    proc = start_run(out, text_file)
    try:
        wait_for(lambda: lines(out / "log.jsonl") >= 1 or proc.poll() is not None)
        assert proc.poll() is None, proc.stderr.read()

        def no_tokenizer(*args, **kwargs):
            raise AssertionError("a tokenizer was trained before the lock was checked")

        with monkeypatch.context() as m:  # refused before the slow part (training a tokenizer)
            m.setattr(train_mod, "train_tokenizer", no_tokenizer)
            with pytest.raises(DirectoryLocked, match=rf"in use by another qkv run \(pid {proc.pid}, started 20\d\d-"):
                train(text_path=text_file, out=out, overrides=TINY, tokenizer="bpe", vocab_size=2000, progress=False)
        for extra in (["--force"], ["--resume"]):
            line = one_error(capsys, ["train", "--text", str(text_file), "--out", str(out), "--quiet", *extra])
            assert f"pid {proc.pid}" in line
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    train(text_path=text_file, out=out, overrides=TINY + ["steps=3"], progress=False)  # kill -9 released it
    assert checkpoint.load_checkpoint(out).state["step"] == 3


# ---------------------------------------------------------------------------- disk full, flags, a file


@pytest.mark.parametrize("force", [False, True])
def test_disk_full_says_which_checkpoint_was_kept(capsys, monkeypatch, base, text_file, force):
    real_fsync, real_save, armed = os.fsync, checkpoint.Writer.save, {"saves": 0}

    def fsync(fd):
        if armed["saves"] >= (1 if force else 2):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_fsync(fd)

    def save(self, *args, **kw):
        armed["saves"] += 1
        return real_save(self, *args, **kw)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(checkpoint.Writer, "save", save)
    out = base if force else base.parent / "fresh"
    argv = [
        "train",
        "--text",
        str(text_file),
        "--out",
        str(out),
        "--quiet",
        *sets(TINY),
        *(["--force"] if force else []),
    ]
    line = one_error(capsys, argv)
    assert "No space left on device" in line
    if force:
        assert "no checkpoint of this run was saved" in line and "previous one (step 10)" in line
    else:
        assert "after step 20" in line and "the last checkpoint (step 10) is kept" in line
    monkeypatch.undo()
    assert checkpoint.load_checkpoint(out, with_optimizer=True).state["step"] == 10
    assert not [p.name for p in out.iterdir() if ".tmp-" in p.name]  # no half-written file takes the space
    assert main(["train", "--out", str(out), "--resume", "--quiet"]) == 0


@pytest.mark.parametrize("flag", [["--force"], ["--preset", "tiny"], ["--tokenizer", "char"], ["--vocab-size", "10"]])
def test_resume_refuses_the_settings_of_a_new_run(capsys, base, flag):
    before = snapshot(base)
    line = one_error(capsys, ["train", "--out", str(base), "--resume", "--quiet", *flag])
    assert f"{flag[0]} cannot be combined with it" in line
    assert snapshot(base) == before


def test_train_without_those_flags_keeps_its_defaults(capsys, tmp_path, text_file):
    out = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--text",
                str(text_file),
                "--out",
                str(out),
                "--quiet",
                *sets(["steps=2", "batch_size=2", "eval_steps=1"]),
            ]
        )
        == 0
    )
    config = json.loads((out / "config.json").read_text())
    assert config["tokenizer"] == "char"  # --tokenizer char
    assert {k: config["model"][k] for k in ("n_ctx", "d_model", "n_heads", "n_layers")} == {
        "n_ctx": 64,
        "d_model": 64,
        "n_heads": 4,
        "n_layers": 2,
    }  # --preset tiny


def test_info_on_a_file_says_it_is_not_a_directory(capsys, base):
    line = one_error(capsys, ["info", "--ckpt", str(base / "config.json")])
    assert "config.json is a file, not a checkpoint directory" in line
