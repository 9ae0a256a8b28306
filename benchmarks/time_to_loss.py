"""Time to quality: wall time and steps to a val loss, qkv's recipes against nanoGPT's own train.py.

The reference is nanoGPT itself (benchmarks/nanogpt_ref.py): its train.py, unchanged, in a
subprocess, with its README's CPU "baby GPT" recipe (4 layers, 4 heads, 128 wide, block 64, batch
12, lr 1e-3 -> 1e-4 over 2000 iters, no dropout) in its default float32, on the same text written
in its data format (char ids, the first 90 % for training, the last 10 % for val). qkv's recipes
train with qkv's own pieces (GPT, make_optimizer, lr_at, LMData.step: what `qkv train` does,
without checkpoints) on the same 90/10 split.

Fairness, decided here:
- Training time only, on both sides: evaluations are excluded. nanoGPT's time is the sum of its
  iterations (each from the line printed before it to its "iter" line, so its estimate_loss and
  checkpoint writes fall outside); qkv's is the sum of its training steps (lr, batch, forward,
  backward, clip, optimizer step); its probes and its own evaluations are not run in the timer.
- The clock: wall time (--clock wall), or, on a machine shared with other jobs, each training
  process's own CPU time (--clock cpu, all its threads, from Linux's schedstat), which for a
  one-thread run (--threads 1 on both sides) is its wall time on an idle core, less contention of
  caches and memory. Both sides always use the same clock and the same thread count.
- The same cadence: nanoGPT evaluates every --nano-every iterations (50: ~3 s of its training),
  qkv's recipe is probed every --every steps (25 of fast: ~2-3 s).
- Each side's own val estimate, both with noise well under 0.01 nats: nanoGPT's estimate_loss over
  --nano-eval-iters random val batches (default 100: 1200 windows of 64 chars, 77k tokens), qkv's
  probe over 512 fixed 64-token windows of the val split (33k tokens, the same every probe). The
  standard error of either, from the spread of per-window losses (~0.25 nats at loss 1.9), is
  0.25 / sqrt(windows) ~ 0.007-0.011; a random-batch estimate is fresh noise at every eval, so
  nanoGPT's first crossing can come a little early by luck (in its favour).
- The time to the target is interpolated linearly between the last evaluation above it and the
  first at or below it (the step likewise); a run that never gets there counts with its whole
  training time, printed ">=", and the ratio is then a bound.
- Rounds alternate (nanoGPT, qkv, nanoGPT, qkv, ...) so both see the same machine state; the
  load average is printed with each run (the machine is shared).

    python benchmarks/time_to_loss.py --nanogpt ~/nanoGPT [--rounds 2] [--recipes nanogpt fast]
    python benchmarks/time_to_loss.py --ablate qk_norm relu2 muon ... [--base fast]   # the ablation table
    python benchmarks/time_to_loss.py --speed --nanogpt ~/nanoGPT --steps 20          # tokens/s at small
    python benchmarks/time_to_loss.py --text ../shared/data/chinese_poetry_tang.txt --budget 120 \\
        --recipes fast baby                                                          # equal wall time

--ablate trains --base (qkv's `fast` by default) and then the base with each change alone, each
to the end of its schedule, and prints steps and seconds to the target and the val loss at the
end. `bf16` is not a --set: it trains under torch.autocast('cpu', dtype=torch.bfloat16) (float32
master weights). --set K=V (repeatable) changes every qkv recipe; --bf16 turns autocast on for all.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nanogpt_ref
import torch

from qkv.core.io.refusal import Refusal
from qkv.core.machine.device import Precision
from qkv.core.model.gpt import GPT, lm_loss
from qkv.core.spec.config import PRESETS, ModelConfig, TrainConfig, apply_overrides
from qkv.core.text.batches import read_text, split_ids
from qkv.core.text.tokenizers import train_tokenizer
from qkv.core.train.lm import LMData
from qkv.core.train.loop import FLOAT32, lr_at, make_optimizer

SHAKESPEARE = Path(__file__).resolve().parents[2] / "shared" / "data" / "tinyshakespeare.txt"
PROBE_CTX = 64  # the probe's window length (every recipe compared here has n_ctx >= 64)
# each change of the speedrun alone, as --set pairs ("bf16": autocast, not a --set)
ABLATIONS: dict[str, list[str]] = {
    "muon": ["optimizer=muon"],
    "relu2": ["activation=relu2"],
    "qk_norm": ["qk_norm=true"],
    "zero_init": ["zero_init=true"],
    "soft_cap": ["output_logits_soft_cap=30"],
    "value_embeds": ["value_embeds=2"],
    "untied": ["tie_embeddings=false"],
    "bf16": [],
}
CLOCK = "wall"  # or "cpu" (--clock): what "seconds" means on both sides; see nanogpt_ref.clock


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


@dataclass
class Recipe:
    """A qkv preset with --set pairs, trained in float32 or under bf16 autocast."""

    name: str
    preset: str
    overrides: list[str] = field(default_factory=list)
    bf16: bool = False


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


def setup(recipe: Recipe, ids: torch.Tensor, d_vocab: int):
    """The recipe's model (seeded as qkv train seeds it), its TrainConfig and its data."""
    preset = PRESETS[recipe.preset]
    model_over, train_over = apply_overrides(preset.model, preset.train, list(recipe.overrides))
    mc, tc = ModelConfig(**{"d_vocab": d_vocab, **model_over}), TrainConfig(**train_over)
    train_ids, val_ids = split_ids(ids, tc.val_fraction, mc.n_ctx)
    torch.manual_seed(tc.seed)  # as qkv train: the initial weights from the run's seed
    precision = Precision("cpu", "bfloat16") if recipe.bf16 else FLOAT32
    return GPT(mc), tc, LMData(train_ids, val_ids, tc, mc.n_ctx, precision=precision)


