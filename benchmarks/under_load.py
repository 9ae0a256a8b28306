"""`qkv train` and `qkv generate` speed on a busy machine: idle, and with 1 and 2 competing CPU-bound
processes that this script starts and stops itself (`python -c "while True: pass"`).

Each measurement runs in a fresh Python process (a worker: this file with --worker), so that the
thread settings are those a user gets: the environment, the import order and qkv's own start-up.
Thread settings compared (docs/threads.md):

    default  torch's own: torch imported before qkv, nothing set (its OpenMP threads spin when idle)
    qkv      what the qkv command does: qkv imported first (its environment defaults), then
             qkv.core.machine.threads.configure()
    omp1     torch's own with OMP_NUM_THREADS=1
    and any --try NAME:KEY=VALUE,KEY=VALUE (torch first, the environment given)

Training: the tiny preset, char tokens, --steps steps on tiny Shakespeare (or the built-in corpus);
tokens/s as `qkv train` reports it. Generation: --tokens new tokens from a checkpoint trained once at
the start, sampled with a fixed seed; tokens/s over the generation. Rounds alternate the settings;
medians are printed, with the slowdown under load (idle / loaded) and the idle speed against torch's
default. Each round holds `flock /tmp/cpu.lock`, the machine's shared lock (about 2.5 minutes on 2 cores).

    python benchmarks/under_load.py                       # 3 rounds, about 8 minutes on 2 cores
    python benchmarks/under_load.py --rounds 1 --try passive:OMP_WAIT_POLICY=PASSIVE
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHAKESPEARE = HERE.parents[1] / "shared" / "data" / "tinyshakespeare.txt"
THREAD_ENV = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "MKL_NUM_THREADS", "QKV_THREADS")
BASE = {
    "default": dict(env={}, qkv_first=False),
    "qkv": dict(env={}, qkv_first=True),
    "omp1": dict(env={"OMP_NUM_THREADS": "1"}, qkv_first=False),
}


# ---------------------------------------------------------------- the worker (one measurement)


def worker(args) -> None:
    if args.qkv_first:
        import qkv  # noqa: F401  (its environment defaults, before torch)
        from qkv.core.machine import threads

        threads.configure()
    import torch

    import qkv

    if args.worker == "train":
        text = {"text_path": str(SHAKESPEARE)} if SHAKESPEARE.exists() else {}
        r = qkv.train(
            **text,
            out=args.out,
            tokenizer="char",
            preset="tiny",
            overrides=[f"steps={args.steps}"],
            progress=False,
            force=True,
        )
        tok_s = r.tokens_per_s
    else:
        from qkv.core.decode.sample import generate_ids

        model, tokenizer = qkv.load(args.out)
        t0 = time.perf_counter()
        n = sum(1 for _ in generate_ids(model, tokenizer.encode("\n"), args.tokens, 0.8, seed=0))
        tok_s = n / (time.perf_counter() - t0)
    print(json.dumps({"tok_s": tok_s, "threads": torch.get_num_threads()}))


# ---------------------------------------------------------------- the driver


@contextlib.contextmanager
def cpu_lock(path="/tmp/cpu.lock"):
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@contextlib.contextmanager
def competitors(n: int):
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(0.3 if n else 0)  # let them start spinning
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def run_worker(task: str, setting: dict, out: str, args) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in THREAD_ENV}
    env.update(setting["env"])
    env["PYTHONPATH"] = str(HERE.parent / "src") + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        task,
        "--out",
        out,
        "--steps",
        str(args.steps),
        "--tokens",
        str(args.tokens),
    ] + (["--qkv-first"] if setting["qkv_first"] else [])
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"worker failed ({task}, {setting}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def parse_try(spec: str) -> tuple[str, dict]:
    name, _, pairs = spec.partition(":")
    env = dict(p.split("=", 1) for p in pairs.split(",") if p)
    return name, dict(env=env, qkv_first=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--loads", default="0,1,2", help="numbers of competing processes, e.g. 0,1")
    ap.add_argument("--settings", default="default,qkv,omp1", help="which of default, qkv, omp1 (and --try names)")
    ap.add_argument("--try", dest="tries", action="append", default=[], metavar="NAME:KEY=VALUE,...")
    ap.add_argument("--tasks", default="train,generate")
    ap.add_argument("--worker", choices=("train", "generate"), help=argparse.SUPPRESS)
    ap.add_argument("--qkv-first", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    settings = dict(BASE)
    settings.update(parse_try(s) for s in args.tries)
    names = [s for s in args.settings.split(",") if s] + [parse_try(s)[0] for s in args.tries]
    names = list(dict.fromkeys(names))
    loads = [int(x) for x in args.loads.split(",")]
    tasks = args.tasks.split(",")
    speeds = {(t, s, n): [] for t in tasks for s in names for n in loads}
    threads = {}
    with tempfile.TemporaryDirectory() as tmp:
        gen_ckpt, train_out = os.path.join(tmp, "gen"), os.path.join(tmp, "train")
        for r in range(args.rounds):
            with cpu_lock():  # one round at a time: the lock is not held for long
                if r == 0 and "generate" in tasks:  # the model that generates
                    run_worker("train", settings["default"], gen_ckpt, args)
                for n in loads:
                    order = names[r % len(names) :] + names[: r % len(names)]  # a different one first each round
                    with competitors(n):
                        for s in order:
                            for t in tasks:
                                res = run_worker(t, settings[s], train_out if t == "train" else gen_ckpt, args)
                                speeds[t, s, n].append(res["tok_s"])
                                threads[s, n] = res["threads"]
                                print(
                                    f"round {r + 1} load {n} {s:>10} {t:>8}: {res['tok_s']:9,.0f} tok/s "
                                    f"({res['threads']} threads)",
                                    file=sys.stderr,
                                    flush=True,
                                )

    print(
        f"\n{os.cpu_count()} CPUs; train: tiny preset, char tokens, {args.steps} steps; generate: {args.tokens} "
        f"tokens; median of {args.rounds} rounds (tokens/s)"
    )
    head = "".join(f"{f'{n} busy':>10}" for n in loads)
    slow = "".join(f"{f'x{n}':>8}" for n in loads if n)
    print(f"{'task':<9}{'setting':<12}{'threads':>8}{head}{slow}  idle vs default")
    for t in tasks:
        for s in names:
            med = {n: statistics.median(speeds[t, s, n]) for n in loads}
            cells = "".join(f"{med[n]:10,.0f}" for n in loads)
            ratios = "".join(f"{med[0] / med[n]:8.2f}" if 0 in med else f"{'':>8}" for n in loads if n)
            vs = ""
            if 0 in med and "default" in names:
                vs = f"{med[0] / statistics.median(speeds[t, 'default', 0]):.3f}"
            used = "/".join(str(threads[s, n]) for n in loads)
            print(f"{t:<9}{s:<12}{used:>8}{cells}{ratios}  {vs}")
    print(
        "x1, x2: slowdown with 1 or 2 competing processes (idle speed / loaded speed); "
        "idle vs default: idle speed / torch default's idle speed"
    )


if __name__ == "__main__":
    main()
