"""Lesson: attention dropout breaks the convex combination while training, and only then.

Dropout zeroes each attention weight with probability p and multiplies the survivors by 1/(1 − p),
without renormalising the row. So in training mode a row of A no longer sums to 1, and z = A v is no
longer a convex combination of the values: it may leave their hull. In evaluation mode dropout is off
and both invariants are back. The same weights (the bundled model's) are used in both modes; qkv.check
measures the rows and solves the hull LP for every head and position.
"""

from __future__ import annotations

from dataclasses import asdict

import torch

from qkv.core.io.refusal import phrase
from qkv.lessons.dropout.result import Invariant, Result, RowSums, Summary, TrainSummary

NEEDS_MODEL = True
READS = ("decoder",)  # the model families (Family.design) it reads
READS_WHY = phrase("lessons.dropout.reads_why")  # why it reads no other family (said when it refuses one)
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


def summarise(report) -> Summary:
    """Failures and worst deviations of the two invariants dropout breaks, over all layers."""

    def invariant(name: str) -> Invariant:
        items = [i for i in report.items if i.name == name]
        return Invariant(
            checked=sum(i.checked for i in items),
            failed=sum(len(i.failures) for i in items),
            worst=max(i.worst for i in items),
        )

    return Summary(
        rows=invariant(ROWS), hull=invariant(HULL), checks_failed=len(report.failed()), checks=len(report.items)
    )


@torch.no_grad()
def measure(model, tokenizer, seed: int = 0) -> Result:
    """The same weights run once in training mode (dropout p, seeded) and once in evaluation mode, each
    as `summarise` gives them; in training mode also the smallest and largest row sum."""
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
    rows = RowSums(**asdict(train.rows), min_sum=sums.min().item(), max_sum=sums.max().item())
    train = TrainSummary(rows=rows, hull=train.hull, checks_failed=train.checks_failed, checks=train.checks)
    return Result(
        p=P,
        text=TEXT,
        seed=seed,
        tokens=len(tokens),
        token_texts=tokens,
        train=train,
        eval=ev,
        pattern_layer=LAYER,
        pattern_head=HEAD,
        pattern_train=train_trace["pattern", LAYER][0, HEAD].tolist(),  # (T, T)
        pattern_eval=eval_trace["pattern", LAYER][0, HEAD].tolist(),
    )
