"""GPU training speed: tokens/s and MFU of qkv and of Hugging Face GPT2LMHeadModel, same weights.

Both models hold identical weights (common.model_pair) and run the same step on the same batches:
forward under autocast (bf16 where the GPU has it, else fp16 with a GradScaler; qkv.core.machine.device.
Precision), next-token cross-entropy, backward, gradient clipping to 1.0 and the fused AdamW, with
TF32 on for what stays float32. Rounds alternate between the two; the medians and their ratio are
printed. Shapes: the `small` preset with GPT-2's choices (65 characters, n_ctx 256) and GPT-2 124M
(12 layers, 12 heads, d_model 768, n_ctx 1024, vocab 50257).

MFU (model FLOPs utilisation) = achieved model FLOP/s / the device's peak dense bf16 FLOP/s, with
training FLOPs per token = 6 N + 12 L d_model T (N: the parameters used in matrix products, i.e.
all but the position table; 12 L d_model T: attention's q k^T and A v, forward and backward,
counted in full as PaLM and nanoGPT do). The peak comes from PEAK_TFLOPS by the GPU's name, or
--peak-tflops.

UNTESTED ON A GPU: this script was written and run only in --smoke mode on a CPU (no GPU was lent
to the session that wrote it); the GPU figures have not been measured.

    python benchmarks/gpu_train.py                     # auto device (CUDA), both shapes
    python benchmarks/gpu_train.py --shapes gpt2 --batch 16 --steps 10 --rounds 5
    python benchmarks/gpu_train.py --smoke             # tiny shapes on the CPU: checks the script runs
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F
from common import gpt2_shaped, interleaved, machine, median, model_pair

import qkv
from qkv.core.machine.device import Precision, fused_adamw, prepare, resolve

# dense (no sparsity) bf16 tensor-core peaks in TFLOP/s, from the vendors' data sheets; the first
# name that occurs in torch.cuda.get_device_name() wins, so the more specific names come first
PEAK_TFLOPS = [
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H200", 989.0),
    ("H100", 989.0),
    ("GH200", 989.0),
    ("A100", 312.0),
    ("L40S", 362.0),
    ("L40", 181.0),
    ("L4", 121.0),
    ("A10G", 70.0),
    ("A10", 125.0),
    ("RTX 4090", 165.0),
    ("RTX 3090", 71.0),
    ("V100", 125.0),
    ("T4", 65.0),  # V100, T4: fp16 (no bf16)
]

SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}

# name -> (model sizes, d_vocab, batch); batch is per step, the same for both models
SHAPES = {
    "small": (None, 65, 64),  # the preset, GPT-2's choices, tiny Shakespeare's 65 characters
    "gpt2": (dict(n_layers=12, n_heads=12, d_model=768, n_ctx=1024), 50257, 16),
}
SMOKE = {  # --smoke: shapes a CPU trains in seconds, the same code paths
    "small": (dict(n_layers=2, n_heads=2, d_model=32, n_ctx=32), 65, 4),
    "gpt2": (dict(n_layers=2, n_heads=2, d_model=32, n_ctx=64), 50257, 2),
}


def config(shape: str, smoke: bool) -> tuple[qkv.ModelConfig, int]:
    sizes, d_vocab, batch = (SMOKE if smoke else SHAPES)[shape]
    if sizes is None:
        return gpt2_shaped(shape, d_vocab), batch
    cfg = gpt2_shaped("small", d_vocab)
    return qkv.ModelConfig(
        **{**cfg.to_dict(), **sizes, "d_mlp": 4 * sizes["d_model"], "d_head": sizes["d_model"] // sizes["n_heads"]}
    ), batch


def peak_tflops(device: torch.device, override: float | None) -> float | None:
    if override:
        return override
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    return next((peak for key, peak in PEAK_TFLOPS if key in name), None)


def flops_per_token(model, cfg) -> float:
    """6 N + 12 L d_model T: the matrix products of a training step (forward 1/3, backward 2/3)."""
    n = sum(p.numel() for name, p in model.named_parameters() if "pos_embed" not in name)  # tied: counted once
    return 6 * n + 12 * cfg.n_layers * cfg.d_model * cfg.n_ctx


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def step_fn(model, hf: bool, batch: int, cfg, device, precision_name: str, seed: int):
    """One training step on a fresh random batch (drawn on the device: no host copies in the loop)."""
    precision = Precision(device, precision_name)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=fused_adamw(device))
    g = torch.Generator(device=device).manual_seed(seed)
    model.train()

    def step():
        window = torch.randint(cfg.d_vocab, (batch, cfg.n_ctx + 1), device=device, generator=g)  # (B, n_ctx + 1)
        x, y = window[:, :-1], window[:, 1:]
        with precision.autocast():
            logits = model(x).logits if hf else model(x)  # (B, n_ctx, d_vocab)
            loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())  # float32 under autocast
        optimizer.zero_grad(set_to_none=True)
        precision.backward(loss)
        precision.step(optimizer, model.parameters(), 1.0)

    return step, precision


@torch.no_grad()
def same_function(ours, theirs, cfg, device) -> float:
    """The largest logit difference of the two models on one batch, in float32: they are one function."""
    ours.eval(), theirs.eval()
    x = torch.randint(
        cfg.d_vocab, (2, cfg.n_ctx), device=device, generator=torch.Generator(device=device).manual_seed(0)
    )
    return (ours(x) - theirs(x).logits).abs().max().item()


def measure(shape: str, args, device: torch.device) -> dict:
    cfg, batch = config(shape, args.smoke)
    batch = args.batch or batch
    ours, theirs = model_pair(cfg)
    if hasattr(theirs.config, "_attn_implementation"):
        attn_impl = theirs.config._attn_implementation
    else:
        attn_impl = "?"
    ours, theirs = ours.to(device), theirs.to(device)
    diff = same_function(ours, theirs, cfg, device)
    fns, precision = {}, None
    for name, model, hf in (("qkv", ours, False), ("hf", theirs, True)):
        step, precision = step_fn(model, hf, batch, cfg, device, args.precision, 1)
        for _ in range(args.warmup):  # the allocator, cuBLAS/flash kernels' choice, AdamW's state
            step()
        synchronize(device)

        def run(step=step):
            for _ in range(args.steps):
                step()
            synchronize(device)

        fns[name] = run
    times = interleaved(fns, args.rounds)
    tokens = args.steps * batch * cfg.n_ctx
    tok_s = {name: tokens / median(t) for name, t in times.items()}
    flops = flops_per_token(ours, cfg)
    peak = peak_tflops(device, args.peak_tflops)
    mfu = {name: (v * flops / (peak * 1e12) if peak else None) for name, v in tok_s.items()}
    return {
        "shape": shape,
        "n_params": ours.num_params(),
        "batch": batch,
        "n_ctx": cfg.n_ctx,
        "precision": precision.name,
        "hf_attention": attn_impl,
        "max_logit_diff_fp32": diff,
        "flops_per_token": flops,
        "peak_tflops": peak,
        "tokens_per_s": tok_s,
        "mfu": mfu,
        "seconds": {k: sorted(v) for k, v in times.items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto", help="auto, cuda, cuda:N, mps or cpu (default auto)")
    ap.add_argument("--shapes", nargs="+", choices=list(SHAPES), default=list(SHAPES))
    ap.add_argument("--batch", type=int, help="sequences per step (default: small 64, gpt2 16)")
    ap.add_argument("--steps", type=int, default=10, help="timed training steps per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps per model first")
    ap.add_argument("--precision", default="auto", help="auto (CUDA: bf16, else fp16), bfloat16, float16 or float32")
    ap.add_argument(
        "--peak-tflops", type=float, help="the device's peak dense bf16 TFLOP/s, for MFU (default: by name)"
    )
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU, 2 steps x 2 rounds, bf16 autocast")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.device, args.steps, args.rounds, args.warmup = "cpu", 2, 2, 1
        args.precision = "bfloat16" if args.precision == "auto" else args.precision
    device = resolve(args.device)
    prepare(device)
    torch.manual_seed(0)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    print(f"training speed on {name}{' (smoke: tiny shapes)' if args.smoke else ''}, {machine()}")
    print(
        f"{'shape':<7}{'params':>9}{'batch x T':>11}{'prec':>6}{'qkv tok/s':>12}{'HF tok/s':>12}{'qkv/HF':>8}"
        f"{'qkv MFU':>9}{'HF MFU':>8}  logits |diff| fp32"
    )
    results = []
    for shape in args.shapes:
        r = measure(shape, args, device)
        results.append(r)
        q, h = r["tokens_per_s"]["qkv"], r["tokens_per_s"]["hf"]
        pct = lambda m: f"{100 * m:.1f}%" if m is not None else "n/a"
        print(
            f"{shape:<7}{r['n_params'] / 1e6:>8.2f}M{r['batch']:>5} x {r['n_ctx']:<4}{SHORT[r['precision']]:>6}"
            f"{q:>12,.0f}{h:>12,.0f}{q / h:>7.2f}x{pct(r['mfu']['qkv']):>9}{pct(r['mfu']['hf']):>8}"
            f"  {r['max_logit_diff_fp32']:.1e}",
            flush=True,
        )
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
