"""Lesson: without positional information, 我打你 and 你打我 look the same.

Three measurements:

(a) Permutation equivariance. With no positions and no causal mask, attention treats its input as
    a set: permuting the input ids permutes the output logits and changes nothing else. Measured
    on trained weights as the largest |logits(perm(ids)) - perm(logits(ids))|.
(b) Order probes (qkv.corpus.probes("order")): contrast pairs with the same bag of words
    (上周末 … 他 打了 小红 ， → 小红 哭了 versus 小红 打了 他 ， → 他 哭了). Small models are trained on
    the order sentences of the built-in corpus with each kind of position. A one-layer causal
    model without positions is blind to order by construction (the lesson's text says why); a two-layer one
    can read order from the causal mask, and the lesson measures how much it does.
(c) RoPE: rotating q and k by their positions makes q·k depend only on the offset t - s.
"""

from __future__ import annotations

from functools import lru_cache

import torch

from qkv.analysis.probing import continuation_logprob
from qkv.core.machine import threads
from qkv.core.model.gpt import GPT
from qkv.core.model.nn.position import RoPE, sinusoidal_table
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.text import corpus
from qkv.core.text.corpus import lexicon
from qkv.lessons.common.training import fit, tokenize
from qkv.lessons.order.result import Result, Run

NEEDS_MODEL = False
READS = ()  # it reads no model: it trains its own
N_SENTENCES = 6000  # drawn from the built-in corpus; only the order sentences (about a fifth) are kept
MODEL = {"n_ctx": 16, "d_model": 64, "n_heads": 4, "n_layers": 1}
TRAIN = {"steps": 800, "batch_size": 16, "lr": 5e-3, "min_lr": 5e-4, "warmup_steps": 30, "eval_steps": 10}
# (name, pos, n_layers): four one-layer models, one per kind of position, and a two-layer one without
RUNS = (
    ("none", "none", 1),
    ("learned", "learned", 1),
    ("sinusoidal", "sinusoidal", 1),
    ("rope", "rope", 1),
    ("none2", "none", 2),
)
ROPE_CTX, ROPE_D, SHIFTS = 128, 32, (1, 3, 10, 50)


def order_text(seed: int) -> str:
    """The order sentences ('A verb B , B reaction .') of corpus.generate(seed, N_SENTENCES, 'zh')."""
    verbs = {v[0] for v in lexicon.ORDER_VERBS}
    lines = [line for line in corpus.generate(seed, N_SENTENCES, "zh").splitlines() if verbs & set(line.split())]
    return "\n".join(lines) + "\n"


@torch.no_grad()
def permutation_deviation(model: GPT, ids: torch.Tensor, perm: torch.Tensor, causal: bool) -> float:
    """max |f(ids[perm]) - f(ids)[perm]| for the model's weights (in float64), with or without the causal mask."""
    cfg = ModelConfig(**{**model.cfg.to_dict(), "causal": causal})
    copy = GPT(cfg).double()  # float64, so that rounding stays far below what is measured
    copy.load_state_dict(model.state_dict())
    copy.eval()
    a = copy(ids[perm][None])[0]  # (T, d_vocab)
    b = copy(ids[None])[0][perm]
    return (a - b).abs().max().item()


@torch.no_grad()
def pair_scores(model: GPT, tok, probes) -> list[tuple[float, float]]:
    """Per probe, (log P(expected | prompt), log P(alternative | prompt))."""
    model.eval()
    return [
        (
            continuation_logprob(model, tok, p.prompt, p.expected),
            continuation_logprob(model, tok, p.prompt, p.alternatives[0]),
        )
        for p in probes
    ]


