"""Devices and precision: where a model runs (CPU, CUDA, Apple's MPS) and in which float type.

    device = resolve("auto")             # CUDA if there is one, then MPS, then the CPU
    prepare(device)                      # CUDA: TF32 matrix products (float32 inputs, 10-bit mantissa inside)
    model = to_device(model, device)
    precision = Precision(device)        # CUDA: bf16 autocast (fp16 + a GradScaler where bf16 is missing)
    with precision.autocast():
        loss = lm_loss(model(x.to(device)), y.to(device))
    precision.backward(loss)
    precision.step(optimizer, model.parameters(), grad_clip)

Mixed precision keeps the weights (the "master weights") and AdamW's moments in float32: autocast
only runs the matrix products, attention included, in bf16/fp16 and keeps softmax, LayerNorm and
the loss in float32. fp16's small range makes small gradients underflow to 0, so its loss is
multiplied by a scale before backward and the gradients divided by it before the step (a
GradScaler, which also skips a step whose gradients overflowed); bf16 has float32's range and
needs no scaling. On the CPU, auto is bf16 autocast where the CPU multiplies bfloat16 natively (AMX
or AVX-512 BF16: qkv.core.machine.cpu.bf16_support) and float32 elsewhere, where every bf16 product
would be widened to float32 first and run slower than float32 itself (benchmarks/cpu_precision.py).
"""

from __future__ import annotations

from contextlib import nullcontext

import torch

from qkv.core.io.refusal import Refusal
from qkv.core.machine import cpu

CHOICES = ("auto", "cpu", "cuda", "mps")
PRECISIONS = ("auto", "float32", "bfloat16", "float16")
_DTYPES = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "fp32": torch.float32,
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
}


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def resolve(name: str | torch.device = "auto") -> torch.device:
    """The device for a --device value: auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N or mps.

    Asking for a device this machine lacks is a one-line ValueError, never a silent fall-back."""
    if isinstance(name, torch.device):
        name = str(name)
    if not isinstance(name, str):
        raise Refusal.of("errors.device_type", choices=list(CHOICES), got=repr(name))
    name = name.strip().lower()
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps") if _mps_available() else torch.device("cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "mps":
        if not _mps_available():
            raise Refusal.of("errors.device_no_mps")
        return torch.device("mps")
    kind, _, index = name.partition(":")
    if kind == "cuda" and (not index or index.isdigit()):
        if not torch.cuda.is_available():
            raise Refusal.of("errors.device_no_cuda", name=name)
        if index and int(index) >= torch.cuda.device_count():
            raise Refusal.of("errors.device_no_gpu", name=name, n=torch.cuda.device_count())
        return torch.device(name)
    raise Refusal.of("errors.device_unknown", name=repr(name), choices=list(CHOICES))


def model_device(model: torch.nn.Module) -> torch.device:
    """The device a model's weights are on (the CPU for a model without parameters)."""
    p = next(model.parameters(), None)
    return p.device if p is not None else torch.device("cpu")


def to_device(model: torch.nn.Module, device) -> torch.nn.Module:
    """Move a model's weights and buffers to `device` (a torch.device or a --device name); returns it.

    The float type stays: the master weights remain float32 whatever autocast computes in."""
    return model.to(device if isinstance(device, torch.device) else resolve(device))


def prepare(device) -> None:
    """Per-process settings for fast float32 work on `device`: on CUDA, TF32 in matrix products and
    cuDNN (Ampere and later: float32 in and out, a 10-bit mantissa inside; about 8x the float32 rate).
    Nothing on the CPU or MPS (the CPU's float32 products stay exact)."""
    if torch.device(device).type == "cuda":
        # the legacy switches touch CUDA only; torch.set_float32_matmul_precision("high") would also
        # switch the CPU's oneDNN products to TF32 where the CPU has it
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def fused_adamw(device) -> bool:
    """Whether AdamW's fused kernel (fused=True: one kernel for all parameters) runs on `device`:
    CPU, CUDA and MPS in torch >= 2.4 (torch's own list is asked when it has one)."""
    kind = torch.device(device).type
    try:
        from torch.optim.optimizer import _get_fused_kernels_supported_devices

        return kind in _get_fused_kernels_supported_devices()
    except ImportError:  # an older or newer torch without that list
        return kind in ("cpu", "cuda", "mps")


# On a CPU with AVX-512 BF16 but no AMX, bf16 autocast pays for its casts only on wide enough matrices: measured
# on this project's AMD EPYC (torch 2.13, one thread), d_model 128 (baby, fast) trained at 0.84-0.98x float32's
# speed and d_model 384 (small) at 1.53x (benchmarks/cpu_precision.py, docs/devices.md). AMX pays at every width.
AVX512_BF16_MIN_WIDTH = 256


