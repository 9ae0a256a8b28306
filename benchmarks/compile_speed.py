"""Training speed with and without `--compile`: tokens/s of qkv's own training step (LMData.step:
forward, loss, backward, clip, fused AdamW) at the `baby` and `small` presets, eager against
torch.compile, in the same process, on the same batches of tiny Shakespeare.

The compiled model's first step compiles its forward and backward (inductor: C++ on the CPU); that time
is printed apart ("compile s": the first step's seconds less an eager step's). After a warm-up, rounds
of `--steps` steps alternate between eager and compiled, and the medians and their ratio are printed.

    python benchmarks/compile_speed.py [--presets baby small] [--steps 10] [--rounds 5] [--precision float32]
"""

from __future__ import annotations

import argparse
import time

import torch
from common import interleaved, machine, median, text_ids

from qkv.core.machine.cpu import bf16_support
from qkv.core.machine.device import Precision
from qkv.core.model import make_model
from qkv.core.spec.config import PRESETS, ModelConfig, TrainConfig
from qkv.core.train.compiled import compiled
from qkv.core.train.lm import LMData
from qkv.core.train.loop import make_optimizer

BATCH = {"baby": 12, "small": 12, "tiny": 16, "fast": 16}  # windows per step (small's own 64 is slow on a CPU)
D_VOCAB = 65  # tiny Shakespeare's characters


def trainer(preset: str, precision: str, compile: bool, seed: int = 0):
    """A function that trains one more step of `preset` (as qkv train does) and the tokens a step scores."""
    torch.manual_seed(seed)
    cfg = ModelConfig(**{**PRESETS[preset].model, "d_vocab": D_VOCAB})
    model = make_model(cfg).train()
    tc = TrainConfig(batch_size=BATCH[preset], seed=seed)
    data = LMData(text_ids(D_VOCAB), None, tc, cfg.n_ctx, precision=Precision("cpu", precision))
    optimizer, trained, done = make_optimizer(model, tc), compiled(model) if compile else model, [0]

    def step() -> None:
        data.step(trained, optimizer, done[0])
        done[0] += 1

    return step, BATCH[preset] * cfg.n_ctx


def first_step_s(step) -> float:
    t = time.perf_counter()
    step()
    return time.perf_counter() - t


def measure(preset: str, precision: str, steps: int, rounds: int, contestants: dict[str, bool]) -> dict:
    """tokens/s of each contestant (name -> compile?), and the seconds of each one's first step."""
    fns, first, tokens = {}, {}, 0
    for name, compile in contestants.items():
        fns[name], tokens = trainer(preset, precision, compile)
        first[name] = first_step_s(fns[name])  # compiled: the compilation of the forward and the backward
        for _ in range(2):  # warm up: allocator, kernels, optimizer state
            fns[name]()
    times = interleaved({k: (lambda f=f: [f() for _ in range(steps)]) for k, f in fns.items()}, rounds)
    return {"tok_s": {k: steps * tokens / median(t) for k, t in times.items()}, "first_s": first}


def training_args(doc: str) -> argparse.ArgumentParser:
    """The options of a training-speed benchmark (this one, cpu_precision.py): presets, steps, rounds, batch."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--presets", nargs="+", default=["baby", "small"])
    ap.add_argument("--steps", type=int, default=10, help="training steps per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batch", type=int, help="windows per step (default: baby and small 12)")
    return ap


def main() -> None:
    ap = training_args(__doc__)
    ap.add_argument("--precision", default="float32", choices=("float32", "bfloat16"))
    args = ap.parse_args()
    print(f"torch.compile against eager, training, {args.precision}, {machine()}, CPU bf16: {bf16_support()}")
    print(f"{'preset':<8}{'batch':>6}{'eager tok/s':>13}{'compiled tok/s':>16}{'ratio':>7}{'compile s':>11}")
    for preset in args.presets:
        BATCH[preset] = args.batch or BATCH[preset]
        r = measure(preset, args.precision, args.steps, args.rounds, {"eager": False, "compiled": True})
        eager, comp = r["tok_s"]["eager"], r["tok_s"]["compiled"]
        compile_s = r["first_s"]["compiled"] - r["first_s"]["eager"]
        print(f"{preset:<8}{BATCH[preset]:>6}{eager:>13,.0f}{comp:>16,.0f}{comp / eager:>7.2f}{compile_s:>11.1f}")


if __name__ == "__main__":
    main()
