"""What seeing through costs: a full run_with_trace next to a plain forward, and `explain`'s time.

The `small` preset's shape at 256 tokens, batch 1, evaluation mode. The plain forward uses the
fused attention kernel; the trace takes the explicit path and keeps every activation. Peak
memory is measured in a fresh process for each (VmHWM). Then `explain` on a 64-token sentence
(the `baby` shape), after the model is loaded.

    python benchmarks/trace_overhead.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import torch
from common import interleaved, machine, median, peak_rss_mib

import qkv

T = 256


def small_model() -> qkv.GPT:
    torch.manual_seed(0)
    sizes = {k: v for k, v in qkv.PRESETS["small"].model.items() if not k.startswith("dropout")}
    return qkv.GPT(qkv.ModelConfig(d_vocab=65, **sizes)).eval()


def ids() -> torch.Tensor:
    return torch.randint(0, 65, (1, T), generator=torch.Generator().manual_seed(0))


def one(which: str) -> None:
    """Build the model, run one pass of `which`, print the process's peak memory."""
    model, x = small_model(), ids()
    with torch.inference_mode():
        model(x) if which == "forward" else model.run_with_trace(x)
    print(peak_rss_mib())


def explain_time(rounds: int) -> float | None:
    try:
        from qkv.presentation.explanation import explain
    except ImportError:
        return None
    text = "患者 服用 华法林 后 出现 黑便 ， 医生 让 他 停药 。 " * 3
    text = text[:64]
    tok = qkv.train_tokenizer("char", text)
    torch.manual_seed(0)
    sizes = {k: v for k, v in qkv.PRESETS["baby"].model.items() if not k.startswith("dropout")}
    model = qkv.GPT(qkv.ModelConfig(d_vocab=tok.vocab_size, **sizes)).eval()
    explain(model, tok, text, layer=0, head=0)  # warm up
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        explain(model, tok, text).to_text()
        explain(model, tok, text, layer=1, head=2).to_text()
        times.append((time.perf_counter() - t) / 2)
    return median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--one", choices=("forward", "trace"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        return one(args.one)
    model, x = small_model(), ids()
    with torch.inference_mode():
        model(x), model.run_with_trace(x)  # warm up
        times = interleaved({"forward": lambda: model(x), "trace": lambda: model.run_with_trace(x)}, args.rounds)
        _, trace = model.run_with_trace(x)
    fwd, tr = median(times["forward"]), median(times["trace"])
    mem = {
        w: float(
            subprocess.run(
                [sys.executable, __file__, "--one", w], capture_output=True, text=True, check=True
            ).stdout.split()[-1]
        )
        for w in ("forward", "trace")
    }
    stored = sum(t.numel() * t.element_size() for t in trace.values()) / 2**20
    print(f"run_with_trace vs forward, small preset shape, {T} tokens, batch 1, {machine()}")
    print(f"{'':<16}{'ms':>9}{'peak MiB':>10}")
    print(f"{'forward':<16}{fwd * 1e3:>9.1f}{mem['forward']:>10,.0f}")
    print(f"{'run_with_trace':<16}{tr * 1e3:>9.1f}{mem['trace']:>10,.0f}")
    print(
        f"ratio trace/forward: {tr / fwd:.2f}x time (target <= 2x); the trace holds {len(trace)} "
        f"activations, {stored:.0f} MiB"
    )
    t = explain_time(args.rounds)
    if t is not None:
        print(f"explain on a 64-token sentence (baby shape), model loaded: {t * 1e3:.0f} ms (target < 300 ms)")


if __name__ == "__main__":
    main()
