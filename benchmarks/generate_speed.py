"""Generation speed: tokens/s of qkv (KV cache) and of Hugging Face `generate`, same weights.

Batch 1, a 16-token prompt, 200 new tokens, greedy decoding on both sides, so the two must
also produce the same tokens (printed). n_ctx is 256 for every preset so that 216 tokens fit
(baby's own n_ctx is 64). Weights are random with std 0.3, large enough that no two logits tie.
qkv without its cache is shown too, to see what the cache buys. Both sides run in this process
under the same thread settings (torch's default unless the caller sets OMP_NUM_THREADS).

"read bound" is the speed at which this machine can merely read every weight matrix once per
token (a sum over each matrix, measured here, at this moment): no batch-1 decoder that reads its
float32 weights once per token can be faster. At `small` (10.6 M weights, 42 MB, more than the
L3 cache) both qkv and Hugging Face are close to that bound, so their ratio cannot approach 3x:
on this 2-core machine the read bound was 321 tok/s and Hugging Face's speed 86 (3.7x), and the 24
matrix-vector products alone (MKL's, through addmm, nothing else) ran at 164 tok/s: they read at
about half the speed of a plain sum. qkv itself did 114 tok/s.
At `baby` the weights sit in cache and a token costs what the ~80 operator calls of one step cost
(torch.profiler, per token of about 0.8 ms: addmm ~20 us each x 17 = 45%, the attention kernel
~38 us x 4 = 19%, layer_norm ~9 us x 9 = 11%, the cache writes' copies and views ~10%, the rest Python).
One thread instead of two made both sides slower here (baby 680 vs 950 tok/s for qkv).

The batched line generates 8 prompts of 8..22 tokens at once (qkv: generate_batch, its rows
right-aligned with left padding; Hugging Face: the same left padding and attention mask) and
counts new tokens of all rows per second.

    python benchmarks/generate_speed.py [--presets baby small] [--new-tokens 200] [--rounds 5] [--batch 8]
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from common import gpt2_shaped, interleaved, machine, median, model_pair

from qkv.core.decode.sample import generate_batch, generate_ids

PROMPT_LEN = 16


def read_bound(model, rounds: int = 20) -> float:
    """Tokens/s if a token cost only reading each weight matrix once (a sum over it)."""
    weights = [p for p in model.parameters() if p.dim() == 2]
    with torch.inference_mode():
        for w in weights:
            w.sum()
        t = time.perf_counter()
        for _ in range(rounds):
            for w in weights:
                w.sum()
    return rounds / (time.perf_counter() - t)


def measure(preset: str, new_tokens: int, rounds: int) -> dict:
    cfg = gpt2_shaped(preset, d_vocab=65, n_ctx=256, init_std=0.3)
    ours, theirs = model_pair(cfg)
    ours.eval()
    prompt = torch.randint(0, cfg.d_vocab, (1, PROMPT_LEN), generator=torch.Generator().manual_seed(0))
    ids = prompt[0].tolist()

    def run_qkv(cache=True):
        return list(generate_ids(ours, ids, new_tokens, temperature=0, use_cache=cache))

    @torch.inference_mode()
    def run_hf():
        out = theirs.generate(
            prompt,
            attention_mask=torch.ones_like(prompt),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=0,
        )
        return out[0, PROMPT_LEN:].tolist()

    same = run_qkv() == run_hf() == run_qkv(cache=False)
    fns = {"qkv": run_qkv, "hf": run_hf, "qkv_nocache": lambda: run_qkv(cache=False)}
    times = interleaved(fns, rounds)
    result = {name: new_tokens / median(t) for name, t in times.items()}
    result["same_tokens"] = same
    result["read_bound"] = read_bound(ours)
    return result


def measure_batch(preset: str, batch: int, new_tokens: int, rounds: int) -> dict:
    """8 prompts of different lengths at once, left padding on both sides."""
    cfg = gpt2_shaped(preset, d_vocab=65, n_ctx=256, init_std=0.3)
    ours, theirs = model_pair(cfg)
    ours.eval()
    g = torch.Generator().manual_seed(1)
    prompts = [torch.randint(1, cfg.d_vocab, (8 + 2 * i,), generator=g).tolist() for i in range(batch)]
    P = max(len(p) for p in prompts)
    padded = torch.tensor([[0] * (P - len(p)) + p for p in prompts])  # (batch, P), left padding
    mask = torch.tensor([[0] * (P - len(p)) + [1] * len(p) for p in prompts])

    def run_qkv():
        return generate_batch(ours, prompts, new_tokens, temperature=0)

    @torch.inference_mode()
    def run_hf():
        out = theirs.generate(
            padded,
            attention_mask=mask,
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=0,
        )
        return out[:, P:].tolist()

    ours_ids, theirs_ids = run_qkv(), run_hf()
    same = "yes" if ours_ids == theirs_ids else "NO"
    if same == "NO":  # whose batch strays: each side's rows against Hugging Face's one prompt at a time
        with torch.inference_mode():
            alone = [
                theirs.generate(
                    torch.tensor([p]),
                    attention_mask=torch.ones(1, len(p), dtype=torch.long),
                    max_new_tokens=new_tokens,
                    min_new_tokens=new_tokens,
                    do_sample=False,
                    pad_token_id=0,
                )[0, len(p) :].tolist()
                for p in prompts
            ]
        if ours_ids == alone:
            strays = sum(a != b for a, b in zip(theirs_ids, alone))
            same = f"qkv = HF one by one; HF's batch differs in {strays} row(s)"
    times = interleaved({"qkv": run_qkv, "hf": run_hf}, rounds)
    result = {name: batch * new_tokens / median(t) for name, t in times.items()}
    result["same_tokens"] = same
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", nargs="+", default=["baby", "small"])
    ap.add_argument("--new-tokens", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batch", type=int, default=8, help="prompts in the batched line (0: skip it)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    print(f"generation speed, batch 1, {args.new_tokens} new tokens, greedy, {machine()}")
    print(
        f"{'preset':<8}{'qkv tok/s':>11}{'HF tok/s':>10}{'qkv/HF':>8}{'no cache':>10}{'read bound':>12}"
        f"{'bound/HF':>10}  same tokens"
    )
    results = {}
    for preset in args.presets:
        r = measure(preset, args.new_tokens, args.rounds)
        results[preset] = r
        print(
            f"{preset:<8}{r['qkv']:>11,.0f}{r['hf']:>10,.0f}{r['qkv'] / r['hf']:>7.2f}x{r['qkv_nocache']:>10,.0f}"
            f"{r['read_bound']:>12,.0f}{r['read_bound'] / r['hf']:>9.2f}x  {'yes' if r['same_tokens'] else 'NO'}",
            flush=True,
        )
    if args.batch:
        print(
            f"\nbatched: {args.batch} prompts of 8..{6 + 2 * args.batch} tokens, left padding, "
            f"{args.new_tokens} new tokens each, greedy; tok/s counts every row's new tokens"
        )
        print(f"{'preset':<8}{'qkv tok/s':>11}{'HF tok/s':>10}{'qkv/HF':>8}  same tokens")
        for preset in args.presets:
            r = measure_batch(preset, args.batch, args.new_tokens, max(1, args.rounds // 2))
            results[f"{preset}_batch{args.batch}"] = r
            print(
                f"{preset:<8}{r['qkv']:>11,.0f}{r['hf']:>10,.0f}{r['qkv'] / r['hf']:>7.2f}x  {r['same_tokens']}",
                flush=True,
            )
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
