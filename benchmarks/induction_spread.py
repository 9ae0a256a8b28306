"""How far the induction lesson's numbers move between runs: one line of figures per seed.

    python benchmarks/induction_spread.py [--seeds 0,1,2,3,4] [--threads 1]

Each run trains the lesson's two models again (about 45 s on one free core). The lesson trains inside
threads.fixed(1), so a machine's core count does not change its numbers; --threads N overrides that, to
see what a second thread's summation order would do. Another CPU kind sums in another order too (its
kernels: SSE, AVX2, AVX-512); to imitate one on this machine, start Python with
ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=AVX2 ONEDNN_MAX_CPU_ISA=AVX2, or ATEN_CPU_CAPABILITY=default
MKL_CBWR=COMPATIBLE (measured for seed 0: the numbers moved by about 1e-6, no printed digit changed). The
ranges over seeds are what the lesson's text states (qkv.lessons.induction.present.SPREAD).
"""

from __future__ import annotations

import argparse
import time

from common import machine

from qkv.core.machine import threads
from qkv.lessons.induction import measure


def line(seed: int, n) -> str:
    """One run's figures: the ones the lesson's headline and its ablation verdicts quote."""
    ind, prev = n.induction_head, n.previous_head
    others = sorted(a.kept for a in n.ablation if a.role == "other")
    return (
        f"seed {seed}: best score {n.rise.from_:.3f} -> {n.rise.to:.3f} (half by step {n.rise.middle}), "
        f"gap {n.models['two'].probes[-1].gap:+.2f} (1 layer {n.models['one'].probes[-1].gap:+.2f}, "
        f"score <= {max(n.models['one'].best):.3f}); induction head L{ind.layer}H{ind.head} off leaves "
        f"{100 * n.kept:.0f}%, previous-token head L{prev.layer}H{prev.head} {100 * n.kept_previous:.0f}%, "
        f"others {', '.join(f'{100 * k:.0f}%' for k in others)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated seeds")
    ap.add_argument("--threads", type=int, default=1, help="threads to train with (the lesson uses 1)")
    args = ap.parse_args()
    print(f"induction lesson, one run per seed, {args.threads} thread(s), {machine()}")
    fixed = threads.fixed
    if args.threads != 1:  # the lesson asks for one thread: give it args.threads instead
        threads.fixed = lambda n: fixed(args.threads)
    for seed in (int(s) for s in args.seeds.split(",")):
        t = time.perf_counter()
        n = measure.measure(seed)
        print(f"{line(seed, n)}  ({time.perf_counter() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