def pair_stats(scores, probes) -> dict:
    """Accuracy, the share of contrast pairs whose two members get different answers, and the largest
    difference between the scores the two members of a pair give the same continuation."""
    right = [s[0] > s[1] for s in scores]
    apart, diff = 0, 0.0
    pairs = [(i, i + 1) for i in range(0, len(probes) - 1, 2) if probes[i].group == probes[i + 1].group]
    for i, j in pairs:
        # member i scores (e_i, e_j); member j scores (e_j, e_i): compare each continuation across the pair
        diff = max(diff, abs(scores[i][0] - scores[j][1]), abs(scores[i][1] - scores[j][0]))
        pick_i = probes[i].expected if scores[i][0] > scores[i][1] else probes[i].alternatives[0]
        pick_j = probes[j].expected if scores[j][0] > scores[j][1] else probes[j].alternatives[0]
        apart += pick_i != pick_j
    return {"acc": sum(right) / len(right), "apart": apart / len(pairs), "pair_diff": diff, "pairs": len(pairs)}


def rope_shift(seed: int) -> dict:
    """max |(R_s q)·(R_t k) - (R_{s+d} q)·(R_{t+d} k)| over positions s, t and shifts d; the same for
    positions added to q and k (sinusoidal), which are not shift-invariant."""
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(ROPE_D, generator=g), torch.randn(ROPE_D, generator=g)
    q, k = q / q.norm(), k / k.norm()  # unit vectors: |q·k| <= 1 without positions
    rope, table = RoPE(ROPE_CTX, ROPE_D), sinusoidal_table(ROPE_CTX, ROPE_D)
    n = ROPE_CTX - max(SHIFTS)
    rq = rope(q.expand(1, 1, ROPE_CTX, ROPE_D))[0, 0]  # (ROPE_CTX, d): q rotated at every position
    rk = rope(k.expand(1, 1, ROPE_CTX, ROPE_D))[0, 0]
    dots = rq @ rk.T  # dots[s, t] = (R_s q) . (R_t k)
    aq, ak = q + table, k + table  # additive positions
    adds = aq @ ak.T
    rope_dev = max((dots[d : d + n, d : d + n] - dots[:n, :n]).abs().max().item() for d in SHIFTS)
    add_dev = max((adds[d : d + n, d : d + n] - adds[:n, :n]).abs().max().item() for d in SHIFTS)
    return {"rope_shift_dev": rope_dev, "additive_shift_dev": add_dev, "rope_dot_scale": dots.abs().max().item()}


@lru_cache(maxsize=2)
def measure(seed: int = 0) -> Result:
    """Train the five models and take every measurement (cached: numbers do not depend on the language)."""
    with threads.fixed(1):
        tok, ids = tokenize(order_text(seed))
        probes = corpus.probes("order", "zh")
        tc = TrainConfig(**TRAIN, seed=seed)
        models, runs = {}, {}
        for name, pos, layers in RUNS:
            # the default embed_scale: sinusoidal positions meet words multiplied by sqrt(d_model), as in the 2017 paper
            cfg = ModelConfig(**{**MODEL, "d_vocab": tok.vocab_size, "pos": pos, "n_layers": layers})
            f = fit(ids, cfg, tc, seed=seed)
            models[name] = f.model
            stats = pair_stats(pair_scores(f.model, tok, probes), probes)
            runs[name] = Run(
                acc=stats["acc"],
                apart=stats["apart"],
                pair_diff=stats["pair_diff"],
                val_loss=f.val_loss,
                seconds=f.seconds,
            )
        g = torch.Generator().manual_seed(seed)
        sample = ids[: MODEL["n_ctx"]]
        perm = torch.randperm(len(sample), generator=g)
        return Result(
            seed=seed,
            tokens=len(ids),
            vocab=tok.vocab_size,
            steps=tc.steps,
            batch_size=tc.batch_size,
            probes=len(probes),
            sinusoidal_embed_scale=MODEL["d_model"] ** 0.5,
            **MODEL,
            runs=[name for name, _, _ in RUNS],
            models=runs,
            rope_d=ROPE_D,
            shifts=list(SHIFTS),
            pairs=stats["pairs"],
            perm_none=permutation_deviation(models["none2"], sample, perm, causal=False),
            perm_none_causal=permutation_deviation(models["none2"], sample, perm, causal=True),
            perm_learned=permutation_deviation(models["learned"], sample, perm, causal=False),
            perm_tokens=len(sample),
            **rope_shift(seed),
        )
