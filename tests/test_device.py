"""Devices and precision (qkv.core.machine.device), device-independent checkpoints and traces: every branch
a CPU can run. The CUDA and MPS branches are reached by monkeypatching availability; nothing here
needs a GPU."""

from __future__ import annotations

import copy

import pytest
import torch
from checkpoint_util import sample_ids, tiny_model

import qkv.core.machine.device as dev
from qkv.core.model.gpt import lm_loss
from qkv.core.see.trace import run_with_trace
from qkv.core.train.checkpoint import load, load_checkpoint, model_tensors, save, to_cpu


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(dev, "_mps_available", lambda: False)


# ---------------------------------------------------------------------------- resolve


def test_auto_is_the_cpu_without_a_gpu(no_gpu):
    assert dev.resolve() == torch.device("cpu")
    assert dev.resolve("auto") == torch.device("cpu")
    assert dev.resolve(" CPU ") == torch.device("cpu")
    assert dev.resolve(torch.device("cpu")) == torch.device("cpu")


def test_auto_prefers_cuda_then_mps(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(dev, "_mps_available", lambda: True)
    assert dev.resolve("auto") == torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert dev.resolve("auto") == torch.device("mps")
    assert dev.resolve("mps") == torch.device("mps")


def test_cuda_index_is_checked(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert dev.resolve("cuda") == torch.device("cuda")
    assert dev.resolve("cuda:1") == torch.device("cuda", 1)
    with pytest.raises(ValueError, match="has 2 CUDA GPU"):
        dev.resolve("cuda:2")


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "mps"])
def test_a_missing_device_is_a_one_line_error(no_gpu, name):
    with pytest.raises(ValueError, match=f"device {name} is not available here") as e:
        dev.resolve(name)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", ["tpu", "gpu", "", "cuda:x", 3])
def test_an_unknown_device_lists_the_choices(name):
    with pytest.raises(ValueError, match="auto, cpu, cuda, mps"):
        dev.resolve(name)


# ---------------------------------------------------------------------------- moves, TF32, fused AdamW


def test_to_device_keeps_float32_and_refuses_a_missing_gpu(no_gpu):
    model, _ = tiny_model()
    assert dev.to_device(model, "cpu") is model
    assert dev.model_device(model) == torch.device("cpu")
    assert all(p.dtype == torch.float32 for p in model.parameters())
    with pytest.raises(ValueError, match="cuda is not available"):
        dev.to_device(model, "cuda")


def test_dtype_round_trip_changes_only_the_rounding():
    model, _ = tiny_model()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.to(torch.bfloat16).float()
    for k, v in model.state_dict().items():
        assert v.dtype == torch.float32
        torch.testing.assert_close(v, before[k].to(torch.bfloat16).float(), rtol=0, atol=0)
        torch.testing.assert_close(v, before[k], rtol=1e-2, atol=1e-6)  # bf16 keeps 8 bits of mantissa


def test_prepare_turns_on_tf32_for_cuda_only():
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
        dev.prepare("cpu")
        assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
        dev.prepare(torch.device("cuda"))  # only flags: no GPU needed
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
        assert torch.backends.mkldnn.matmul.fp32_precision != "tf32"  # the CPU's products stay exact
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn


def test_fused_adamw_on_the_cpu_steps():
    assert dev.fused_adamw("cpu") and dev.fused_adamw("cuda")
    assert not dev.fused_adamw("meta")
    model, _ = tiny_model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=dev.fused_adamw("cpu"))
    before = model.embed.weight.detach().clone()
    lm_loss(model(sample_ids(model)), sample_ids(model)).backward()
    opt.step()
    assert not torch.equal(before, model.embed.weight)


# ---------------------------------------------------------------------------- precision


def test_autocast_dtype_by_device(monkeypatch):
    assert dev.autocast_dtype("cpu", "float32") == torch.float32
    assert dev.autocast_dtype("mps") == torch.float32
    assert dev.autocast_dtype("cpu", "bfloat16") == torch.bfloat16
    assert dev.autocast_dtype("cpu", "fp16") == torch.float16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert dev.autocast_dtype("cuda") == torch.bfloat16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert dev.autocast_dtype("cuda") == torch.float16
    with pytest.raises(ValueError, match="unknown precision 'half'"):
        dev.autocast_dtype("cpu", "half")


def test_float32_on_the_cpu_is_a_no_op():
    p = dev.Precision("cpu", "float32")
    assert p.dtype == torch.float32 and p.scaler is None
    model, _ = tiny_model()
    with p.autocast():
        assert model(sample_ids(model)).dtype == torch.float32
    with dev.autocast("cpu", enabled=False, dtype=torch.bfloat16):
        assert model(sample_ids(model)).dtype == torch.float32


def _train(model, precision: dev.Precision, steps: int = 3) -> list[float]:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
    x = sample_ids(model)
    losses = []
    for _ in range(steps):
        with precision.autocast():
            logits = model(x)
            loss = lm_loss(logits, x)
        opt.zero_grad(set_to_none=True)
        precision.backward(loss)
        precision.step(opt, model.parameters(), grad_clip=1.0)
        losses.append(loss.item())
    return losses, logits.dtype