def run_qkv(recipe: Recipe, ids, d_vocab: int, probe: Probe, every: int, target, budget, steps=None):
    """Train one qkv recipe; [(step, training seconds, probe val loss)], stopping at the first probe
    <= target (None: to the end of the schedule), after `budget` seconds, or after `steps` steps."""
    model, tc, data = setup(recipe, ids, d_vocab)
    optimizer = make_optimizer(model, tc)
    model.train()
    wall, curve, tick = 0.0, [(0, 0.0, probe(model))], nanogpt_ref.clock(CLOCK)
    last = min(tc.steps, steps or tc.steps)
    for step in range(last):
        t0 = tick()
        lr = lr_at(step, tc)
        for group in optimizer.param_groups:
            group["lr"] = lr * group.get("lr_scale", 1.0)  # as qkv.core.train.loop: Muon's groups scaled
        data.step(model, optimizer, step)
        wall += tick() - t0
        done = step + 1
        over = budget is not None and wall >= budget
        if done % every == 0 or done == last or over:
            curve.append((done, wall, probe(model)))  # not timed
            if target is not None and curve[-1][2] <= target:
                break
        if over:
            break
    return curve


def run_nanogpt(root: Path, args, target, budget, options=None):
    """nanoGPT's baby recipe; its curve [(step, training seconds, val loss)], ended at the target or budget."""
    options = options or [
        *nanogpt_ref.BABY,
        f"--eval_interval={args.nano_every}",
        f"--eval_iters={args.nano_eval_iters}",
    ]

    def stop(run) -> bool:
        if budget is not None:
            return run.train_s >= budget
        return target is not None and bool(run.curve) and run.curve[-1][2] <= target

    return nanogpt_ref.run(root, options, args.threads, stop, CLOCK).curve


def reach(curve, target: float) -> tuple[float, float, bool]:
    """(step, training seconds, True) where the curve first gets to <= target, interpolated linearly
    between the evaluation before and the first one at or below it; (last step, its time, False) if never."""
    for (s0, w0, v0), (s1, w1, v1) in zip(curve, curve[1:]):
        if v1 <= target:
            f = (v0 - target) / (v0 - v1) if v0 > target else 0.0
            return s0 + f * (s1 - s0), w0 + f * (w1 - w0), True
    if curve and curve[0][2] <= target:
        return curve[0][0], curve[0][1], True
    return curve[-1][0], curve[-1][1], False


def describe(curve, target: float) -> str:
    step, wall, hit = reach(curve, target)
    if hit:
        return f"step {step:6.0f} at {wall:6.1f} s"
    return f"not reached in {step} steps, {wall:.1f} s (best {min(v for *_, v in curve):.4f})"


def qkv_recipes(args) -> list[Recipe]:
    """--recipes' qkv entries: a preset, or PRESET:K=V,K=V (its own --set pairs, e.g. fast:optimizer=adamw)."""
    out = []
    for spec in args.recipes:
        if spec != "nanogpt":
            preset, _, pairs = spec.partition(":")
            own = [p for p in pairs.split(",") if p]
            out.append(Recipe(f"qkv {spec}" + (" bf16" if args.bf16 else ""), preset, [*args.set, *own], args.bf16))
    return out