def autocast_dtype(device, precision: str = "auto", width: int | None = None) -> torch.dtype:
    """The float type a training step computes its matrix products in.

    auto: bf16 on CUDA where the GPU supports it (Ampere and later), else fp16; on the CPU bf16 where
    it has AMX, or AVX-512 BF16 and a model at least AVX512_BF16_MIN_WIDTH wide (`width`, its d_model;
    None: wide), else float32; float32 on MPS. float32 turns autocast off; bfloat16 / float16 ask for
    that type (float16 on the CPU: a smoke test of the GPU's path)."""
    if precision not in PRECISIONS and precision not in _DTYPES:
        raise ValueError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    if precision == "auto":
        why = auto_reason(device, width)
        if why == "cuda_fp16":
            return torch.float16
        return torch.bfloat16 if why in ("cuda_bf16", "cpu_amx", "cpu_avx512") else torch.float32
    return _DTYPES[precision]


def auto_reason(device, width: int | None = None) -> str:
    """Why --precision auto computes as it does on `device`: cuda_bf16 / cuda_fp16 (the GPU has bf16 or
    not), cpu_amx / cpu_avx512 (bf16: the CPU multiplies it natively), cpu_avx512_narrow (float32: AVX-512
    BF16 without AMX, a model narrower than AVX512_BF16_MIN_WIDTH), cpu_none (float32: no native bf16),
    mps (float32)."""
    kind = torch.device(device).type
    if kind == "cuda":
        return "cuda_bf16" if torch.cuda.is_bf16_supported() else "cuda_fp16"
    if kind != "cpu":
        return "mps"
    support = cpu.bf16_support()
    if support == "avx512" and width is not None and width < AVX512_BF16_MIN_WIDTH:
        return "cpu_avx512_narrow"
    return f"cpu_{support}"


def autocast(device, enabled: bool = True, dtype: torch.dtype | None = None):
    """A context in which `device`'s matrix products run in its autocast type (see autocast_dtype);
    a no-op context when that type is float32 or enabled is False."""
    dtype = dtype or autocast_dtype(device)
    kind = torch.device(device).type
    if not enabled or dtype == torch.float32:
        return nullcontext()
    return torch.autocast(kind, dtype=dtype)


class Precision:
    """How a training step computes: float32, or bf16/fp16 autocast over float32 master weights.

    fp16 brings a GradScaler: backward() scales the loss, step() unscales the gradients (before
    clipping, so the clip sees true norms), steps unless they overflowed, and updates the scale.
    """

    def __init__(self, device, precision: str = "auto", width: int | None = None):
        self.device, self.asked = torch.device(device), precision
        self.dtype = autocast_dtype(self.device, precision, width)  # width: the model's d_model (autocast_dtype)
        self.scaler = torch.amp.GradScaler(self.device.type) if self.dtype == torch.float16 else None
        self.why = auto_reason(self.device, width) if precision == "auto" else "asked"  # the run's first line says it

    def for_width(self, width: int) -> Precision:
        """The same request for a model `width` (d_model) wide: auto may choose otherwise (autocast_dtype)."""
        return Precision(self.device, self.asked, width)

    def record(self) -> dict:
        """What config.json records: the float type, why it was chosen, and the CPU's bf16 (cpu.bf16_support)."""
        cpu_bf16 = cpu.bf16_support() if self.device.type == "cpu" else None
        return {"name": self.name, "why": self.why, "cpu_bf16": cpu_bf16}

    @property
    def name(self) -> str:
        return {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16"}[self.dtype]

    def __repr__(self) -> str:
        return f"Precision({self.device}, {self.name}{', GradScaler' if self.scaler else ''})"

    def autocast(self):
        """The context for forward passes (training and evaluation; the loss included)."""
        return autocast(self.device, dtype=self.dtype)

    def backward(self, loss: torch.Tensor) -> None:
        (self.scaler.scale(loss) if self.scaler is not None else loss).backward()

    def step(self, optimizer: torch.optim.Optimizer, parameters=None, grad_clip: float = 0.0) -> None:
        """Clip the gradients' global norm to grad_clip (if > 0) and step the optimizer."""
        if self.scaler is not None:
            self.scaler.unscale_(optimizer)  # the gradients in true units, for the clip
        if grad_clip > 0 and parameters is not None:
            torch.nn.utils.clip_grad_norm_(parameters, grad_clip)
        if self.scaler is not None:
            self.scaler.step(optimizer)  # skipped when a gradient is inf or nan
            self.scaler.update()
        else:
            optimizer.step()
