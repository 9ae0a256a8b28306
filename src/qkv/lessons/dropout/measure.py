"""Lesson: attention dropout breaks the convex combination while training, and only then.

Dropout zeroes each attention weight with probability p and multiplies the survivors by 1/(1 − p),
without renormalising the row. So in training mode a row of A no longer sums to 1, and z = A v is no
longer a convex combination of the values: it may leave their hull. In evaluation mode dropout is off
and both invariants are back. The same weights (the bundled model's) are used in both modes; qkv.check
measures the rows and solves the hull LP for every head and position.
"""

from __future__ import annotations

import torch

NEEDS_MODEL = True
READS = ("decoder",)  # the model families (Family.design) it reads
READS_WHY = "it rebuilds the model as a qkv GPT to switch attention dropout on"
TEXT = "我 吃了 苹果 ， 很 甜 。"
P = 0.2
ROWS, HULL = "rows sum to 1", "z lies in the convex hull of the values"
LAYER, HEAD = 0, 0  # the head whose attention pattern the figure shows


def with_dropout(model, p: float):
    """A copy of the model with attention dropout p and the same weights."""
    from qkv.core.model.gpt import GPT
    from qkv.core.spec.config import ModelConfig

    copy = GPT(ModelConfig(**{**model.cfg.to_dict(), "dropout_attn": p}))
    copy.load_state_dict(model.state_dict())
    return copy


def summarise(report) -> dict:
    """Failures and worst deviations of the two invariants dropout breaks, over all layers:
    {"rows": {checked, failed, worst}, "hull": {checked, failed, worst}, "checks_failed", "checks"}."""

    def invariant(name: str) -> dict:
        items = [i for i in report.items if i.name == name]
        return {
            "checked": sum(i.checked for i in items),
            "failed": sum(len(i.failures) for i in items),
            "worst": max(i.worst for i in items),
        }

    return {
        "rows": invariant(ROWS),
        "hull": invariant(HULL),
        "checks_failed": len(report.failed()),
        "checks": len(report.items),
    }


@torch.no_grad()
def measure(model, tokenizer, seed: int = 0) -> dict:
    """The same weights run once in training mode (dropout p, seeded) and once in evaluation mode:
    n["train"] and n["eval"] as `summarise` gives them; in training mode also the smallest and largest
    row sum, n["train"]["rows"]["min_sum"] and ["max_sum"]."""
    from qkv.core.see.invariants import check

    dropped = with_dropout(model, P)
    ids = torch.tensor([tokenizer.encode(TEXT)])
    tokens = [tokenizer.display(i) for i in ids[0].tolist()]
    torch.manual_seed(seed)
    dropped.train()
    _, train_trace = dropped.run_with_trace(ids)
    train = summarise(check(train_trace))
    dropped.eval()
    _, eval_trace = dropped.run_with_trace(ids)
    ev = summarise(check(eval_trace))
    sums = torch.cat([train_trace["pattern", L].sum(-1).flatten() for L in range(model.cfg.n_layers)])
    train["rows"]["min_sum"], train["rows"]["max_sum"] = sums.min().item(), sums.max().item()
    return {
        "p": P,
        "text": TEXT,
        "seed": seed,
        "tokens": len(tokens),
        "token_texts": tokens,
        "train": train,
        "eval": ev,
        "pattern_layer": LAYER,
        "pattern_head": HEAD,
        "pattern_train": train_trace["pattern", LAYER][0, HEAD].tolist(),  # (T, T)
        "pattern_eval": eval_trace["pattern", LAYER][0, HEAD].tolist(),
    }