def compare(args, text: str, ids, vocab: int, probe: Probe) -> None:
    """Rounds of nanoGPT and qkv's recipes, alternately; the medians and the ratios."""
    target = None if args.budget else args.target
    recipes = qkv_recipes(args)
    results: dict[str, list] = {"nanoGPT": []} if "nanogpt" in args.recipes else {}
    results.update({r.name: [] for r in recipes})
    with tempfile.TemporaryDirectory() as work:
        root = None
        if "nanogpt" in args.recipes:
            root = nanogpt_ref.prepare(nanogpt_ref.find_checkout(args.nanogpt), text, Path(work))
        for r in range(args.rounds):
            for name in results:
                load = loadavg()
                if name == "nanoGPT":
                    curve = run_nanogpt(root, args, target, args.budget)
                else:
                    recipe = next(x for x in recipes if x.name == name)
                    curve = run_qkv(recipe, ids, vocab, probe, args.every, target, args.budget)
                results[name].append(curve)
                if args.budget:
                    points = "  ".join(f"{w:.0f}s:{v:.3f}" for _, w, v in curve[1:])
                    what = f"steps {curve[-1][0]:5d} in {curve[-1][1]:6.1f} s, val {curve[-1][2]:.4f} | {points}"
                else:
                    what = f"val <= {args.target}: {describe(curve, args.target)}"
                print(f"round {r + 1} {name:18s} {what}  [load {load}->{loadavg()}]", flush=True)
    if not args.budget:
        summarize(results, args.target)


def summarize(results: dict[str, list], target: float) -> None:
    times, missed = {}, {}
    for name, curves in results.items():
        reaches = [reach(c, target) for c in curves]
        times[name] = statistics.median(w for _, w, _ in reaches)
        missed[name] = not all(hit for *_, hit in reaches)
        steps = statistics.median(s for s, _, _ in reaches)
        b = ">= " if missed[name] else ""
        print(f"{name:18s} median {b}{times[name]:6.1f} s, {b}{steps:.0f} steps to val <= {target}")
    if "nanoGPT" not in times:
        return
    for name in times:
        if name != "nanoGPT":
            m, base = missed[name], missed["nanoGPT"]
            bound = "?" if m and base else ">=" if m else "<=" if base else ""
            print(
                f"ratio {name} / nanoGPT: {bound}{times[name] / times['nanoGPT']:.2f}x (training time, evals excluded)"
            )


def ablate(args, ids, vocab: int, probe: Probe) -> None:
    """The base recipe, then the base with each change alone, to the end of their schedules."""
    rows = []
    variants = ([] if args.no_base else [("base", [], False)]) + [(n, ABLATIONS[n], n == "bf16") for n in args.ablate]
    for r in range(args.rounds):
        for name, pairs, bf16 in variants:
            recipe = Recipe(name, args.base, [*args.set, *pairs], bf16 or args.bf16)
            load = loadavg()
            try:
                curve = run_qkv(recipe, ids, vocab, probe, args.every, None, None, args.steps)
            except (Refusal, TypeError, ValueError) as e:
                print(f"{name:14s} skipped: {e}", flush=True)
                continue
            step, wall, hit = reach(curve, args.target)
            per = curve[-1][1] / curve[-1][0]
            rows.append((r + 1, name, step if hit else None, wall if hit else None, curve[-1][2], per * 1000, load))
            print(
                f"round {r + 1} {name:14s} val <= {args.target}: {describe(curve, args.target)}; "
                f"end {curve[-1][2]:.4f} at step {curve[-1][0]}, {per * 1000:.1f} ms/step  [load {load}]",
                flush=True,
            )
    print(f"\n| change (on {args.base}) | steps to {args.target} | s to {args.target} | val at end | ms/step | load |")
    print("|---|---|---|---|---|---|")
    for _, name, step, wall, end, ms, load in rows:
        s = f"{step:.0f}" if step is not None else "not reached"
        w = f"{wall:.1f}" if wall is not None else "-"
        print(f"| {name} | {s} | {w} | {end:.4f} | {ms:.1f} | {load} |")


