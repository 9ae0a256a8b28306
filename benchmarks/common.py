"""Shared set-up for the benchmarks: the same GPT-2-shaped model in qkv and in Hugging Face."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import torch

import qkv

SHAKESPEARE = Path(__file__).resolve().parents[2] / "shared" / "data" / "tinyshakespeare.txt"


def quiet_transformers() -> None:
    import transformers

    transformers.logging.set_verbosity_error()


def gpt2_shaped(
    preset: str, d_vocab: int, n_ctx: int | None = None, init_std: float = 0.02, activation: str = "gelu_tanh"
) -> qkv.ModelConfig:
    """The preset's sizes with GPT-2's choices (tied embeddings, no unembedding bias, by default
    GPT-2's tanh GELU), so the Hugging Face model has exactly the same parameters and function."""
    sizes = dict(qkv.PRESETS[preset].model)
    for k in ("dropout_embed", "dropout_resid", "dropout_attn"):
        sizes.pop(k, None)
    if n_ctx is not None:
        sizes["n_ctx"] = n_ctx
    return qkv.ModelConfig(
        d_vocab=d_vocab, tie_embeddings=True, unembed_bias=False, activation=activation, init_std=init_std, **sizes
    )


def model_pair(cfg: qkv.ModelConfig, seed: int = 0):
    """(qkv model, Hugging Face GPT2LMHeadModel) holding identical weights."""
    quiet_transformers()
    torch.manual_seed(seed)
    ours = qkv.GPT(cfg)
    theirs = qkv.to_hf(ours)
    return ours, theirs


def text_ids(d_vocab: int, n: int = 200_000) -> torch.Tensor:
    """Real text (tiny Shakespeare, characters) when it is there, else random ids."""
    if SHAKESPEARE.exists():
        text = SHAKESPEARE.read_text(encoding="utf-8")[:n]
        vocab = sorted(set(text))
        index = {c: i for i, c in enumerate(vocab)}
        return torch.tensor([index[c] % d_vocab for c in text])
    return torch.randint(0, d_vocab, (n,), generator=torch.Generator().manual_seed(0))


def interleaved(fns: dict, rounds: int) -> dict[str, list[float]]:
    """Run each function once per round, alternating, and collect seconds; alternation spreads
    the machine's noise over all contestants."""
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return times


def median(xs) -> float:
    return statistics.median(xs)


def machine() -> str:
    return f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs"


def peak_rss_mib() -> float:
    """This process's peak resident memory. VmHWM starts afresh at exec; ru_maxrss on Linux
    carries over the parent's peak from before the fork, so it is only the fallback."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
