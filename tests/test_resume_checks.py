"""Every file of a checkpoint is checked before a resume uses it: missing, empty, truncated, garbage or
from another run, each is a one-line error naming the file and the field or tensor; an optimizer state
that does not fit the model is refused before PyTorch's fused kernels see it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import torch
from rundir_util import FILES, QKV, lines, one_error, snapshot
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from qkv.apps.cli import main
from qkv.core.model.gpt import GPT, lm_loss
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.train import checkpoint
from qkv.core.train.loop import make_optimizer
from qkv.core.train.resume import check_optimizer_state, load_optimizer
from qkv.core.train.rundir import header_meta

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
    if name == "log.jsonl" and how in (
        "missing",
        "empty",
        "truncated",
    ):  # a log cut short: the resumed log goes on from it
        assert main(argv) == 0, capsys.readouterr().err
        steps = [json.loads(line)["step"] for line in (base / "log.jsonl").read_text().splitlines()]
        assert steps[-1] == 20 and steps == sorted(steps)
        return
    line = one_error(capsys, argv)
    assert name in line, line
    assert snapshot(base) == before  # a refused resume writes nothing


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda c: c.pop("data"), "field 'data'"),
        (lambda c: c["data"].pop("path"), "field 'data'"),
        (lambda c: c["data"].update(kind="url"), "field 'data'"),
        (lambda c: c.pop("model"), "field 'model' is missing"),
        (lambda c: c["model"].update(d_model="32"), "d_model must be an integer"),
        (lambda c: c.update(tokenizer="bpe"), "tokenizer.json holds a char tokenizer"),
        (lambda c: c.update(run="another"), "state.json comes from another run"),
    ],
)
def test_config_with_a_missing_or_wrong_field(capsys, base, edit, match):
    config = json.loads((base / "config.json").read_text())
    edit(config)
    (base / "config.json").write_text(json.dumps(config))
    line = one_error(capsys, ["train", "--out", str(base), "--resume", "--quiet"])
    assert match in line, line


@pytest.mark.parametrize(
    "field, value",
    [
        ("step", "10"),
        ("step", -1),
        ("step", True),
        ("model", "../model.bin"),
        ("model", None),
        ("optimizer", 5),
        ("config", "mine.json"),
        ("train_loss", "low"),
        ("format", "other"),
    ],
)
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
@pytest.mark.slow
@pytest.mark.subprocess
def test_resume_with_a_foreign_optimizer_fails_fast(runs, base, forged):
    if forged:
        foreign_optimizer(base, runs["other"])
    else:
        shutil.copy(runs["other"] / "optimizer-0000010.safetensors", base)
    log = (base / "log.jsonl").read_bytes()
    proc = subprocess.run(
        QKV + ["train", "--out", str(base), "--resume", "--quiet"], capture_output=True, text=True, timeout=60
    )  # before the check: a hang of more than 60 s, or a crash (exit 134, 139)
    assert proc.returncode == 1, proc.stderr
    lines_ = proc.stderr.strip().splitlines()
    assert len(lines_) == 1 and "optimizer-0000010.safetensors" in lines_[0], proc.stderr
    assert ("tensor state." in lines_[0] or "param_groups" in lines_[0]) if forged else "another run" in lines_[0]
    assert (base / "log.jsonl").read_bytes() == log  # refused before a single training step, not after


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
    saved = {
        "state": {i: {k: t.clone() for k, t in s.items()} for i, s in sd["state"].items()},
        "param_groups": json.loads(json.dumps(sd["param_groups"])),
    }  # the file holds them as JSON
    return model, saved


def _tensor(i, key, f):
    return lambda saved: saved["state"][i].update({key: f(saved["state"][i][key])})


def _group(n, key, value):
    return lambda saved: saved["param_groups"][n].update({key: value})


@pytest.mark.parametrize(
    "edit, match",
    [
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
    ],
)
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


@pytest.mark.parametrize(
    "log, english",
    [
        (b"\xff\xfe\n", "is not a qkv log: not UTF-8 (byte 0)"),
        (b'{"step": 1}\nnot json\n{"step": 2}\n', "line 2 is not a qkv log line (a JSON object with an integer step)"),
        (b'{"step": 3, "train_loss": 9.5}\n', "comes from another run: its train_loss at step 3 is 9.5"),
    ],
)
def test_a_log_that_is_not_the_checkpoints_is_refused_in_either_language(tmp_path, log, english):
    from qkv.core.train.resume import read_log
    from qkv.presentation.i18n import say_error

    path = tmp_path / "log.jsonl"
    path.write_bytes(log)
    with pytest.raises(ValueError) as e:
        read_log(path, 3, {"train_loss": 1.25})
    assert english in str(e.value) and str(path) in str(e.value)
    zh = say_error(e.value, "zh")
    assert zh != str(e.value) and re.search(r"[\u4e00-\u9fff]", zh) and str(path) in zh