def speed(args, text: str, ids, vocab: int) -> None:
    """Training tokens/s at `small` (nanoGPT's shakespeare_char config as it is), qkv and nanoGPT alternately."""
    recipe = Recipe("qkv small" + (" bf16" if args.bf16 else ""), "small", list(args.set), args.bf16)
    options = [*nanogpt_ref.SMALL, f"--max_iters={args.steps}", "--eval_interval=100000", "--eval_iters=1"]
    with tempfile.TemporaryDirectory() as work:
        root = nanogpt_ref.prepare(nanogpt_ref.find_checkout(args.nanogpt), text, Path(work))
        rates: dict[str, list[float]] = {"nanoGPT small": [], recipe.name: []}
        for r in range(args.rounds):
            load = loadavg()
            run = nanogpt_ref.run(root, options, args.threads, clock_kind=CLOCK)
            secs = run.iter_s[2:]  # the first two iterations warm up
            rates["nanoGPT small"].append(64 * 256 * len(secs) / sum(secs))
            model, tc, data = setup(recipe, ids, vocab)
            optimizer, secs, tick = make_optimizer(model, tc), [], nanogpt_ref.clock(CLOCK)
            for step in range(args.steps + 1):
                t0 = tick()
                data.step(model, optimizer, step)
                secs.append(tick() - t0)
            rates[recipe.name].append(tc.batch_size * 256 * len(secs[2:]) / sum(secs[2:]))
            print(
                f"round {r + 1}: "
                + ", ".join(f"{k} {v[-1]:,.0f} tok/s" for k, v in rates.items())
                + f"  [load {load}->{loadavg()}]",
                flush=True,
            )
    a, b = (statistics.median(v) for v in rates.values())
    print(f"median: nanoGPT {a:,.0f} tok/s, {recipe.name} {b:,.0f} tok/s, ratio {b / a:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--text", default=str(SHAKESPEARE))
    ap.add_argument("--nanogpt", default=None, help="a nanoGPT checkout (default: $NANOGPT_DIR)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--target", type=float, default=1.88)
    ap.add_argument("--every", type=int, default=25, help="probe qkv's recipes every N steps")
    ap.add_argument("--nano-every", type=int, default=50, help="nanoGPT's eval_interval")
    ap.add_argument("--nano-eval-iters", type=int, default=100, help="nanoGPT's eval_iters (batches per estimate)")
    ap.add_argument("--windows", type=int, default=512, help="val windows in qkv's probe (0: the whole val split)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads on both sides (0: as it is)")
    ap.add_argument("--budget", type=float, default=None, help="train each recipe this many seconds instead")
    ap.add_argument("--recipes", nargs="+", default=["nanogpt", "fast"], help="nanogpt and/or qkv presets")
    ap.add_argument("--set", action="append", default=[], help="K=V for every qkv recipe (repeatable)")
    ap.add_argument("--bf16", action="store_true", help="qkv's recipes under bf16 autocast")
    ap.add_argument("--ablate", nargs="*", choices=list(ABLATIONS), default=None, help="the ablation table")
    ap.add_argument("--base", default="fast", help="the preset --ablate changes")
    ap.add_argument("--no-base", action="store_true", help="--ablate: the changes only, not the base again")
    ap.add_argument("--speed", action="store_true", help="tokens/s at small, qkv against nanoGPT")
    ap.add_argument("--steps", type=int, default=None, help="--speed: steps timed; --ablate: cap the schedule")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall", help="cpu: each process's CPU time")
    args = ap.parse_args()
    global CLOCK
    CLOCK = args.clock
    if args.threads:
        torch.set_num_threads(args.threads)
    text = read_text(args.text)
    tok = train_tokenizer("char", text, None)
    ids = torch.tensor(tok.encode(text), dtype=torch.long)
    _, val_ids = split_ids(ids, TrainConfig().val_fraction, PROBE_CTX)
    probe = Probe(val_ids, args.windows)
    print(
        f"{args.text}: {len(ids):,} chars, {tok.vocab_size} tokens; probe {len(probe.x)} val windows of "
        f"{PROBE_CTX}; torch {torch.__version__}, {torch.get_num_threads()} threads; {CLOCK} clock; load {loadavg()}"
    )
    if args.speed:
        args.steps = args.steps or 20
        speed(args, text, ids, tok.vocab_size)
    elif args.ablate is not None:
        ablate(args, ids, tok.vocab_size, probe)
    else:
        compare(args, text, ids, tok.vocab_size, probe)


if __name__ == "__main__":
    main()