@pytest.mark.parametrize("kw", [{}, {"pos": "rope"}])
def test_bf16_autocast_training_matches_float32(kw):
    """A training step under CPU bf16 autocast (the CUDA path's smoke test): the products run in bf16,
    the weights, gradients and AdamW's moments stay float32, and the losses follow float32's."""
    model, _ = tiny_model(**kw)
    twin = copy.deepcopy(model)
    fp32, dtype32 = _train(model, dev.Precision("cpu", "float32"))
    bf16, dtype16 = _train(twin, dev.Precision("cpu", "bfloat16"))
    assert dtype32 == torch.float32 and dtype16 == torch.bfloat16  # autocast ran
    assert all(p.dtype == torch.float32 and p.grad.dtype == torch.float32 for p in twin.parameters())
    for a, b in zip(fp32, bf16):
        assert abs(a - b) < 0.02 * a + 0.01, (fp32, bf16)
    assert bf16[-1] < bf16[0]  # it learns


def test_fp16_grad_scaler_skips_an_overflowing_step():
    p = dev.Precision("cpu", "float16")
    assert p.scaler is not None and p.scaler.is_enabled()
    model, _ = tiny_model()
    losses, dtype = _train(model, p, steps=2)
    assert dtype == torch.float16 and all(p.dtype == torch.float32 for p in model.parameters())
    assert losses[1] < losses[0]
    scale = p.scaler.get_scale()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with p.autocast():
        loss = lm_loss(model(sample_ids(model)), sample_ids(model)) * float("inf")
    p.backward(loss)
    p.step(opt, model.parameters(), grad_clip=1.0)
    assert p.scaler.get_scale() == scale / 2  # the scale backs off
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k  # and the step was skipped


# ---------------------------------------------------------------------------- checkpoints


def test_to_cpu_copies_nothing_on_the_cpu():
    t = torch.randn(3, 4)
    assert to_cpu(t).data_ptr() == t.data_ptr()  # the same storage: detach() makes only a new view
    assert to_cpu(t.T).is_contiguous() and torch.equal(to_cpu(t.T), t.T)


def test_a_meta_model_is_refused_before_anything_is_written(tmp_path):
    model, tok = tiny_model()
    model.to("meta")
    with pytest.raises(ValueError, match="meta device"):
        save(tmp_path / "ck", model, tok)
    assert not (tmp_path / "ck").exists() or not any((tmp_path / "ck").iterdir())


def test_a_meta_model_filled_in_saves(tmp_path):
    """The usual way out of meta: to_empty on a real device, then weights from somewhere."""
    model, tok = tiny_model()
    state = copy.deepcopy(model.state_dict())
    model.to("meta")
    model.to_empty(device="cpu")
    model.load_state_dict(state)
    save(tmp_path / "ck", model, tok)
    loaded, _ = load(tmp_path / "ck")
    for k, v in loaded.state_dict().items():
        assert torch.equal(v, state[k]), k


def test_a_bf16_model_saves_and_loads_as_float32(tmp_path):
    model, tok = tiny_model()
    model.to(torch.bfloat16)
    save(tmp_path / "ck", model, tok)
    loaded, _ = load(tmp_path / "ck", device="cpu")
    for k, v in loaded.state_dict().items():
        assert v.dtype == torch.float32 and v.device.type == "cpu"
        assert torch.equal(v, model.state_dict()[k].float()), k


def test_non_contiguous_weights_load_back_identical(tmp_path):
    model, tok = tiny_model()
    W = model.blocks[0].attn.W_O.weight
    model.blocks[0].attn.W_O.weight = torch.nn.Parameter(W.detach().T.contiguous().T)  # same values, strides swapped
    assert not model.blocks[0].attn.W_O.weight.is_contiguous()
    save(tmp_path / "ck", model, tok)
    loaded, _ = load(tmp_path / "ck")
    for k, v in loaded.state_dict().items():
        assert torch.equal(v, model.state_dict()[k]), k
    x = sample_ids(model)
    model.eval()
    torch.testing.assert_close(loaded(x), model(x), rtol=0, atol=0)


def test_load_refuses_a_missing_device(tmp_path, no_gpu):
    model, tok = tiny_model()
    save(tmp_path / "ck", model, tok)
    with pytest.raises(ValueError, match="cuda is not available"):
        load_checkpoint(tmp_path / "ck", device="cuda")
    assert dev.model_device(load_checkpoint(tmp_path / "ck", device="auto").model).type == "cpu"


def test_saved_tensors_are_on_the_cpu():
    model, _ = tiny_model()
    tensors = model_tensors(model)
    assert all(t.device.type == "cpu" and t.is_contiguous() for t in tensors.values())
    assert tensors["embed.weight"].data_ptr() == model.embed.weight.data_ptr()  # no copy on the CPU


# ---------------------------------------------------------------------------- traces


def test_a_cpu_trace_holds_the_model_tensors_themselves():
    model, _ = tiny_model()
    model.eval()
    ids = sample_ids(model)
    logits, tr = run_with_trace(model, ids)
    assert tr["logits"] is logits  # no copies on the CPU
    assert all(t.device.type == "cpu" for t in tr.values())
    with torch.no_grad():
        torch.testing.assert_close(logits, model(ids), rtol=1e-5, atol=1e-6)


def test_a_bf16_model_traces_with_ids_of_any_dtype():
    model, _ = tiny_model()
    model.to(torch.bfloat16).eval()
    logits, tr = run_with_trace(model, sample_ids(model).int())
    # the trace holds float32 copies of the model's bfloat16 numbers (NumPy and the analysis have no bfloat16):
    # exact copies, each a bfloat16 number
    assert logits.dtype == torch.float32 and tr["pattern", 0].dtype == torch.float32
    assert torch.equal(tr["pattern", 0], tr["pattern", 0].bfloat16().float())
    assert torch.equal(logits, logits.bfloat16().float())
    torch.testing.assert_close(tr["pattern", 0].float().sum(-1), torch.ones(2, 2, model.cfg.n_ctx), rtol=0, atol=2e-2)
