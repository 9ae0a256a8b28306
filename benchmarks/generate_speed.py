"""Generation speed: tokens/s of qkv (KV cache) and of Hugging Face `generate`, same weights.

Batch 1, a 16-token prompt, 200 new tokens, greedy decoding on both sides, so the two must
also produce the same tokens (printed). n_ctx is 256 for every preset so that 216 tokens fit
(baby's own n_ctx is 64). Weights are random with std 0.3, large enough that no two logits tie.
qkv without its cache is shown too, to see what the cache buys.

    python benchmarks/generate_speed.py [--presets baby small] [--new-tokens 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json

import torch

from common import gpt2_shaped, interleaved, machine, median, model_pair
from qkv.core.sample import generate_ids

PROMPT_LEN = 16


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
        out = theirs.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new_tokens,
                              min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
        return out[0, PROMPT_LEN:].tolist()

    same = run_qkv() == run_hf() == run_qkv(cache=False)
    fns = {"qkv": run_qkv, "hf": run_hf, "qkv_nocache": lambda: run_qkv(cache=False)}
    times = interleaved(fns, rounds)
    result = {name: new_tokens / median(t) for name, t in times.items()}
    result["same_tokens"] = same
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", nargs="+", default=["baby", "small"])
    ap.add_argument("--new-tokens", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    print(f"generation speed, batch 1, {args.new_tokens} new tokens, greedy, {machine()}")
    print(f"{'preset':<8}{'qkv tok/s':>11}{'HF tok/s':>10}{'qkv/HF':>8}{'no cache':>10}  same tokens")
    results = {}
    for preset in args.presets:
        r = measure(preset, args.new_tokens, args.rounds)
        results[preset] = r
        print(f"{preset:<8}{r['qkv']:>11,.0f}{r['hf']:>10,.0f}{r['qkv'] / r['hf']:>7.2f}x{r['qkv_nocache']:>10,.0f}  "
              f"{'yes' if r['same_tokens'] else 'NO'}", flush=True)
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
