"""Loading a Qwen2.5-0.5B-shaped model: load time and peak memory of qkv and of Hugging Face.

The model is built here, not downloaded: a transformers Qwen2ForCausalLM with exactly the shape of
Qwen2.5-0.5B's config.json (vocab 151936, hidden 896, intermediate 4864, 24 layers, 14 heads, 2 key/value
heads, tied embeddings, rope_theta 1e6, ...), random weights (N(0, 0.02), norms 1), saved with
save_pretrained in bfloat16 (one model.safetensors of about 988 MB; config.json then rewritten with the
hub's own fields and spelling: rope_theta, torch_dtype, sliding_window 32768) beside a small byte-level BPE
tokenizer.json trained on tiny Shakespeare. It is written once into --dir and reused; build_model_dir()
is what benchmarks/llm_speed.py imports.

Each load runs in a fresh process, so its peak resident memory (VmHWM, which starts afresh at exec) is
its own: qkv's load_pretrained(dir, dtype) and transformers' AutoModelForCausalLM.from_pretrained(dir,
dtype=...), each in float32 and in bfloat16. "import s" is the library's import after torch's, "load s"
the load call alone; "base GB" is the process's resident memory just before the load (Python, torch and
the library), "peak GB" its peak (VmHWM), "anon+file" that peak's two parts as sampled every 5 ms
(RssAnon: memory of the process's own; RssFile: pages of mapped files, the weight file's among them,
which are the page cache's and shared), "after GB" what it holds once loaded, and "used GB" what it
holds after every weight has been read once (a loader that leaves the weights in the mapped file, as
transformers does for bfloat16, shows little "after" and pays it at the first use). The weight file is read once
beforehand so that every load finds it in the page cache. With --rounds N the four loads run N times,
every other round in the reverse order, and the medians are shown. GB is 10^9 bytes.

Goals: qkv's float32 peak RSS at most 1.3x the float32 weights (n_params x 4 bytes), and qkv's load
time at most transformers'.

    python benchmarks/llm_load.py [--rounds 1] [--dir /tmp/qkv-bench/qwen2.5-0.5b-shape] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_DIR = Path("/tmp/qkv-bench/qwen2.5-0.5b-shape")
DONE = "qkv-bench-complete"  # written last: a directory without it was left half-built and is rebuilt
SHAKESPEARE = Path(__file__).resolve().parents[2] / "shared" / "data" / "tinyshakespeare.txt"
TOKENIZER_VOCAB = 2048

# Qwen2.5-0.5B's config.json, field for field (the weights are random)
QWEN25_05B_JSON = dict(
    architectures=["Qwen2ForCausalLM"],
    attention_dropout=0.0,
    bos_token_id=151643,
    eos_token_id=151643,
    hidden_act="silu",
    hidden_size=896,
    initializer_range=0.02,
    intermediate_size=4864,
    max_position_embeddings=32768,
    max_window_layers=21,
    model_type="qwen2",
    num_attention_heads=14,
    num_hidden_layers=24,
    num_key_value_heads=2,
    rms_norm_eps=1e-06,
    rope_theta=1000000.0,
    sliding_window=32768,
    tie_word_embeddings=True,
    torch_dtype="bfloat16",
    transformers_version="4.43.1",
    use_cache=True,
    use_sliding_window=False,
    vocab_size=151936,
)
# the same for transformers 5's Qwen2Config, which builds the model that writes the weights
QWEN25_05B = dict(
    vocab_size=151936,
    hidden_size=896,
    intermediate_size=4864,
    num_hidden_layers=24,
    num_attention_heads=14,
    num_key_value_heads=2,
    hidden_act="silu",
    max_position_embeddings=32768,
    initializer_range=0.02,
    rms_norm_eps=1e-6,
    use_cache=True,
    tie_word_embeddings=True,
    rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
    sliding_window=32768,
    use_sliding_window=False,
    max_window_layers=21,
    attention_dropout=0.0,
    bos_token_id=151643,
    eos_token_id=151643,
)
RUNS = (("qkv", "float32"), ("transformers", "float32"), ("qkv", "bfloat16"), ("transformers", "bfloat16"))


def sample_text(n: int = 300_000) -> str:
    if SHAKESPEARE.exists():
        return SHAKESPEARE.read_text(encoding="utf-8")[:n]
    return "First Citizen: Before we proceed any further, hear me speak. All: Speak, speak.\n" * 2000


def _train_tokenizer(path: Path) -> None:
    """A byte-level BPE tokenizer.json (all 256 bytes, TOKENIZER_VOCAB tokens), as Qwen's is byte-level."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=TOKENIZER_VOCAB,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        special_tokens=[],
    )
    tok.train_from_iterator([sample_text()], trainer=trainer)
    tok.save(str(path))


