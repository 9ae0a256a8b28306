"""The checkpoint directory as a place to write: qkv touches only its own files, one run at a time;
every file of a checkpoint is checked before it is used (a one-line error naming the file and the
field or tensor); a full disk or a kill leaves the last checkpoint loadable."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from qkv.apps.cli import main
from qkv.core import checkpoint
from qkv.core.bundled import default_ckpt
from qkv.core.config import ModelConfig, TrainConfig
from qkv.core.models.gpt import GPT, lm_loss
from qkv.core.tokenizers import train_tokenizer
from qkv.core import train as train_mod
from qkv.core.lock import LOCK_NAME, DirectoryLocked, locked
from qkv.core.rundir import header_meta
from qkv.core.resume import check_optimizer_state, load_optimizer
from qkv.core.train import TrainingStopped, make_optimizer, train

TINY = ["n_layers=1", "d_model=32", "n_heads=2", "n_ctx=16", "steps=20", "batch_size=4",
        "eval_interval=10", "eval_steps=2"]
from conftest import TEXT  # noqa: E402 (the text of the text_file fixture)
QKV = [sys.executable, "-m", "qkv"]
FILES = ["config.json", "tokenizer.json", "state.json", "model-0000010.safetensors",
         "optimizer-0000010.safetensors", "log.jsonl"]


def sets(pairs) -> list[str]:
    return [a for pair in pairs for a in ("--set", pair)]


def snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def one_error(capsys, argv) -> str:
    """Run a qkv command that must fail; return its one error line."""
    assert main(argv) != 0
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qkv: error: ") and "Traceback" not in err + out, err
    return lines[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, text_file) -> dict[str, Path]:
    """Two runs stopped at step 10 of 20: "base", and "other" with another d_model and tokenizer."""
    root = tmp_path_factory.mktemp("runs")
    train(text_path=text_file, out=root / "base", overrides=TINY, until=10, progress=False)
    train(text_path=text_file, out=root / "other", overrides=TINY + ["d_model=16"], tokenizer="word",
          until=10, progress=False)
    assert sorted(snapshot(root / "base")) == sorted(FILES)
    return {"base": root / "base", "other": root / "other"}


@pytest.fixture
def base(runs, tmp_path) -> Path:
    d = tmp_path / "run"
    shutil.copytree(runs["base"], d)
    return d


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
    mine = {"model.safetensors": st_save({"w": torch.zeros(2)}, {"format": "pt"}),  # a Hugging Face file
            "model-0000099.safetensors": st_save({"w": torch.zeros(2)}),  # qkv's name, not qkv's file
            "optimizer-0000020.safetensors": b"y", "model-best.safetensors": b"x", "notes.txt": b"n", ".hidden": b"h"}
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
    assert sorted(set(after) - set(mine)) == ["config.json", "log.jsonl", "model-0000020.safetensors",
                                              "optimizer-0000020-1.safetensors", "state.json", "tokenizer.json"]
    assert checkpoint.load_checkpoint(base, with_optimizer=True).state["step"] == 20
    assert [json.loads(line)["step"] for line in after["log.jsonl"].decode().splitlines()][:2] == [1, 2]


def test_weight_files_of_other_runs_are_left_alone(base, runs, text_file):
    """A qkv weight file copied in from another run (qkv's name and marker, another run id) and one from
    a version of qkv before run ids are someone else's: resuming and saving leaves them in place."""
    other = json.loads((runs["other"] / "state.json").read_text())["model"]
    copied = {"model-0000005.safetensors": (runs["other"] / other).read_bytes(),
              "model-0001500.safetensors": (default_ckpt() / "model-0001500.safetensors").read_bytes()}
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
    expected = (TrainingStopped, r"still holds the previous one \(step 10\)") if stop == "nan" else (KeyboardInterrupt, None)
    with pytest.raises(expected[0], match=expected[1]):
        train(TEXT, out=base, overrides=TINY + ["d_model=64", "n_layers=2"], tokenizer="word", force=True, progress=False)
    assert snapshot(base) == before  # the old checkpoint, its log included; the staged files are gone
    monkeypatch.undo()
    assert train(out=base, resume=True, progress=False).step == 20  # and it still resumes


def wait_for(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def start_run(out: Path, text_file: Path, *extra) -> subprocess.Popen:
    """A run that goes on until it is killed (no checkpoint for 100000 steps)."""
    args = sets(TINY + ["steps=100000", "eval_interval=100000"])
    return subprocess.Popen(QKV + ["train", "--text", str(text_file), "--out", str(out), "--quiet", *args, *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


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
    train(text_path=text_file, out=base, overrides=TINY + ["steps=5"], force=True, progress=False)  # the lock died with it
    assert sorted(snapshot(base)) == ["config.json", "log.jsonl", "model-0000005.safetensors",
                                      "optimizer-0000005.safetensors", "state.json", "tokenizer.json"]


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


def test_a_second_run_on_a_locked_directory_fails_at_once(capsys, tmp_path, text_file):
    out = tmp_path / "run"
    proc = start_run(out, text_file)
    try:
        wait_for(lambda: lines(out / "log.jsonl") >= 1 or proc.poll() is not None)
        assert proc.poll() is None, proc.stderr.read()
        t0 = time.monotonic()
        with pytest.raises(DirectoryLocked, match=rf"in use by another qkv run \(pid {proc.pid}, started 20\d\d-"):
            train(text_path=text_file, out=out, overrides=TINY, tokenizer="bpe", vocab_size=2000, progress=False)
        assert time.monotonic() - t0 < 2  # before the slow part (training a tokenizer)
        for extra in (["--force"], ["--resume"]):
            line = one_error(capsys, ["train", "--text", str(text_file), "--out", str(out), "--quiet", *extra])
            assert f"pid {proc.pid}" in line
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    train(text_path=text_file, out=out, overrides=TINY + ["steps=3"], progress=False)  # kill -9 released it
    assert checkpoint.load_checkpoint(out).state["step"] == 3


# ---------------------------------------------------------------------------- every file checked


def damage(d: Path, name: str, how: str, other: Path) -> None:
    path = d / name
    if how == "missing":
        path.unlink()
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    elif how == "garbage":
        path.write_bytes(bytes(range(256)) * 8)
    else:  # the file of the same name from another run
        shutil.copy(other / name, path)


@pytest.mark.parametrize("how", ["missing", "empty", "truncated", "garbage", "other_run"])
@pytest.mark.parametrize("name", FILES)
def test_every_file_missing_empty_truncated_garbage_or_from_another_run(capsys, runs, base, name, how):
    damage(base, name, how, runs["other"])
    before = snapshot(base)
    argv = ["train", "--out", str(base), "--resume", "--quiet"]
    if name == "log.jsonl" and how in ("missing", "empty", "truncated"):  # a log cut short: the resumed log goes on from it
        assert main(argv) == 0, capsys.readouterr().err
        steps = [json.loads(line)["step"] for line in (base / "log.jsonl").read_text().splitlines()]
        assert steps[-1] == 20 and steps == sorted(steps)
        return
    line = one_error(capsys, argv)
    assert name in line, line
    assert snapshot(base) == before  # a refused resume writes nothing


@pytest.mark.parametrize("edit, match", [
    (lambda c: c.pop("data"), "field 'data'"),
    (lambda c: c["data"].pop("path"), "field 'data'"),
    (lambda c: c["data"].update(kind="url"), "field 'data'"),
    (lambda c: c.pop("model"), "field 'model' is missing"),
    (lambda c: c["model"].update(d_model="32"), "d_model must be an integer"),
    (lambda c: c.update(tokenizer="bpe"), "tokenizer.json holds a char tokenizer"),
    (lambda c: c.update(run="another"), "state.json comes from another run"),
])
def test_config_with_a_missing_or_wrong_field(capsys, base, edit, match):
    config = json.loads((base / "config.json").read_text())
    edit(config)
    (base / "config.json").write_text(json.dumps(config))
    line = one_error(capsys, ["train", "--out", str(base), "--resume", "--quiet"])
    assert match in line, line


@pytest.mark.parametrize("field, value", [("step", "10"), ("step", -1), ("step", True), ("model", "../model.bin"),
                                          ("model", None), ("optimizer", 5), ("config", "mine.json"),
                                          ("train_loss", "low"), ("format", "other")])
def test_state_with_a_wrong_field(capsys, base, field, value):
    state = json.loads((base / "state.json").read_text())
    state[field] = value
    (base / "state.json").write_text(json.dumps(state))
    line = one_error(capsys, ["train", "--out", str(base), "--resume", "--quiet"])
    assert f"state.json is malformed: field {field!r}" in line, line


def test_a_log_of_garbage_lines_is_named(capsys, base):
    n = lines(base / "log.jsonl")
    with open(base / "log.jsonl", "a") as f:
        f.write("not json\n" + '{"step": 3}\n')
    line = one_error(capsys, ["train", "--out", str(base), "--resume", "--quiet"])
    assert f"log.jsonl line {n + 1} is not a qkv log line" in line


def test_weights_with_nan_are_refused(base):
    path = base / "model-0000010.safetensors"
    tensors, meta = st_load(path.read_bytes()), header_meta(path)
    tensors["embed.weight"][0, 0] = float("nan")
    path.write_bytes(st_save(tensors, meta))
    with pytest.raises(ValueError, match="embed.weight holds NaN"):
        checkpoint.load(base)


def foreign_optimizer(d: Path, other: Path) -> None:
    """Put the optimizer file of a run with another d_model in d, its metadata changed to d's run and
    step, so that only the tensors can tell."""
    meta = header_meta(d / "optimizer-0000010.safetensors")
    tensors = st_load((other / "optimizer-0000010.safetensors").read_bytes())
    groups = json.loads(header_meta(other / "optimizer-0000010.safetensors")["param_groups"])
    (d / "optimizer-0000010.safetensors").write_bytes(st_save(tensors, {**meta, "param_groups": json.dumps(groups)}))


@pytest.mark.parametrize("forged", [True, False])
def test_resume_with_a_foreign_optimizer_fails_fast(runs, base, forged):
    if forged:
        foreign_optimizer(base, runs["other"])
    else:
        shutil.copy(runs["other"] / "optimizer-0000010.safetensors", base)
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "import torch, qkv.apps.cli"], check=True, timeout=60)
    startup, t0 = time.monotonic() - t0, time.monotonic()  # what a busy machine adds to any qkv command
    proc = subprocess.run(QKV + ["train", "--out", str(base), "--resume", "--quiet"], capture_output=True, text=True,
                          timeout=60)  # before the check: a hang of more than 60 s, or a crash (exit 134, 139)
    seconds = time.monotonic() - t0
    assert proc.returncode == 1, proc.stderr
    lines_ = proc.stderr.strip().splitlines()
    assert len(lines_) == 1 and "optimizer-0000010.safetensors" in lines_[0], proc.stderr
    assert ("tensor state." in lines_[0] or "param_groups" in lines_[0]) if forged else "another run" in lines_[0]
    assert seconds < max(5.0, startup + 3.0), (seconds, startup)  # about 1.7 s on an idle machine


def _opt_state(step: int = 1):
    """A model, and the state of an AdamW that took `step` steps on it, as a checkpoint file gives it back."""
    torch.manual_seed(0)
    model = GPT(ModelConfig(d_vocab=11, n_ctx=8, d_model=16, n_heads=2, n_layers=1))
    opt = make_optimizer(model, TrainConfig())
    for _ in range(step):
        x = torch.randint(11, (2, 8))
        opt.zero_grad()
        lm_loss(model(x), x).backward()
        opt.step()
    sd = opt.state_dict()
    saved = {"state": {i: {k: t.clone() for k, t in s.items()} for i, s in sd["state"].items()},
             "param_groups": json.loads(json.dumps(sd["param_groups"]))}  # the file holds them as JSON
    return model, saved


def _tensor(i, key, f):
    return lambda saved: saved["state"][i].update({key: f(saved["state"][i][key])})


def _group(n, key, value):
    return lambda saved: saved["param_groups"][n].update({key: value})


@pytest.mark.parametrize("edit, match", [
    (_tensor(0, "exp_avg", lambda t: t[:3]), r"state\.0\.exp_avg is torch.float32 \(3, 16\)"),
    (_tensor(2, "exp_avg_sq", lambda t: t.double()), r"state\.2\.exp_avg_sq is torch.float64"),
    (_tensor(1, "step", lambda t: t + 4), r"state\.1\.step counts 5 steps, the checkpoint is at step 1"),
    (_tensor(1, "step", lambda t: t.reshape(1)), r"state\.1\.step is torch.float32 \(1,\)"),
    (lambda saved: saved["state"][0].pop("exp_avg_sq"), r"state\.0 holds \['exp_avg', 'step'\]"),
    (lambda saved: saved["state"][0].update(momentum=torch.zeros(1)), r"state\.0 holds"),
    (lambda saved: saved["state"].update({99: saved["state"][0]}), r"state\.99 is for parameter 99"),
    (_tensor(0, "exp_avg", lambda t: t.fill_(float("nan"))), r"state\.0\.exp_avg holds"),
    (_tensor(0, "exp_avg_sq", lambda t: -t - 1), r"state\.0\.exp_avg_sq holds negative"),
    (lambda saved: saved.update(param_groups=saved["param_groups"][:1]), "param_groups do not match the model's 2"),
    (lambda saved: saved["param_groups"][0]["params"].pop(), r"param_groups\[0\] holds other parameters"),
    (_group(1, "fused", False), r"param_groups\[1\]\.fused = False"),
    (_group(0, "betas", [0.9, 1.5]), r"param_groups\[0\]\.betas"),
    (_group(0, "lr", float("nan")), r"param_groups\[0\]\.lr"),
    (_group(0, "momentum", 0.9), r"param_groups\[0\]\.momentum"),
    (lambda saved: saved["state"].pop(3), r"the state of parameter 3 is missing \(1 of"),
])
def test_each_optimizer_mismatch_is_named(edit, match):
    model, saved = _opt_state()
    fresh = make_optimizer(model, TrainConfig())
    check_optimizer_state(saved, fresh, "opt.safetensors", 1)  # as saved: no complaint
    edit(saved)
    with pytest.raises(ValueError, match=match) as info:
        check_optimizer_state(saved, fresh, "opt.safetensors", 1)
    assert str(info.value).startswith("opt.safetensors: ") and "\n" not in str(info.value)


def test_a_matching_optimizer_state_passes_and_loads():
    model, saved = _opt_state(step=2)
    fresh = make_optimizer(model, TrainConfig(weight_decay=0.3))
    saved["param_groups"][0]["eps"] = 0.0  # a forged eps (0/0 for a parameter that never had a gradient)
    load_optimizer(fresh, saved, "opt.safetensors", 2)
    assert fresh.param_groups[0]["weight_decay"] == 0.3  # the current setting (--set), not the saved one
    assert fresh.param_groups[0]["eps"] == make_optimizer(model, TrainConfig()).param_groups[0]["eps"] > 0
    for i, s in saved["state"].items():
        for key, t in s.items():
            assert torch.equal(fresh.state_dict()["state"][i][key], t)  # a copy of the same numbers


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
    argv = ["train", "--text", str(text_file), "--out", str(out), "--quiet", *sets(TINY), *(["--force"] if force else [])]
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
    assert main(["train", "--text", str(text_file), "--out", str(out), "--quiet",
                 *sets(["steps=2", "batch_size=2", "eval_steps=1"])]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["tokenizer"] == "char"  # --tokenizer char
    assert {k: config["model"][k] for k in ("n_ctx", "d_model", "n_heads", "n_layers")} == \
        {"n_ctx": 64, "d_model": 64, "n_heads": 4, "n_layers": 2}  # --preset tiny


def test_info_on_a_file_says_it_is_not_a_directory(capsys, base):
    line = one_error(capsys, ["info", "--ckpt", str(base / "config.json")])
    assert "config.json is a file, not a checkpoint directory" in line
