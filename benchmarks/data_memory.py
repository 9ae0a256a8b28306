"""Corpora larger than memory: tokenizing speed, and training's peak memory on 100 MB and 1 GB of text.

    PYTHONPATH=src python benchmarks/data_memory.py [--sizes 100,1000] [--steps 30] [--preset tiny] [--dir /tmp]

For each size: a synthetic text (seeded: random words from a fixed list, 12 to a line) is written to
--dir; plain Python reads it line by line and in 1 MiB chunks (MB/s: what reading alone costs);
`qkv tokenize --tokenizer char` writes its shards (MB/s, and that process's peak RSS); then
`qkv train --data` trains --steps steps of --preset in a subprocess, and its peak RSS (VmHWM, from
getrusage of the one child a fresh wrapper starts) is printed beside the other sizes'. Memory
mapping reads only the windows each batch takes, so training's peak RSS should not grow with the
corpus: the goal is that the largest size's is within 10% of the smallest's. Everything written is
deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WORDS = (
    "the of and to in a is that for it as was with be by on not he i this are or his from at which but have an "
    "they you were her she there one all we their been has when who will more if no out so said what up its "
    "about into than them can only other new some time could these two may then do first any my now such like "
    "our over man me even most made after also did many before must through back years where much your way "
    "well down should because each just those people how too little state good very make world still own see "
    "men work long get here between both life being under never day same another know while last might us "
    "great old year off come since against go came right used take three"
).split()
MB = 10**6

# peak RSS of one command, measured by a fresh wrapper whose only child it is (ru_maxrss: kB on Linux)
_WRAP = (
    "import resource, subprocess, sys, json; r = subprocess.run(sys.argv[1:]); "
    "print(json.dumps({'rc': r.returncode, 'maxrss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))"
)


def generate(path: Path, size: int, seed: int = 0) -> None:
    """About `size` bytes of words from WORDS, 12 to a line, drawn by a generator seeded by `seed`."""
    rng = np.random.default_rng(seed)
    written = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < size:
            picks = rng.integers(len(WORDS), size=(100_000, 12))  # (lines, words)
            block = "\n".join(" ".join(WORDS[i] for i in row) for row in picks.tolist()) + "\n"
            block = block[: size - written]
            f.write(block)
            written += len(block)


def plain_reading(path: Path) -> dict[str, float]:
    """MB/s of Python reading the file as text, line by line and in 1 MiB chunks."""
    size = path.stat().st_size
    began = time.perf_counter()
    with open(path, encoding="utf-8") as f:
        for _ in f:
            pass
    lines = size / MB / (time.perf_counter() - began)
    began = time.perf_counter()
    with open(path, encoding="utf-8") as f:
        while f.read(1 << 20):
            pass
    return {"lines": lines, "chunks": size / MB / (time.perf_counter() - began)}


def measured(cmd: list[str], env: dict) -> tuple[float, int, str]:
    """(seconds, peak RSS in MB, what it printed) of running `cmd`; its failure stops the benchmark."""
    began = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", _WRAP, *cmd], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    *printed, last = r.stdout.strip().splitlines()
    report = json.loads(last)
    if report["rc"] != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    return seconds, report["maxrss_kb"] // 1024, "\n".join(printed)


def one_size(megabytes: int, work: Path, args, env: dict) -> dict:
    text, data, run = work / f"text_{megabytes}.txt", work / f"data_{megabytes}", work / f"run_{megabytes}"
    generate(text, megabytes * MB, args.seed)
    size = text.stat().st_size
    row: dict = {"MB": megabytes, **{f"read_{k}_MBps": v for k, v in plain_reading(text).items()}}
    qkv = [sys.executable, "-m", "qkv"]
    seconds, rss, said = measured([*qkv, "tokenize", "--text", str(text), "--out", str(data), "--quiet"], env)
    inside = float(re.search(r" in ([\d.]+) s ", said).group(1))  # its own time, without starting Python and torch
    row.update(tokenize_MBps=size / MB / inside, tokenize_all_MBps=size / MB / seconds, tokenize_rss_MB=rss)
    row["shards_MB"] = sum(f.stat().st_size for f in data.iterdir()) / MB
    text.unlink()  # the text is not needed to train: the shards are
    train = [*qkv, "train", "--data", str(data), "--preset", args.preset, "--out", str(run), "--quiet"]
    train += ["--set", f"steps={args.steps}", "--threads", "1"]
    seconds, rss, _ = measured(train, env)
    row.update(train_s=seconds, train_rss_MB=rss)
    shutil.rmtree(data)
    shutil.rmtree(run)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="100,1000", help="text sizes in MB (default 100,1000)")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--preset", default="tiny")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", default=tempfile.gettempdir(), help="where the texts and shards go (deleted after)")
    args = p.parse_args()
    env = {**os.environ, "QKV_THREADS": "1", "QKV_LANG": "en"}
    work = Path(tempfile.mkdtemp(prefix="qkv-data-memory-", dir=args.dir))
    try:
        rows = [one_size(int(s), work, args, env) for s in args.sizes.split(",")]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    head = ("text", "read lines", "read chunks", "tokenize", "(w/ start)", "tok. RSS", "shards", "train RSS", "train")
    print(" ".join(f"{h:>12}" for h in head))
    for r in rows:
        cells = (
            f"{r['MB']} MB", f"{r['read_lines_MBps']:.0f} MB/s", f"{r['read_chunks_MBps']:.0f} MB/s",
            f"{r['tokenize_MBps']:.2f} MB/s", f"{r['tokenize_all_MBps']:.2f} MB/s", f"{r['tokenize_rss_MB']} MB",
            f"{r['shards_MB']:.0f} MB", f"{r['train_rss_MB']} MB", f"{r['train_s']:.1f} s",
        )  # fmt: skip
        print(" ".join(f"{c:>12}" for c in cells))
    low, high = min(r["train_rss_MB"] for r in rows), max(r["train_rss_MB"] for r in rows)
    print(f"training's peak RSS: largest / smallest = {high / low:.3f} (goal: within 10%, at most 1.10)")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
