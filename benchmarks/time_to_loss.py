"""Time to quality: the wall time and the steps each recipe needs to first reach a val loss.

Two recipes train side by side on the same text (char tokens, the 90/10 split that `qkv train`
makes): nanoGPT's CPU recipe (qkv's `baby` preset) and qkv's `fast` preset. Rounds alternate
(baby, fast, baby, fast, ...) so both see the same machine state. Each run trains with qkv's own
pieces — GPT, make_optimizer, lr_at, LMData.step (its batches and seeds) and the recipe's own
evaluation at its eval_interval — i.e. what `qkv train` does, without the checkpoint writes.

Val loss is measured by one probe, the same for both recipes: the mean next-token loss over a
fixed set of val windows of 64 tokens (512 of the val split's non-overlapping 64-token windows,
drawn once by a fixed generator; --windows 0: all of them), every --every steps of the fast recipe
and every 2x --every steps of baby (both about every 3 s of training). The probes' own time is NOT
counted in the wall time; the recipe's own evaluations (eval_interval, eval_steps) ARE counted, as
in `qkv train`.
A run stops at its first probe <= --target (or at the end of its schedule). A recipe that does not
reach the target in its whole schedule counts with its whole time (printed ">="), a lower bound of
its time to the target, so the ratio is then an upper bound ("<=").

    python benchmarks/time_to_loss.py [--rounds 2] [--target 1.88] [--text PATH] [--threads N]

On a shared machine where each command must stay short, --recipes runs one of them, e.g.
alternately `--rounds 1 --recipes baby` and `--rounds 1 --recipes fast` (each under 5 minutes).

With --budget SECONDS, each recipe instead trains for that much wall time (or to the end of its
schedule) and the probes' val losses are printed against wall time: the comparison at equal
time on another text, e.g.

    python benchmarks/time_to_loss.py --text ../shared/data/chinese_poetry_tang.txt --budget 120 \
        --rounds 1
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

from qkv.core.model.gpt import GPT, lm_loss
from qkv.core.spec.config import PRESETS, ModelConfig, TrainConfig, apply_overrides
from qkv.core.text.batches import read_text, split_ids
from qkv.core.text.tokenizers import train_tokenizer
from qkv.core.train.lm import LMData
from qkv.core.train.loop import lr_at, make_optimizer

SHAKESPEARE = Path(__file__).resolve().parents[2] / "shared" / "data" / "tinyshakespeare.txt"
PROBE_CTX = 64  # the probe's window length (every recipe compared here has n_ctx >= 64)
RECIPES = {"nanoGPT (baby)": "baby", "qkv fast": "fast"}


class Probe:
    """The val loss over fixed windows of the val split: all of them, or `windows` drawn by a fixed generator."""

    def __init__(self, val_ids: torch.Tensor, windows: int):
        n = (len(val_ids) - 1) // PROBE_CTX
        starts = torch.arange(n) * PROBE_CTX  # (n,) non-overlapping windows
        if windows and windows < n:
            starts = starts[torch.randperm(n, generator=torch.Generator().manual_seed(0))[:windows]]
        index = starts[:, None] + torch.arange(PROBE_CTX + 1)  # (n, PROBE_CTX + 1)
        window = val_ids[index]
        self.x, self.y = window[:, :-1], window[:, 1:]

    @torch.inference_mode()
    def __call__(self, model: GPT) -> float:
        model.eval()
        total = 0.0
        for i in range(0, len(self.x), 64):  # 64 windows at a time: the logits of a large vocabulary fit
            x, y = self.x[i : i + 64], self.y[i : i + 64]
            total += lm_loss(model(x), y).item() * len(x)
        model.train()
        return total / len(self.x)


def setup(preset: str, ids: torch.Tensor, d_vocab: int, overrides=()):
    model_over, train_over = apply_overrides(PRESETS[preset].model, PRESETS[preset].train, list(overrides))
    mc, tc = ModelConfig(**{"d_vocab": d_vocab, **model_over}), TrainConfig(**train_over)
    train_ids, val_ids = split_ids(ids, tc.val_fraction, mc.n_ctx)
    torch.manual_seed(tc.seed)  # as qkv train: the initial weights from the run's seed
    return GPT(mc), tc, LMData(train_ids, val_ids, tc, mc.n_ctx)


def run(preset: str, ids, d_vocab: int, probe: Probe, every: int, target: float | None, budget: float | None):
    """Train one recipe; [(step, wall seconds, probe val loss)], stopping at the first probe <= target
    (or after `budget` seconds of training)."""
    model, tc, data = setup(preset, ids, d_vocab)
    optimizer = make_optimizer(model, tc)
    model.train()
    wall, curve = 0.0, [(0, 0.0, probe(model))]
    for step in range(tc.steps):
        t0 = time.perf_counter()
        lr = lr_at(step, tc)
        for group in optimizer.param_groups:
            group["lr"] = lr
        data.step(model, optimizer, step)
        done = step + 1
        if done % tc.eval_interval == 0 or done == tc.steps:
            data.evaluate(model)  # the recipe's own evaluation, as qkv train runs it
        wall += time.perf_counter() - t0
        over = budget is not None and wall >= budget
        if done % every == 0 or done == tc.steps or over:
            curve.append((done, wall, probe(model)))  # not timed
            if target is not None and curve[-1][2] <= target:
                break
        if over:
            break
    return curve


def first_reach(curve, target: float) -> tuple[int, float, bool]:
    """(step, wall seconds, True) of the first probe <= target; (last step, its time, False) when none is."""
    hit = next(((step, wall) for step, wall, val in curve if val <= target), None)
    return (*hit, True) if hit else (*curve[-1][:2], False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--text", default=str(SHAKESPEARE))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--target", type=float, default=1.88)
    ap.add_argument("--every", type=int, default=25, help="probe every N steps of fast (2N of baby)")
    ap.add_argument("--windows", type=int, default=512, help="val windows in the probe (0: the whole val split)")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: as it is)")
    ap.add_argument("--budget", type=float, default=None, help="train each recipe this many seconds instead")
    ap.add_argument("--recipes", nargs="+", choices=list(RECIPES.values()), default=list(RECIPES.values()))
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    text = read_text(args.text)
    tok = train_tokenizer("char", text, None)
    ids = torch.tensor(tok.encode(text), dtype=torch.long)
    _, val_ids = split_ids(ids, TrainConfig().val_fraction, PROBE_CTX)
    probe = Probe(val_ids, args.windows)
    target = None if args.budget else args.target
    print(
        f"{args.text}: {len(ids):,} chars, {tok.vocab_size} tokens; probe {len(probe.x)} val windows of "
        f"{PROBE_CTX}; torch {torch.__version__}, {torch.get_num_threads()} threads"
    )
    results = {name: [] for name in RECIPES}
    for r in range(args.rounds):
        for name, preset in RECIPES.items():
            if preset not in args.recipes:
                continue
            every = args.every * (2 if preset == "baby" else 1)
            curve = run(preset, ids, tok.vocab_size, probe, every, target, args.budget)
            results[name].append(curve)
            if args.budget:
                points = "  ".join(f"{w:.0f}s:{v:.3f}" for _, w, v in curve[1:])
                print(
                    f"round {r + 1} {name:16s} steps {curve[-1][0]:5d} in {curve[-1][1]:6.1f} s, "
                    f"val {curve[-1][2]:.4f} | {points}",
                    flush=True,
                )
            else:
                step, wall, reached = first_reach(curve, args.target)
                what = (
                    f"step {step:5d} at {wall:6.1f} s"
                    if reached
                    else f"not reached in its {step} steps, {wall:.1f} s (best {min(v for *_, v in curve):.4f})"
                )
                print(f"round {r + 1} {name:16s} val <= {args.target}: {what}", flush=True)
    if args.budget:
        return
    times, missed = {}, {}
    for name, curves in results.items():
        if curves:
            reaches = [first_reach(c, args.target) for c in curves]
            times[name] = statistics.median(wall for _, wall, _ in reaches)
            missed[name] = not all(reached for *_, reached in reaches)
            steps = statistics.median(step for step, _, _ in reaches)
            bound = ">= " if missed[name] else ""
            print(f"{name:16s} median {bound}{times[name]:6.1f} s, {bound}{steps:.0f} steps to val <= {args.target}")
    if len(times) == 2:
        base, fast = "nanoGPT (baby)", "qkv fast"
        # a run that never reached the target counts with its whole time: a lower bound of its time to the target
        bound = "?" if missed[fast] and missed[base] else ">=" if missed[fast] else "<=" if missed[base] else ""
        print(
            f"ratio fast/nanoGPT: {bound}{times[fast] / times[base]:.2f}x (probe time excluded; each recipe's "
            "own evaluations included)"
        )


if __name__ == "__main__":
    main()
