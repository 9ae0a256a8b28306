"""--precision auto on the CPU: bfloat16 autocast over float32 weights where the CPU multiplies bfloat16
natively (AMX or AVX-512 BF16), float32 elsewhere; the run's first line and config.json say which and
why; and a bf16 run's loss curve follows float32's within bfloat16's rounding."""

from __future__ import annotations

import json

import pytest
import torch
from cli_util import run_ok, step_losses

from qkv.core.machine import cpu
from qkv.core.machine import device as dev
from qkv.core.train.lm import train

SHORT = ["steps=3", "eval_interval=3", "eval_steps=1", "d_model=16", "n_ctx=16", "batch_size=4", "n_layers=1"]


@pytest.mark.parametrize(
    ("support", "width", "dtype", "why"),
    [
        ("amx", None, torch.bfloat16, "cpu_amx"),
        ("amx", 64, torch.bfloat16, "cpu_amx"),  # AMX pays at every width
        ("avx512", None, torch.bfloat16, "cpu_avx512"),
        ("avx512", dev.AVX512_BF16_MIN_WIDTH, torch.bfloat16, "cpu_avx512"),
        ("avx512", dev.AVX512_BF16_MIN_WIDTH - 1, torch.float32, "cpu_avx512_narrow"),
        ("none", None, torch.float32, "cpu_none"),
        ("none", 4096, torch.float32, "cpu_none"),
    ],
)
def test_auto_on_the_cpu_follows_its_bf16_and_the_width(monkeypatch, support, width, dtype, why):
    monkeypatch.setattr(cpu, "bf16_support", lambda flags=None: support)
    p = dev.Precision("cpu", width=width)
    assert (p.dtype, p.why) == (dtype, why)
    assert p.record() == {"name": p.name, "why": why, "cpu_bf16": support}
    asked = dev.Precision("cpu", "float32", width)  # an explicit float32 is float32 on every CPU
    assert (asked.dtype, asked.why) == (torch.float32, "asked")
    assert dev.Precision("cpu", "bfloat16", 16).dtype == torch.bfloat16  # an explicit bfloat16 at any width


WIDE = f"d_model={dev.AVX512_BF16_MIN_WIDTH}"  # wide enough for AVX-512 BF16 to pay


@pytest.mark.parametrize(
    ("support", "width", "line", "name"),
    [
        ("avx512", WIDE, "precision: bfloat16 autocast, float32 weights (this CPU has AVX-512 BF16)", "bfloat16"),
        (
            "avx512",
            "d_model=16",
            "precision: float32 (this CPU has AVX-512 BF16 but no AMX, and at d_model < 256 bfloat16 does not pay "
            "there)",
            "float32",
        ),
        (
            "amx",
            "d_model=16",
            "precision: bfloat16 autocast, float32 weights (this CPU has AMX, matrix units that multiply bfloat16)",
            "bfloat16",
        ),
        (
            "none",
            WIDE,
            "precision: float32 (this CPU has neither AMX nor AVX-512 BF16, so bfloat16 would be slower here)",
            "float32",
        ),
    ],
)
def test_the_run_says_first_what_auto_chose_and_config_records_it(
    capsys, monkeypatch, text_file, tmp_path, support, width, line, name
):
    monkeypatch.setattr(cpu, "bf16_support", lambda flags=None: support)
    argv = ["train", "--text", str(text_file), "--out", str(tmp_path / "run"), "--device", "cpu"]
    _, err = run_ok(capsys, argv + [a for kv in [*SHORT, width] for a in ("--set", kv)])
    assert err.splitlines()[0] == line
    record = json.loads((tmp_path / "run" / "config.json").read_text())["precision"]
    why = "cpu_avx512_narrow" if name == "float32" and support == "avx512" else f"cpu_{support}"
    assert record == {"name": name, "why": why, "cpu_bf16": support}


def test_the_first_line_speaks_chinese(capsys, monkeypatch, text_file, tmp_path):
    monkeypatch.setattr(cpu, "bf16_support", lambda flags=None: "avx512")
    argv = ["train", "--text", str(text_file), "--out", str(tmp_path / "run"), "--device", "cpu", "--lang", "zh"]
    _, err = run_ok(capsys, argv + [a for kv in [*SHORT, WIDE] for a in ("--set", kv)])
    assert err.splitlines()[0] == "精度：bfloat16 自动混合精度，权重仍为 float32（这颗 CPU 有 AVX-512 BF16 指令）"


def test_an_asked_precision_is_not_announced(capsys, text_file, tmp_path):
    argv = [
        "train",
        "--text",
        str(text_file),
        "--out",
        str(tmp_path / "run"),
        "--device",
        "cpu",
        "--precision",
        "float32",
    ]
    _, err = run_ok(capsys, argv + [a for kv in SHORT for a in ("--set", kv)])
    assert not err.startswith("precision:")
    assert json.loads((tmp_path / "run" / "config.json").read_text())["precision"]["why"] == "asked"


# bfloat16 keeps 8 significant bits: rounding a number to it errs by at most u = 2**-8 of its size (0.39%).
# Autocast rounds the inputs of every matrix product to bf16 and adds up in float32, so a loss computed
# that way differs from float32's by a few u of the products' terms, which mostly cancel in the sum; and 30
# small steps do not let the two runs drift apart by more. So every step's loss must stay within u of
# float32's (relative): a bound bf16's rounding meets (measured here: 5e-5 relative, AVX-512 BF16) and that
# a real fault (float16's overflow, weights kept in bf16, a wrong cast) breaks at once.
U_BF16 = 2.0**-8


@pytest.mark.slow
def test_a_bf16_loss_curve_follows_float32s(text_file, tmp_path):
    settings = ["steps=30", "eval_interval=30", "eval_steps=1", "log_interval=1", "n_ctx=32", "d_model=64"]
    for precision in ("float32", "bfloat16"):
        train(
            text_path=text_file,
            out=tmp_path / precision,
            overrides=settings,
            progress=False,
            device="cpu",
            precision=precision,
        )
    f32, bf16 = step_losses(tmp_path / "float32"), step_losses(tmp_path / "bfloat16")
    assert [s for s, _ in f32] == [s for s, _ in bf16] == list(range(1, 31))
    assert f32 != bf16  # autocast did compute in bf16
    assert all(abs(a - b) <= U_BF16 * a for (_, a), (_, b) in zip(f32, bf16)), (f32, bf16)
    assert bf16[-1][1] < bf16[0][1] - 0.3  # it learned: the comparison is not of two flat curves
