"""Speed on a Qwen2.5-0.5B-shaped model: qkv and Hugging Face, same directory, float32 and bfloat16.

The model directory is benchmarks/llm_load.py's (built there by build_model_dir, random weights,
Qwen2.5-0.5B's exact shape; reused when present). For each dtype both sides load it (qkv's
load_pretrained, transformers' AutoModelForCausalLM.from_pretrained) and, in this one process under the
same thread settings, each measurement is run alternately on the two sides (median of --rounds):

    forward     one pass over 32 tokens (text of tiny Shakespeare through the model's tokenizer), batch 1;
                transformers with use_cache=False (qkv's forward builds no cache either)
    trace       qkv's run_with_trace of the same 32 tokens (every named intermediate kept); as a rough
                peer, transformers' forward with output_attentions=True and output_hidden_states=True
                (attn_implementation "eager" for it, as sdpa returns no attention weights)
    generate    greedy decoding of 32 new tokens after an 8-token prompt, prompt included in the time:
                qkv's generate_ids(temperature=0) and transformers' generate(do_sample=False,
                max_new_tokens=32, min_new_tokens=32); both must give the same tokens ("same tokens")

The logits of the forward are compared too (max |qkv - transformers| over the 32 x 151936 logits).
Goal: qkv's generation at least 1.3x transformers' tok/s.

    python benchmarks/llm_speed.py [--dtype both|float32|bfloat16] [--rounds 5] [--gen-rounds 3]
                                   [--dir /tmp/qkv-bench/qwen2.5-0.5b-shape] [--threads N]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time

import torch
from common import interleaved, machine, median, quiet_transformers
from llm_load import DEFAULT_DIR, build_model_dir, n_params, sample_text

from qkv.core.decode.sample import generate_ids
from qkv.core.hub.pretrained import load_pretrained

T = 32  # forward and trace tokens
PROMPT = 8
NEW = 32


def _mb(tensors) -> float:
    return sum(t.numel() * t.element_size() for t in tensors) / 1e6


def measure(d, dtype: str, rounds: int, gen_rounds: int) -> dict:
    from transformers import AutoModelForCausalLM

    quiet_transformers()
    import transformers

    transformers.logging.disable_progress_bar()
    ours, tok = load_pretrained(str(d), dtype=dtype)
    theirs = AutoModelForCausalLM.from_pretrained(str(d), dtype=getattr(torch, dtype)).eval()
    ids = tok.encode(sample_text(4000))
    assert len(ids) >= T, f"the tokenizer gave only {len(ids)} tokens"
    x = torch.tensor([ids[:T]])
    prompt = ids[:PROMPT]
    r: dict = {}

    with torch.inference_mode():
        # forward
        def fwd_qkv():
            return ours(x)

        def fwd_hf():
            return theirs(x, use_cache=False).logits

        a, b = fwd_qkv().float(), fwd_hf().float()
        r["logits_max_diff"] = (a - b).abs().max().item()
        r["logits_std"] = b.std().item()
        r["argmax_agree"] = (a.argmax(-1) == b.argmax(-1)).float().mean().item()
        times = interleaved({"qkv": fwd_qkv, "hf": fwd_hf}, rounds)
        r["forward_ms"] = {k: median(v) * 1e3 for k, v in times.items()}

        # trace
        def trace_qkv():
            return ours.run_with_trace(x)

        impl = theirs.config._attn_implementation

        def trace_hf():
            return theirs(x, use_cache=False, output_attentions=True, output_hidden_states=True)

        theirs.set_attn_implementation("eager")
        try:
            _, trace = trace_qkv()
            out = trace_hf()
            r["trace_entries"] = {"qkv": len(trace), "hf": len(out.attentions) + len(out.hidden_states)}
            r["trace_mb"] = {"qkv": _mb(trace.values()), "hf": _mb([*out.attentions, *out.hidden_states])}
            del trace, out
            times = interleaved({"qkv": trace_qkv, "hf": trace_hf}, rounds)
            r["trace_ms"] = {k: median(v) * 1e3 for k, v in times.items()}
        finally:
            theirs.set_attn_implementation(impl)

    # greedy generation
    def gen_qkv():
        return list(generate_ids(ours, prompt, NEW, temperature=0))

    @torch.inference_mode()
    def gen_hf():
        p = torch.tensor([prompt])
        out = theirs.generate(
            p,
            attention_mask=torch.ones_like(p),
            max_new_tokens=NEW,
            min_new_tokens=NEW,
            do_sample=False,
            pad_token_id=0,
        )
        return out[0, PROMPT:].tolist()

    mine, hers = gen_qkv(), gen_hf()  # also the warm-up
    r["same_tokens"] = mine == hers
    r["first_difference"] = next((i for i, (u, v) in enumerate(zip(mine, hers)) if u != v), None)
    times = interleaved({"qkv": gen_qkv, "hf": gen_hf}, gen_rounds)
    r["tok_s"] = {k: NEW / median(v) for k, v in times.items()}
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", choices=("both", "float32", "bfloat16"), default="both")
    ap.add_argument("--rounds", type=int, default=5, help="forward and trace: median of this many")
    ap.add_argument("--gen-rounds", type=int, default=3, help="generation: median of this many")
    ap.add_argument("--dir", default=DEFAULT_DIR, help="the model directory (built by llm_load.py if absent)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: the machine's cores)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads or os.cpu_count() or 1)
    d = build_model_dir(args.dir)
    dtypes = ("float32", "bfloat16") if args.dtype == "both" else (args.dtype,)
    print(
        f"Qwen2.5-0.5B's shape ({n_params(d):,} weights, random), batch 1, {machine()}\n"
        f"forward and trace: {T} tokens, median of {args.rounds}; generate: greedy, {PROMPT}-token prompt "
        f"+ {NEW} new tokens (prompt included), median of {args.gen_rounds}"
    )
    results = {}
    for dtype in dtypes:
        t = time.perf_counter()
        r = measure(d, dtype, args.rounds, args.gen_rounds)
        gc.collect()  # this dtype's two models go before the next dtype's are loaded
        results[dtype] = r
        f, tr, g = r["forward_ms"], r["trace_ms"], r["tok_s"]
        print(f"\n{dtype} ({time.perf_counter() - t:.0f} s with loading)")
        print(f"{'':<30}{'qkv':>10}{'transformers':>14}{'qkv/transformers':>18}")
        print(f"{'forward 32 tokens, ms':<30}{f['qkv']:>10.1f}{f['hf']:>14.1f}{f['qkv'] / f['hf']:>17.2f}x")
        print(f"{'trace 32 tokens, ms':<30}{tr['qkv']:>10.1f}{tr['hf']:>14.1f}{tr['qkv'] / tr['hf']:>17.2f}x")
        print(f"{'generate, tok/s':<30}{g['qkv']:>10.1f}{g['hf']:>14.1f}{g['qkv'] / g['hf']:>17.2f}x")
        print(
            f"  trace holds: qkv {r['trace_entries']['qkv']} tensors, {r['trace_mb']['qkv']:.1f} MB; transformers "
            f"{r['trace_entries']['hf']} (attentions + hidden states), {r['trace_mb']['hf']:.1f} MB"
        )
        print(
            f"  logits max |qkv - transformers| {r['logits_max_diff']:.3g} (logits std {r['logits_std']:.3g}), "
            f"argmax equal at {r['argmax_agree'] * 100:.0f}% of the {T} positions"
        )
        diff = "" if r["same_tokens"] else f" (first difference at new token {r['first_difference']})"
        print(f"  same tokens: {'yes' if r['same_tokens'] else 'no'}{diff}")
        ratio = g["qkv"] / g["hf"]
        print(
            f"  goal: qkv tok/s >= 1.3x transformers': {ratio:.2f}x ({'met' if ratio >= 1.3 else 'NOT met'})",
            flush=True,
        )
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
