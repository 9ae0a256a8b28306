"""Generation in float32 and in bfloat16: tokens/s of qkv and of transformers in the same dtype, same weights.

Models: `baby` and `small` (qkv GPTs with GPT-2's choices and random weights, std 0.3 so no two logits tie,
n_ctx 256; transformers gets the same weights through qkv's to_hf, what export_hf writes), and SmolLM2-
135M-Instruct (qkv opens `smollm2`, the GGUF file itself; transformers the directory it dequantised from the
same GGUF file once, benchmarks/smollm2_speed.py's build_dir, so neither side pays the 16 s conversion in a
round). In bfloat16, qkv's weights are cast as `--dtype bfloat16` casts a run's (checkpoint.weights_in) or
loaded so (load_pretrained), transformers' model is cast with .to(torch.bfloat16) or loaded with dtype=.

Greedy decoding of --new-tokens new tokens on both sides with their KV caches, the end of text stopping
neither: batch 1 (qkv's generate_ids, one prompt) and batch 8 (8 prompts of 8..22 tokens generated
together: qkv's generate_batch, its rows right-aligned in one cache; transformers' generate with the same
left padding and attention mask). tok/s counts every row's new tokens. Each pair runs alternately,
--rounds times, in this one process under the same thread count; shown are the medians of wall time, the
ratio qkv/HF, the same ratio from CPU seconds (which leave out the time a call waited for a core while
other programs kept the machine busy), and "same": the rows whose tokens agree on both sides (in
bfloat16 the two sum in their own orders, so a near tie may go either way), and in bfloat16 the rows each
side writes as qkv does in float32 (how far each side's bfloat16 strays from the exact tokens).

The header says what this CPU computes bfloat16 with (qkv.core.machine.cpu.bf16_support): AMX several
times float32, AVX-512 BF16 alone about 2.5x, neither slower than float32.

Measured on 5 December 2026 on this project's 2-core machine (AVX-512 BF16, no AMX; torch 2.13, 1 thread,
qkv's choice while other programs kept both cores busy: load average 15-17, so every figure is low and
noisy; the CPU-time ratio in brackets), 32 new tokens, tok/s of qkv / transformers:

    model     batch  float32                 bfloat16                bf16/f32 qkv, HF
    baby      1      541 / 143   3.8x (4.0)  525 / 104   5.1x (4.9)  0.97x, 0.73x
    baby      8      1100 / 690  1.6x (2.0)  980 / 503   1.9x (1.7)  0.89x, 0.73x
    small     1      53 / 36     1.5x (1.5)  111 / 40    2.8x (2.8)  2.09x, 1.11x
    small     8      205 / 173   1.2x (1.2)  246 / 213   1.2x (1.2)  1.20x, 1.23x
    SmolLM2   1      5.6 / 4.7   1.2x (1.2)  11.3 / 5.9  1.9x (2.0)  2.02x, 1.25x
    SmolLM2   8      14.6 / 17.4 0.8x (0.9)  23.5 / 23.9 1.0x (0.9)  1.61x, 1.37x

In float32 both sides wrote the same tokens on every row. In bfloat16 the two differ after a few tokens
on most rows, and so does each from its own float32 tokens: on random weights of std 0.3 (baby, small) a
rounding changes the argmax soon; on SmolLM2 one forward of 64 tokens is as far from float32 on both sides
(max |logit error| 0.86 for both, mean 0.107 qkv, 0.106 transformers; argmax agreeing at 98.4% of the
positions on both sides), so the bfloat16 computation is as faithful as transformers' and the different
tokens are near ties going either way.

    python benchmarks/bf16_speed.py [--models baby small smollm2] [--new-tokens 32] [--rounds 3]
                                    [--batch 8] [--threads N] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import time

import torch
from common import gpt2_shaped, machine, median, model_pair, quiet_transformers
from llm_load import sample_text
from smollm2_speed import BF16_NOTE, DEFAULT_DIR, build_dir, interleaved

from qkv.core.decode.sample import generate_batch, generate_ids
from qkv.core.hub.pretrained import load_pretrained
from qkv.core.machine.cpu import bf16_support
from qkv.core.machine.threads import configure
from qkv.core.train.checkpoint import weights_in

DTYPES = ("float32", "bfloat16")


def pair(name: str, dtype: str):
    """(qkv model, transformers model, prompts' source ids): the same weights, in `dtype`."""
    if name == "smollm2":
        from transformers import AutoModelForCausalLM

        ours, tok = load_pretrained("smollm2", dtype=dtype)
        theirs = AutoModelForCausalLM.from_pretrained(str(build_dir(DEFAULT_DIR)), dtype=getattr(torch, dtype))
        source = tok.encode(sample_text(3000))
    else:
        ours, theirs = model_pair(gpt2_shaped(name, d_vocab=65, n_ctx=256, init_std=0.3))
        if dtype != "float32":
            weights_in(ours, getattr(torch, dtype))
            theirs = theirs.to(getattr(torch, dtype))
        source = torch.randint(1, 65, (3000,), generator=torch.Generator().manual_seed(1)).tolist()
    theirs.generation_config.eos_token_id = None  # new_tokens on both sides (qkv: stop_ids=())
    return ours.eval(), theirs.eval(), source


def prompts_of(source: list[int], batch: int) -> list[list[int]]:
    """`batch` prompts of 8, 10, 12, ... tokens, from different places of `source` (one of 16 for batch 1)."""
    if batch == 1:
        return [source[:16]]
    return [source[100 * i : 100 * i + 8 + 2 * i] for i in range(batch)]


def measure(ours, theirs, prompts: list[list[int]], new: int, rounds: int) -> dict:
    """Greedy tok/s of both (medians of wall and CPU time) and how many rows agree."""
    P = max(len(p) for p in prompts)
    padded = torch.tensor([[0] * (P - len(p)) + p for p in prompts])  # (B, P), left padding
    mask = torch.tensor([[0] * (P - len(p)) + [1] * len(p) for p in prompts])

    def run_qkv():
        if len(prompts) == 1:
            return [list(generate_ids(ours, prompts[0], new, temperature=0, stop_ids=()))]
        return generate_batch(ours, prompts, new, temperature=0, stop_ids=())

    @torch.inference_mode()
    def run_hf():
        out = theirs.generate(
            padded, attention_mask=mask, max_new_tokens=new, min_new_tokens=new, do_sample=False, pad_token_id=0
        )
        return out[:, P:].tolist()

    mine, hers = run_qkv(), run_hf()  # also the warm-up
    assert all(len(row) == new for row in mine + hers), [len(row) for row in mine + hers]
    times = interleaved({"qkv": run_qkv, "hf": run_hf}, rounds)
    tokens = len(prompts) * new
    return {
        **{k: tokens / median(v) for k, v in times.items() if not k.endswith(" cpu")},
        "cpu_ratio": median(times["hf cpu"]) / median(times["qkv cpu"]),
        "same": sum(a == b for a, b in zip(mine, hers)),
        "rows": len(prompts),
        "ids": {"qkv": mine, "hf": hers},
    }


def as_float32(r: dict, exact: dict) -> str:
    """In bfloat16: the rows each side writes as qkv writes them in float32 (`exact`: that line's result)."""
    if exact is r:
        return ""
    ref = exact["ids"]["qkv"]
    qkv, hf = (sum(a == b for a, b in zip(r["ids"][k], ref)) for k in ("qkv", "hf"))
    return f"{qkv}/{r['rows']} {hf}/{r['rows']}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["baby", "small", "smollm2"])
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8, help="the batched line's prompts (1: batch 1 only)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: qkv's choice, free cores)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    threads = configure(args.threads)
    quiet_transformers()
    import transformers

    transformers.logging.disable_progress_bar()
    bf16 = bf16_support()
    print(
        f"greedy generation, {args.new_tokens} new tokens, KV cache on both sides, median of {args.rounds}; "
        f"{machine()}; this CPU: {BF16_NOTE[bf16]} ({bf16})"
    )
    print(
        f"{'model':<9}{'batch':>5}  {'dtype':<9}{'qkv tok/s':>10}{'HF tok/s':>10}{'qkv/HF':>8}{'(cpu)':>7}"
        "  same  as float32 (qkv, HF)"
    )
    results: dict = {}
    for name in args.models:
        for dtype in DTYPES:
            t = time.perf_counter()
            ours, theirs, source = pair(name, dtype)
            for batch in sorted({1, args.batch}):
                r = measure(ours, theirs, prompts_of(source, batch), args.new_tokens, args.rounds)
                results[f"{name} {batch} {dtype}"] = r
                exact = results[f"{name} {batch} float32"]
                print(
                    f"{name:<9}{batch:>5}  {dtype:<9}{r['qkv']:>10,.1f}{r['hf']:>10,.1f}{r['qkv'] / r['hf']:>7.2f}x"
                    f"{r['cpu_ratio']:>6.2f}x  {r['same']}/{r['rows']}  {as_float32(r, exact)}",
                    flush=True,
                )
            del ours, theirs
            gc.collect()
            results[f"{name} {dtype} seconds"] = time.perf_counter() - t
    _speedups(results, args.models, sorted({1, args.batch}))
    if args.json:
        for r in results.values():
            if isinstance(r, dict):
                r.pop("ids")
        print(json.dumps({"bf16_support": bf16, "threads": threads, **results}))


def _speedups(results: dict, models: list[str], batches: list[int]) -> None:
    """bfloat16's tok/s over float32's, for each side."""
    print(f"\nbfloat16 / float32 tok/s\n{'model':<9}{'batch':>5}{'qkv':>8}{'HF':>8}")
    for name in models:
        for batch in batches:
            f, b = results[f"{name} {batch} float32"], results[f"{name} {batch} bfloat16"]
            print(f"{name:<9}{batch:>5}{b['qkv'] / f['qkv']:>7.2f}x{b['hf'] / f['hf']:>7.2f}x")


if __name__ == "__main__":
    main()
