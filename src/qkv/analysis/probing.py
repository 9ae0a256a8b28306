"""Probe accuracy: does the model prefer the right continuation of a held-out prompt?

For each probe, every candidate continuation (the expected one and its alternatives) is scored
by its log-probability under the model, log P(c_1 .. c_m | prompt) = sum_i log P(c_i | prompt, c_<i),
and the probe counts as solved when the expected continuation scores highest.
"""

from __future__ import annotations

import torch

from qkv.core.model import evaluating


@torch.no_grad()
def continuation_logprob(model, tokenizer, prompt: str, continuation: str, sep: str = " ") -> float:
    context = tokenizer.encode(prompt + sep)
    cont = tokenizer.encode(continuation)
    ids = (context + cont)[-model.cfg.n_ctx - 1 :]
    x = torch.tensor([ids[:-1]])
    logp = torch.log_softmax(model(x)[0].float(), dim=-1)  # (T, d_vocab): position t predicts ids[t + 1]
    targets = torch.tensor(ids[1:])
    picked = logp[torch.arange(len(targets)), targets]
    return picked[-len(cont) :].sum().item()


def solved(model, tokenizer, probe, sep: str = " ") -> bool:
    scores = [
        continuation_logprob(model, tokenizer, probe.prompt, c, sep) for c in (probe.expected, *probe.alternatives)
    ]
    return scores[0] > max(scores[1:])


def probe_accuracy(model, tokenizer, probes, sep: str = " ") -> float:
    """The fraction of probes whose expected continuation is the most likely candidate."""
    if not probes:
        raise ValueError("no probes to score")
    with evaluating(model):
        return sum(solved(model, tokenizer, p, sep) for p in probes) / len(probes)