def build_model_dir(d: Path = DEFAULT_DIR, quiet: bool = False) -> Path:
    """The Qwen2.5-0.5B-shaped directory (config.json, model.safetensors in bfloat16, tokenizer.json),
    built now unless `d` already holds a complete one. The model is made on the meta device, given
    uninitialised bfloat16 storage and filled with normal_ in bfloat16 (no float32 copy, no transformers
    init pass): about 494 M numbers in a few seconds."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from transformers import logging as hf_logging

    d = Path(d)
    if (d / DONE).exists():
        return d
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    t = time.perf_counter()
    if not quiet:
        print(f"building the Qwen2.5-0.5B-shaped model in {d} ...", flush=True)
    tmp = d.with_name(d.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    config = Qwen2Config(**QWEN25_05B, dtype="bfloat16")
    with torch.device("meta"):
        model = Qwen2ForCausalLM(config)
    model = model.to(torch.bfloat16).to_empty(device="cpu")
    model.tie_weights()  # to_empty gives the tied lm_head a tensor of its own
    assert model.lm_head.weight is model.model.embed_tokens.weight
    torch.manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.fill_(1.0)
            else:  # weights, and Qwen2's q, k and v biases
                p.normal_(0.0, config.initializer_range)
    model.save_pretrained(tmp)
    del model
    # transformers 5 writes its own spelling (rope_parameters, layer_types, sliding_window null when
    # use_sliding_window is false): the config.json is replaced by the hub's, as users have it
    (tmp / "config.json").write_text(json.dumps(QWEN25_05B_JSON, indent=2) + "\n")
    _train_tokenizer(tmp / "tokenizer.json")
    (tmp / DONE).write_text("built by benchmarks/llm_load.py\n")
    shutil.rmtree(d, ignore_errors=True)
    tmp.rename(d)
    if not quiet:
        print(f"built in {time.perf_counter() - t:.1f} s", flush=True)
    return d


def n_params(d: Path) -> int:
    """The number of weights stored in the directory (from the safetensors headers; tied: counted once)."""
    from safetensors import safe_open

    n = 0
    with safe_open(str(d / "model.safetensors"), framework="pt") as f:
        for name in f.keys():
            size = 1
            for s in f.get_slice(name).get_shape():
                size *= s
            n += size
    return n


def warm_page_cache(d: Path) -> None:
    with open(d / "model.safetensors", "rb") as f:
        while f.read(1 << 24):
            pass


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _gb(kib: int) -> float:
    return kib * 1024 / 1e9


class _Sampler:
    """Polls /proc/self/status every few ms in a thread: the resident memory's anonymous and file-backed
    parts (RssAnon, RssFile: the mmap'd weight file's pages count as the latter) when their sum was
    highest. A sample, so it can miss the very peak by a little; VmHWM is the exact peak."""

    def __init__(self, every: float = 0.005):
        import threading

        self.best = (0, 0, 0)  # (total, anon, file) KiB
        self.every, self.stop = every, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            anon, file = _status_kib("RssAnon") or 0, _status_kib("RssFile") or 0
            if anon + file > self.best[0]:
                self.best = (anon + file, anon, file)
            self.stop.wait(self.every)

    def done(self) -> tuple[int, int, int]:
        self.stop.set()
        self.thread.join()
        return self.best


def one(lib: str, dtype: str, d: Path, threads: int) -> None:
    """In a fresh process: import the library, load the model once, print one JSON line."""
    import torch

    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    if lib == "qkv":
        from qkv.core.hub.pretrained import load_pretrained
    else:
        import transformers
        from transformers import AutoModelForCausalLM

        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()
    t1 = time.perf_counter()
    base = _status_kib("VmRSS")
    sampler = _Sampler()
    if lib == "qkv":
        model, _ = load_pretrained(str(d), dtype=dtype)
    else:
        model = AutoModelForCausalLM.from_pretrained(str(d), dtype=getattr(torch, dtype))
    t2 = time.perf_counter()
    peak = _status_kib("VmHWM")
    if peak is None:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _, anon, file = sampler.done()
    after = _status_kib("VmRSS") or 0
    with torch.no_grad():  # read every weight once: a weight still in the mapped file is paged in now
        for q in model.parameters():
            q.sum()
    used = _status_kib("VmRSS") or 0
    p = next(model.parameters())
    n = sum(q.numel() for q in model.parameters())
    out = dict(
        import_s=t1 - t0,
        load_s=t2 - t1,
        base_gb=_gb(base or 0),
        peak_gb=_gb(peak),
        peak_anon_gb=_gb(anon),
        peak_file_gb=_gb(file),
        after_gb=_gb(after),
        used_gb=_gb(used),
        dtype=str(p.dtype),
        n=n,
    )
    print(json.dumps(out))


def run_one(lib: str, dtype: str, d: Path, threads: int) -> dict:
    cmd = [sys.executable, __file__, "--one", lib, dtype, "--dir", str(d), "--threads", str(threads)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tail = (r.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"exit {r.returncode}: {tail}", "stderr": r.stderr}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="where the model is built (reused if complete)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: the machine's cores)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", nargs=2, metavar=("LIB", "DTYPE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    threads = args.threads or os.cpu_count() or 1
    if args.one:
        return one(args.one[0], args.one[1], args.dir, threads)

    import torch

    d = build_model_dir(args.dir)
    n = n_params(d)
    f32, bf16 = n * 4 / 1e9, n * 2 / 1e9
    warm_page_cache(d)
    results: dict[tuple[str, str], list[dict]] = {run: [] for run in RUNS}
    errors: dict[tuple[str, str], str] = {}
    for r in range(args.rounds):
        for run in RUNS if r % 2 == 0 else RUNS[::-1]:
            out = run_one(*run, d, threads)
            if "error" in out:
                errors[run] = out["error"]
                print(f"{run[0]} {run[1]} failed: {out['error']}", flush=True)
                if os.environ.get("QKV_BENCH_VERBOSE"):
                    print(out["stderr"], file=sys.stderr)
            else:
                results[run].append(out)

    def med(run, key):
        xs = [x[key] for x in results[run]]
        return statistics.median(xs) if xs else float("nan")

    print(
        f"\nload time and peak memory, Qwen2.5-0.5B's shape ({n:,} weights, random), a bfloat16 "
        f"model.safetensors in the page cache,\neach load in a fresh process, {args.rounds} round(s), "
        f"torch {torch.__version__}, {threads} threads, {os.cpu_count()} CPUs"
    )
    print(f"float32 weights (n_params x 4): {f32:.2f} GB; bfloat16 weights: {bf16:.2f} GB")
    print(
        f"{'':<22}{'import s':>9}{'load s':>8}{'base GB':>9}{'peak GB':>9}{'anon+file':>12}{'after GB':>10}"
        f"{'used GB':>9}{'peak/f32 w':>12}  loaded as"
    )
    for run in RUNS:
        name = f"{run[0]} {run[1]}"
        if not results[run]:
            print(f"{name:<22}  failed: {errors.get(run)}")
            continue
        last = results[run][-1]
        extra = "" if last["n"] == n else f", {last['n']:,} parameters"
        print(
            f"{name:<22}{med(run, 'import_s'):>9.2f}{med(run, 'load_s'):>8.2f}{med(run, 'base_gb'):>9.2f}"
            f"{med(run, 'peak_gb'):>9.2f}{med(run, 'peak_anon_gb'):>7.2f}+{med(run, 'peak_file_gb'):<4.2f}"
            f"{med(run, 'after_gb'):>10.2f}{med(run, 'used_gb'):>9.2f}{med(run, 'peak_gb') / f32:>11.2f}x"
            f"  {last['dtype']}{extra}"
        )
    print("\nratio qkv/transformers:")
    for dtype in ("float32", "bfloat16"):
        q, h = ("qkv", dtype), ("transformers", dtype)
        if results[q] and results[h]:
            ratio = lambda key, q=q, h=h: med(q, key) / med(h, key)  # noqa: E731
            with_import = (med(q, "load_s") + med(q, "import_s")) / (med(h, "load_s") + med(h, "import_s"))
            above_base = (med(q, "peak_gb") - med(q, "base_gb")) / (med(h, "peak_gb") - med(h, "base_gb"))
            print(
                f"  {dtype:<9} load time {ratio('load_s'):.2f}x, load + import {with_import:.2f}x, "
                f"peak RSS {ratio('peak_gb'):.2f}x, peak RSS above base {above_base:.2f}x, "
                f"RSS once every weight is read {ratio('used_gb'):.2f}x"
            )
    q32, h32, q16, h16 = (
        ("qkv", "float32"),
        ("transformers", "float32"),
        ("qkv", "bfloat16"),
        ("transformers", "bfloat16"),
    )
    if results[q32]:
        ratio = med(q32, "peak_gb") / f32
        print(
            f"goal: qkv float32 peak RSS <= 1.3x the float32 weights: {ratio:.2f}x "
            f"({'met' if ratio <= 1.3 else 'NOT met'})"
        )
    for q, h in ((q32, h32), (q16, h16)):
        if results[q] and results[h]:
            ok = med(q, "load_s") <= med(h, "load_s")
            print(
                f"goal: qkv {q[1]} load time <= transformers': {med(q, 'load_s'):.2f} s vs "
                f"{med(h, 'load_s'):.2f} s ({'met' if ok else 'NOT met'})"
            )
    if args.json:
        print(json.dumps({f"{a} {b}": v for (a, b), v in results.items()}))


if __name__ == "__main__":
    main()
