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
from qkv.core.machine import threads
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.text import corpus
from qkv.lessons.common.training import fit, tokenize
from qkv.lessons.why_v.result import Accuracy, Model, Pair, Probe, Probes, Result

NEEDS_MODEL = False
READS = ()  # it reads no model: it trains its own
N_SENTENCES = 3000  # of the built-in Chinese corpus
MODEL = {"n_ctx": 32, "d_model": 64, "n_heads": 4, "n_layers": 2}
WIDTHS = (16, 2)  # d_head of the two pairs: the usual d_model / n_heads, and very narrow heads
TRAIN = {"steps": 500, "batch_size": 16, "lr": 3e-3, "min_lr": 3e-4, "warmup_steps": 30, "eval_steps": 10}
PHENOMENA = ("sense", "association", "order")
KINDS = ("v", "k")
EARLY = (250, 300)  # a window of steps where the batch losses are compared mid-training


@lru_cache(maxsize=2)
def measure(seed: int = 0) -> Result:
    """Train the four models and score them (cached: the numbers do not depend on the language)."""
    with threads.fixed(1):
        text = corpus.generate(seed, N_SENTENCES, "zh")
        tok, ids = tokenize(text)
        tc = TrainConfig(**TRAIN, seed=seed)
        probes = {ph: corpus.probes(ph, "zh") for ph in PHENOMENA}
        counts = {
            ph: Probe(count=len(p), chance=sum(1 / (1 + len(q.alternatives)) for q in p) / len(p))
            for ph, p in probes.items()
        }
        pairs = []
        for width in WIDTHS:
            models = {}
            for kind in KINDS:
                f = fit(ids, ModelConfig(d_vocab=tok.vocab_size, values=kind, d_head=width, **MODEL), tc, seed=seed)
                acc = {ph: probe_accuracy(f.model, tok, p) for ph, p in probes.items()}
                models[kind] = Model(
                    losses=f.losses,
                    params=f.model.num_params(),
                    train_loss=f.train_loss,
                    val_loss=f.val_loss,
                    early_loss=sum(f.losses[EARLY[0] : EARLY[1]]) / (EARLY[1] - EARLY[0]),
                    seconds=f.seconds,
                    acc=Accuracy(**acc),
                    mean_acc=sum(acc[ph] for ph in PHENOMENA) / len(PHENOMENA),
                )
            v, k = models["v"], models["k"]
            pairs.append(
                Pair(d_head=width, v=v, k=k, val_gap=k.val_loss - v.val_loss, early_gap=k.early_loss - v.early_loss)
            )
    return Result(
        seed=seed,
        sentences=N_SENTENCES,
        tokens=len(ids),
        vocab=tok.vocab_size,
        steps=tc.steps,
        batch_size=tc.batch_size,
        **MODEL,
        probes=Probes(**counts),
        early_from=EARLY[0],
        early_to=EARLY[1],
        pairs=pairs,
    )
