"""MiniLM (all-MiniLM-L6-v2) in qkv next to transformers' BertModel: a plain forward and a full trace.

64 WordPiece tokens, batch 1, evaluation mode, float32, both models loaded from the same directory
(the `real` extra). "qkv forward" uses the fused attention kernel; "qkv run_with_trace" takes the
explicit path and keeps every activation (the path explain, the page and the lessons use);
"BertModel" is transformers' default (sdpa) forward. Also: `qkv explain ... --ckpt minilm` end to
end in a fresh process (the wall time a user waits, model load included) and `explain` alone.

    python benchmarks/minilm_trace.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import torch
from common import interleaved, machine, median, quiet_transformers

os.environ.setdefault("HF_HUB_OFFLINE", "1")
TEXT = (
    "The bank raised its rates, so I walked along the river bank and ate an apple while thinking about "
    "Apple shares, attention heads, and why every token looks at every other token in an encoder."
)
T = 64


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    from transformers import BertModel

    from qkv.core.hub.pretrained import load_pretrained, minilm_dir
    from qkv.presentation.explanation import explain

    quiet_transformers()
    t = time.perf_counter()
    model, tok = load_pretrained("minilm")
    load_s = time.perf_counter() - t
    bert = BertModel.from_pretrained(str(minilm_dir())).eval()
    ids = torch.tensor([tok.encode(TEXT * 3)[: T - 1] + [tok.encode("")[-1]]])  # (1, 64): [CLS] ... [SEP]
    assert ids.shape == (1, T)
    with torch.inference_mode():
        runs = {
            "BertModel": lambda: bert(input_ids=ids),
            "qkv forward": lambda: model(ids),
            "qkv run_with_trace": lambda: model.run_with_trace(ids),
        }
        for f in runs.values():
            f()  # warm up
        times = interleaved(runs, args.rounds)
        diff = (model(ids) - bert(input_ids=ids).last_hidden_state).abs().max().item()
    ms = {k: median(v) * 1e3 for k, v in times.items()}
    e = []
    for _ in range(5):
        t = time.perf_counter()
        explain(model, tok, "I ate an apple", layer=2, head=5).to_text()
        e.append(time.perf_counter() - t)
    t = time.perf_counter()
    cli = subprocess.run(
        [sys.executable, "-m", "qkv", "explain", "I ate an apple", "--ckpt", "minilm", "--layer", "2", "--head", "5"],
        capture_output=True,
        text=True,
    )
    cli_s = time.perf_counter() - t
    print(f"all-MiniLM-L6-v2, {T} tokens, batch 1, float32, {machine()}")
    print(f"{'':<22}{'ms':>9}{'vs BertModel':>14}")
    for k, v in ms.items():
        print(f"{k:<22}{v:>9.2f}{v / ms['BertModel']:>13.2f}x")
    print(f"max |qkv - BertModel| over the last hidden states: {diff:.2e}")
    print(
        f"load_pretrained('minilm'): {load_s * 1e3:.0f} ms; "
        f"explain (layer 2, head 5), model loaded: {median(e) * 1e3:.0f} ms"
    )
    print(
        f'`qkv explain "I ate an apple" --ckpt minilm --layer 2 --head 5` in a fresh process: {cli_s:.2f} s '
        f"(exit {cli.returncode}; target < 3 s)"
    )


if __name__ == "__main__":
    main()
