"""Lesson: induction heads in a real LLM (SmolLM2-135M-Instruct), found by their pattern and tested by
switching them off.

On repeated random tokens [f, r_1 .. r_n, r_1 .. r_n] (qkv.analysis.head_scores.repeated_tokens) nothing
but the context predicts the second r's: a model that copies ("A B ... A -> B") predicts them well.

1. prefix matching: each head's induction score (TransformerLens's head detector,
   qkv.analysis.head_scores): the weight A[i, j] it puts on the token after an earlier copy of token i,
   over all its weight (a perfect induction head scores about n / T ~ 0.5; an even spread `baseline`);
2. the in-context loss gap: mean cross-entropy of r_2 .. r_n where they come again (second repeat) minus
   where they first appear (first repeat); negative: the context helped;
3. ablation: the TOP_K heads of highest score switched off, by zero ablation (z_h = 0, qkv.heads_off)
   and by mean ablation (z_h replaced at every position by its mean over the clean run's positions and
   sequences), against as many heads drawn at random from the others, N_RANDOM seeds.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import torch
import torch.nn.functional as F

from qkv.analysis.ablate import heads_off
from qkv.analysis.head_scores import head_scores, repeated_tokens
from qkv.core.io.refusal import phrase
from qkv.lessons.common.llm import model_name
from qkv.lessons.llm_induction.result import Ablation, Head, Losses, Result

NEEDS_MODEL = "llm"
READS = ("decoder",)
READS_WHY = phrase("lessons.llm_induction.reads_why")  # why it reads no other family (said when it refuses one)
N_SEQS = 3
HALF = 30  # random tokens before the repeat: T = 1 + 2 * HALF
TOP_K = 5  # heads switched off
N_RANDOM = 5  # random draws of TOP_K other heads
SCORING = 0.2  # an induction score from which the text counts a head as scoring
MODES = ("zero", "mean")


def losses(model, tokens: torch.Tensor, half: int, hooks=None) -> Losses:
    """Mean cross-entropy of r_2 .. r_half in the first repeat (targets 2 .. half) and in the second
    (targets half + 2 .. 2 * half); logits[:, t - 1] predict token t."""
    with hooks if hooks is not None else nullcontext(), torch.no_grad():
        logits = model(tokens)  # (B, T, d_vocab)
    ce = F.cross_entropy(logits[:, :-1].transpose(1, 2).float(), tokens[:, 1:], reduction="none")  # (B, T - 1)
    first = ce[:, 1:half].mean()  # targets 2 .. half
    second = ce[:, half + 1 : 2 * half].mean()  # targets half + 2 .. 2 * half
    return Losses(first=float(first), second=float(second), gap=float(second - first))


@torch.no_grad()
def mean_z(model, tokens: torch.Tensor) -> list[torch.Tensor]:
    """Per layer, each head's z averaged over the sequences and positions of the clean run (n_heads, d_head)."""
    names = [f"blocks.{L}.attn.hook_z" for L in range(model.cfg.n_layers)]
    _, trace = model.run_with_trace(tokens, names=names)
    return [trace[name].mean(dim=(0, 1)) for name in names]  # (n_heads, d_head) each


def mean_off(model, heads, means: list[torch.Tensor]):
    """A context in which each (layer, head) of `heads` writes its mean z at every position (mean ablation)."""
    cfg = model.cfg
    mask = torch.zeros(cfg.n_layers, cfg.n_heads, dtype=torch.bool)  # (n_layers, n_heads)
    for L, h in heads:
        mask[L, h] = True

    def put(z, hook):  # z: (B, T, n_heads, d_head)
        L = hook.layer()
        keep = mask[L].view(1, 1, -1, 1)
        return torch.where(keep, means[L].to(z.dtype).view(1, 1, *means[L].shape), z)

    return model.hooks([(f"blocks.{L}.attn.hook_z", put) for L in sorted({L for L, _ in heads})])


def ablated(model, tokens, half: int, heads, means) -> dict[str, Losses]:
    """The losses with `heads` switched off, by each of MODES."""
    return {
        "zero": losses(model, tokens, half, heads_off(model, heads)),
        "mean": losses(model, tokens, half, mean_off(model, heads, means)),
    }


def random_heads(cfg, exclude, k: int, seed: int) -> list[tuple[int, int]]:
    """k (layer, head) pairs drawn without replacement from the heads not in `exclude` (seeded)."""
    pool = [(L, h) for L in range(cfg.n_layers) for h in range(cfg.n_heads) if (L, h) not in set(exclude)]
    pick = np.random.default_rng(seed).choice(len(pool), size=min(k, len(pool)), replace=False)
    return [pool[int(i)] for i in sorted(pick)]


def measure(model, tokenizer, seed: int = 0) -> Result:
    cfg = model.cfg
    half = min(HALF, (cfg.n_ctx - 1) // 2)
    tokens = repeated_tokens(model, tokenizer, N_SEQS, half, seed)  # (N_SEQS, 1 + 2 * half)
    scores = head_scores(model, tokenizer, tokens=tokens)
    table = scores.induction  # (n_layers, n_heads)
    order = torch.argsort(table.flatten(), descending=True).tolist()
    k = min(TOP_K, cfg.n_layers * cfg.n_heads - 1)
    top = [(i // cfg.n_heads, i % cfg.n_heads) for i in order[:k]]
    means = mean_z(model, tokens)
    draws = [random_heads(cfg, top, k, seed + 1 + r) for r in range(N_RANDOM)]
    rand = [ablated(model, tokens, half, heads, means) for heads in draws]
    top_losses = ablated(model, tokens, half, top, means)
    scoring = [(i // cfg.n_heads, i % cfg.n_heads) for i in order if float(table.flatten()[i]) >= SCORING]
    return Result(
        model_name=model_name(model),
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        n_seqs=int(tokens.shape[0]),
        half=half,
        seed=seed,
        induction=table.tolist(),
        previous=scores.previous.tolist(),
        baseline=float(scores.baselines["induction"]),
        scoring=SCORING,
        n_scoring=len(scoring),
        scoring_layers=sorted({L for L, _ in scoring}),
        top=[Head(layer=L, head=h, score=float(table[L, h]), previous=float(scores.previous[L, h])) for L, h in top],
        clean=losses(model, tokens, half),
        ablations={
            mode: Ablation(
                top=top_losses[mode],
                random=[r[mode] for r in rand],
                random_heads=[[list(p) for p in heads] for heads in draws],
            )
            for mode in MODES
        },
    )
