"""How long each lesson takes with the bundled model (target: at most 30 s each on 2 cores).

    python benchmarks/lessons_time.py [--lang en] [--out DIR]

Lessons that train their own small models (why-v, order, residual) include that training.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from common import machine

from qkv.apps import lessons


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lang", choices=("zh", "en"), default="en")
    ap.add_argument("--out", help="figure folder (default: a temporary one)")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="qkv-lessons-")
    print(f"lesson times with the bundled model, figures drawn, {machine()}")
    total = 0.0
    for name in lessons.LESSONS:
        t = time.perf_counter()
        result = lessons.run(name, lang=args.lang, out=out)
        seconds = time.perf_counter() - t
        total += seconds
        flag = "" if seconds <= 30 else "  (over 30 s)"
        print(f"{name:<11}{seconds:>7.1f} s{flag}  {result.headline}", flush=True)
    print(f"{'total':<11}{total:>7.1f} s")


if __name__ == "__main__":
    main()
