"""Lesson: why attention multiplies by V — train z = A·V against z = A·K and compare.

Pairs of GPTs of the same shape are trained on the same text with the same seed, batches and number
of steps. Within a pair the only difference is what attention mixes: the standard values v = x W_V,
or the keys themselves (values="k": z = A k, no W_V), so that the vector a token is found by is also
all it can hand over. One pair has heads of the usual width, one has very narrow heads (d_head 2),
where keys have no room to serve both jobs. All are scored by their loss and by held-out probes.
"""

from __future__ import annotations

from functools import lru_cache

from qkv.analysis.probing import probe_accuracy
from qkv.core import corpus
from qkv.core.config import ModelConfig, TrainConfig

from .training import fit, threads, tokenize

NEEDS_MODEL = False
N_SENTENCES = 3000  # of the built-in Chinese corpus
MODEL = {"n_ctx": 32, "d_model": 64, "n_heads": 4, "n_layers": 2}
WIDTHS = (16, 2)  # d_head of the two pairs: the usual d_model / n_heads, and very narrow heads
TRAIN = {"steps": 500, "batch_size": 16, "lr": 3e-3, "min_lr": 3e-4, "warmup_steps": 30, "eval_steps": 10}
PHENOMENA = ("sense", "association", "order")
KINDS = ("v", "k")
EARLY = (250, 300)  # a window of steps where the batch losses are compared mid-training


@lru_cache(maxsize=2)
def measure(seed: int = 0) -> dict:
    """Train the four models and score them; their loss curves are in losses_<kind><d_head> (cached:
    the numbers do not depend on the language)."""
    with threads(1):
        text = corpus.generate(seed, N_SENTENCES, "zh")
        tok, ids = tokenize(text)
        tc = TrainConfig(**TRAIN, seed=seed)
        probes = {ph: corpus.probes(ph, "zh") for ph in PHENOMENA}
        n = {
            "seed": seed,
            "sentences": N_SENTENCES,
            "tokens": len(ids),
            "vocab": tok.vocab_size,
            "steps": tc.steps,
            "batch_size": tc.batch_size,
            **MODEL,
            **{f"{ph}_probes": len(p) for ph, p in probes.items()},
            **{f"{ph}_chance": sum(1 / (1 + len(q.alternatives)) for q in p) / len(p) for ph, p in probes.items()},
            "widths": list(WIDTHS),
            "early_from": EARLY[0],
            "early_to": EARLY[1],
        }
        for width in WIDTHS:
            for kind in KINDS:
                key = f"{kind}{width}"
                f = fit(ids, ModelConfig(d_vocab=tok.vocab_size, values=kind, d_head=width, **MODEL), tc, seed=seed)
                n[f"losses_{key}"] = f.losses
                n[f"params_{key}"] = f.model.num_params()
                n[f"train_loss_{key}"] = f.train_loss
                n[f"val_loss_{key}"] = f.val_loss
                n[f"early_loss_{key}"] = sum(f.losses[EARLY[0] : EARLY[1]]) / (EARLY[1] - EARLY[0])
                n[f"seconds_{key}"] = f.seconds
                for ph, p in probes.items():
                    n[f"{ph}_acc_{key}"] = probe_accuracy(f.model, tok, p)
                n[f"mean_acc_{key}"] = sum(n[f"{ph}_acc_{key}"] for ph in PHENOMENA) / len(PHENOMENA)
            n[f"val_gap{width}"] = n[f"val_loss_k{width}"] - n[f"val_loss_v{width}"]
            n[f"early_gap{width}"] = n[f"early_loss_k{width}"] - n[f"early_loss_v{width}"]
    return n
