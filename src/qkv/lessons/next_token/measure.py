"""Lesson: the last position's hidden vector becomes next-token probabilities, and temperature reshapes them.

    P(next | tokens so far) = softmax(h_T W_out + b)          h_T: the final LayerNorm's output
    P_T(next)               = softmax((h_T W_out + b) / T)     temperature T

Dividing the logits by T keeps their order (the greedy pick, argmax, never changes) but sharpens the
distribution for T < 1 and flattens it for T > 1; its entropy H = −Σ p log₂ p measures how spread it is.
"""

from __future__ import annotations

import numpy as np
import torch

from qkv.core.io.refusal import phrase
from qkv.lessons.next_token.result import AtTemperature, Result

NEEDS_MODEL = True
READS = ("decoder",)  # the model families (Family.design) it reads
READS_WHY = phrase("lessons.next_token.reads_why")  # why it reads no other family (said when it refuses one)
TEXT = "我 投资了 苹果 ， "  # the next token is the first word of the tail (where spaces are tokens, the
# trailing space is the last token, so that the space after the comma is not what is predicted)
TEMPERATURES = (0.5, 1.0, 2.0)
TOP = 5


def entropy_bits(p: torch.Tensor) -> float:
    """H = −Σ p log₂ p (terms with p = 0 count as 0)."""
    p = p.detach().double()
    nz = p[p > 0]
    return float(-(nz * torch.log2(nz)).sum())


def _label(tok, i: int) -> str:
    return tok.display(i) if i < tok.vocab_size else f"<{i}>"


@torch.no_grad()
def measure(model, tokenizer, seed: int = 0) -> Result:
    ids = tokenizer.encode(TEXT)
    logits, trace = model.run_with_trace(torch.tensor([ids]))
    probs = trace["probs"][0, -1].double()  # (d_vocab,): softmax(h W_out + b) at the last position
    z = logits[0, -1].double()  # (d_vocab,)
    top = torch.topk(probs, TOP)
    shown = top.indices.tolist()  # the same tokens in every bar group of the figure: the top at T = 1
    temperatures = []  # one entry per T of TEMPERATURES, in that order
    for T in TEMPERATURES:
        pT = torch.softmax(z / T, dim=-1)  # (d_vocab,)
        tT = torch.topk(pT, TOP)
        temperatures.append(
            AtTemperature(
                T=T,
                top=[[_label(tokenizer, int(i)), float(p)] for p, i in zip(tT.values, tT.indices)],
                entropy_bits=entropy_bits(pT),
                greedy=_label(tokenizer, int(pT.argmax())),
                shown=[float(pT[i]) for i in shown],  # the probabilities of the tokens shown
            )
        )
    return Result(
        text=TEXT,
        tokens=[tokenizer.display(i) for i in ids],
        position=len(ids) - 1,
        top=[[_label(tokenizer, int(i)), float(p)] for p, i in zip(top.values, top.indices)],
        top_sum=float(top.values.sum()),
        greedy=_label(tokenizer, int(z.argmax())),
        greedy_id=int(z.argmax()),
        entropy_bits=entropy_bits(probs),
        max_entropy_bits=float(np.log2(model.cfg.d_vocab)),
        shown=[_label(tokenizer, i) for i in shown],
        temperatures=temperatures,
    )
