"""--device, --precision and --threads on the command line, as far as a machine without a GPU goes:
every branch the CPU can run, and a one-line error for a device this machine lacks."""

from __future__ import annotations

import pytest
import torch
from cli_util import run_error, run_ok, step_losses

from qkv.core.train.checkpoint import load

TINY = [
    "--set",
    "steps=6",
    "--set",
    "eval_interval=6",
    "--set",
    "eval_steps=2",
    "--set",
    "d_model=16",
    "--set",
    "n_ctx=16",
    "--set",
    "batch_size=4",
    "--quiet",
]


@pytest.fixture
def cuda_missing(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def test_training_under_bf16_autocast_on_the_cpu_keeps_float32_weights_and_follows_float32(capsys, text_file, tmp_path):
    f32 = ["--device", "cpu", "--precision", "float32"]  # auto may be bf16 (a CPU with AMX or AVX-512 BF16)
    run_ok(capsys, ["train", "--text", str(text_file), "--out", str(tmp_path / "f32"), *f32, *TINY])
    run_ok(
        capsys,
        [
            "train",
            "--text",
            str(text_file),
            "--out",
            str(tmp_path / "bf16"),
            "--device",
            "cpu",
            "--precision",
            "bfloat16",
            *TINY,
        ],
    )
    model = load(tmp_path / "bf16")[0]
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    f32, bf16 = step_losses(tmp_path / "f32"), step_losses(tmp_path / "bf16")
    assert f32 != bf16  # autocast did compute in bf16 ...
    assert max(abs(a - b) for (_, a), (_, b) in zip(f32, bf16)) < 0.05  # ... to bf16's precision


@pytest.mark.parametrize(
    "command", [["train", "--set", "steps=2"], ["generate", "--ckpt", "RUN"], ["explain", "hello", "--ckpt", "RUN"]]
)
def test_a_device_this_machine_lacks_is_one_line(capsys, base, cuda_missing, command):
    argv = [str(base) if a == "RUN" else a for a in command] + ["--device", "cuda"]
    if command[0] == "train":
        argv += ["--out", str(base.parent / "new")]
    line = run_error(capsys, argv)
    assert "device cuda is not available here" in line
    assert not (base.parent / "new").exists()


@pytest.mark.parametrize("command", ["explain", "serve"])
def test_the_explanations_say_they_compute_on_the_cpu(capsys, base, monkeypatch, command):
    argv = [command] + (["hello"] if command == "explain" else []) + ["--ckpt", str(base), "--device"]
    if command == "explain":
        assert run_ok(capsys, argv + ["cpu"])[0]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # as on a machine with a GPU
    line = run_error(capsys, argv + ["cuda"])
    assert f"qkv {command} computes on the CPU" in line


def test_an_unknown_device_names_the_choices(capsys, base):
    assert "choose one of auto, cpu, cuda, mps" in run_error(
        capsys, ["generate", "--ckpt", str(base), "--device", "tpu"]
    )


def test_generation_on_the_cpu_device_is_generation(capsys, base, monkeypatch):
    argv = ["generate", "--ckpt", str(base), "--prompt", "the", "--max-new-tokens", "12", "--seed", "3"]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # auto is the CPU, even on a GPU machine
    plain, _ = run_ok(capsys, argv)
    on_cpu, _ = run_ok(capsys, argv + ["--device", "cpu", "--threads", "1"])
    assert plain == on_cpu and len(plain) > len("the\n")


def test_translation_refuses_a_gpu_setting_it_would_ignore(capsys, tmp_path):
    line = run_error(capsys, ["train", "--task", "translate", "--out", str(tmp_path / "mt"), "--precision", "bfloat16"])
    assert "--task translate trains on the CPU in float32" in line


def test_a_bad_thread_count_is_one_line(capsys, base, monkeypatch):
    monkeypatch.setenv("QKV_THREADS", "many")
    assert "QKV_THREADS must be a whole number" in run_error(capsys, ["generate", "--ckpt", str(base)])
