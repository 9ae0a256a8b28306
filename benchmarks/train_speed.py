"""Training speed: tokens/s of qkv and of Hugging Face GPT2LMHeadModel, same config, same weights.

Both run the same step: forward, next-token cross-entropy on the logits, backward, gradient
clipping and the same fused AdamW, on the same batches of tiny Shakespeare; only the model
differs. Each pair computes the same function from the same weights, once with GPT-2's tanh
GELU and once with the exact GELU (qkv's default); the last row compares the two defaults.
Rounds alternate between the two; the medians and their ratio are printed. With --memory, each
model also trains in a fresh process and its peak resident memory is printed.

    python benchmarks/train_speed.py [--presets baby small] [--steps 10] [--rounds 7] [--memory]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import torch
import torch.nn.functional as F
from common import gpt2_shaped, interleaved, machine, median, model_pair, peak_rss_mib, quiet_transformers, text_ids

import qkv

BATCH = {"baby": 12, "small": 12}
D_VOCAB = 65  # tiny Shakespeare's characters


def step_fn(model, hf: bool, ids: torch.Tensor, batch: int, n_ctx: int, seed: int):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1, fused=True)
    g = torch.Generator().manual_seed(seed)
    model.train()

    def step():
        starts = torch.randint(len(ids) - n_ctx - 1, (batch,), generator=g)
        window = ids[starts[:, None] + torch.arange(n_ctx + 1)]  # (B, n_ctx + 1)
        x, y = window[:, :-1], window[:, 1:]
        logits = model(x).logits if hf else model(x)  # (B, n_ctx, d_vocab)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    return step


def measure(preset: str, steps: int, rounds: int) -> dict:
    """tokens/s of four contestants: qkv and HF with GPT-2's tanh GELU, and with the exact GELU
    (qkv's default). Each pair computes the same function from the same weights."""
    ids, batch, fns = text_ids(D_VOCAB), BATCH[preset], {}
    for act in ("gelu_tanh", "gelu"):
        cfg = gpt2_shaped(preset, D_VOCAB, activation=act)
        ours, theirs = model_pair(cfg)
        fns[f"qkv {act}"] = step_fn(ours, False, ids, batch, cfg.n_ctx, 1)
        fns[f"hf {act}"] = step_fn(theirs, True, ids, batch, cfg.n_ctx, 1)
    for fn in fns.values():  # warm up: allocator, kernels, optimizer state
        for _ in range(3):
            fn()
    times = interleaved({k: (lambda f=f: [f() for _ in range(steps)]) for k, f in fns.items()}, rounds)
    tokens = steps * batch * cfg.n_ctx
    return {name: tokens / median(t) for name, t in times.items()}


def peak_memory(preset: str, which: str, steps: int) -> float:
    """Peak RSS (MiB) of a fresh process that builds only one model and trains it `steps` steps."""
    cmd = [sys.executable, __file__, "--only", which, "--presets", preset, "--steps", str(steps)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def train_only(preset: str, which: str, steps: int) -> None:
    cfg = gpt2_shaped(preset, D_VOCAB)
    torch.manual_seed(0)
    if which == "qkv":
        model = qkv.GPT(cfg)
    else:
        quiet_transformers()
        from transformers import GPT2Config, GPT2LMHeadModel

        model = GPT2LMHeadModel(
            GPT2Config(
                vocab_size=cfg.d_vocab,
                n_positions=cfg.n_ctx,
                n_embd=cfg.d_model,
                n_layer=cfg.n_layers,
                n_head=cfg.n_heads,
                resid_pdrop=0,
                embd_pdrop=0,
                attn_pdrop=0,
                bos_token_id=None,
                eos_token_id=None,
            )
        )
    step = step_fn(model, which == "hf", text_ids(D_VOCAB), BATCH[preset], cfg.n_ctx, 1)
    for _ in range(steps):
        step()
    print(peak_rss_mib())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", nargs="+", default=["baby", "small"])
    ap.add_argument("--steps", type=int, default=10, help="training steps per round")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--memory", action="store_true", help="also measure peak memory (fresh processes)")
    ap.add_argument("--memory-only", action="store_true", help="only measure peak memory")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", choices=("qkv", "hf"), help=argparse.SUPPRESS)  # one model, print peak RSS
    args = ap.parse_args()
    if args.only:
        return train_only(args.presets[0], args.only, args.steps)
    print(f"training speed, batch 12, {machine()}")
    print(f"{'preset':<8}{'activation':<34}{'qkv tok/s':>11}{'HF tok/s':>10}{'qkv/HF':>8}")
    results = {preset: {} for preset in args.presets}
    for preset in [] if args.memory_only else args.presets:
        r = measure(preset, args.steps, args.rounds)
        results[preset] = r
        rows = [
            ("GPT-2's tanh GELU, both", r["qkv gelu_tanh"], r["hf gelu_tanh"]),
            ("exact GELU (qkv's default), both", r["qkv gelu"], r["hf gelu"]),
            ("defaults: qkv exact, HF GPT-2 tanh", r["qkv gelu"], r["hf gelu_tanh"]),
        ]
        for label, q, h in rows:
            print(f"{preset:<8}{label:<34}{q:>11,.0f}{h:>10,.0f}{q / h:>7.2f}x", flush=True)
    if args.memory or args.memory_only:
        print("\npeak resident memory of a fresh process training 20 steps (MiB)")
        print(f"{'preset':<8}{'qkv':>10}{'HF':>10}")
        for preset in args.presets:
            q, h = peak_memory(preset, "qkv", 20), peak_memory(preset, "hf", 20)
            results[preset].update(qkv_peak_mib=q, hf_peak_mib=h)
            print(f"{preset:<8}{q:>10,.0f}{h:>10,.0f}", flush=True)
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
