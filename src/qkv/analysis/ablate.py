"""Switching heads off (zero ablation): what the model predicts, and where later heads look, without them.

A head h of layer L adds z_h W_O[h] to the residual stream (z_h = A_h v_h, its mix of values).
Ablating it sets z_h = 0 before W_O, so the attention output of layer L becomes

    Attn_L(x) = sum_{g != h} z_g W_O[g] + b_O          (the other heads, and W_O's bias, unchanged)

Everything before that point is untouched; every later layer reads a different residual stream,
so its patterns A and the next-token probabilities P = softmax(logits) may change.

    doc = ablate(model, tokenizer, "我 投资了 苹果 ，", heads=[(0, 1), (1, 3)])
    doc["next"][-1]["rows"]          # the candidate next tokens at the last position, P before and after
    unpack(doc["patterns"]["after"]) # (n_layers - first, n_heads, T, T): the later layers' A after
                                     # (qkv.analysis.packing.unpack)

`heads_off(model, heads)` is the switch itself (a hook on each layer's hook_z: qkv.core.see.hooks), for a
caller who wants to run the ablated model some other way (generate, trace). Plain JSON-ready data out
(kind "ablate"); the patterns are packed as in the view document (float32, base64).
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

from qkv.analysis.inputs import check_size
from qkv.analysis.origin import read_ids
from qkv.analysis.packing import pack
from qkv.core.io.document import header
from qkv.core.io.refusal import family_title
from qkv.core.io.shown import Document
from qkv.core.model import evaluating
from qkv.core.see.indices import TextError, check_heads, check_token

TOP = 10  # candidate next tokens kept per position, before and after (their union is shown)
TOP_CHANGES = 12  # pattern entries with the largest change


@contextmanager
def heads_off(model, heads):
    """Within this block the given (layer, head) pairs of `model` (a GPT or an encoder) are switched
    off: their z is multiplied by 0 before W_O, by a hook on hook_z (model.hooks), so only the passes of
    this thread see it; it is removed afterwards."""
    if not model.family.one_stack:
        raise TextError.of("errors.ablate_family", title=family_title(model.family))
    pairs = check_heads(model.cfg, heads)
    W = model.blocks[0].attn.W_O.weight
    keep = torch.ones(model.cfg.n_layers, model.cfg.n_heads, dtype=W.dtype, device=W.device)  # (n_layers, n_heads)
    for layer, head in pairs:
        keep[layer, head] = 0.0
    zero = lambda z, hook: z * keep[hook.layer()].view(1, 1, -1, 1)  # z: (B, T, n_heads, d_head)
    with model.hooks([(f"blocks.{layer}.attn.hook_z", zero) for layer in sorted({L for L, _ in pairs})]):
        yield pairs


def _run(model, ids: list[int], first: int):
    """(probs (T, d_vocab), patterns of layers first.. (n, n_heads, T, T)) of one traced forward pass."""
    wanted = {"probs"} | {f"blocks.{L}.attn.hook_pattern" for L in range(first, model.cfg.n_layers)}
    device = next(model.parameters()).device
    _, tr = model.run_with_trace(torch.tensor([ids], device=device), names=sorted(wanted))
    pats = [tr["pattern", L][0] for L in range(first, model.cfg.n_layers)]
    T = len(ids)
    patterns = torch.stack(pats) if pats else torch.zeros(0, model.cfg.n_heads, T, T)
    return tr["probs"][0], patterns


def _next_rows(before: torch.Tensor, after: torch.Tensor, tokenizer, top: int) -> dict:
    """One position: the union of the top candidates before and after, by P before, with both P."""
    k = min(top, before.shape[-1])
    ids = list(dict.fromkeys(torch.topk(before, k).indices.tolist() + torch.topk(after, k).indices.tolist()))
    ids.sort(key=lambda i: (-float(before[i]), -float(after[i])))
    rows = [{"id": i, "token": tokenizer.display(i), "before": float(before[i]), "after": float(after[i])} for i in ids]
    tv = 0.5 * float((after.double() - before.double()).abs().sum())  # total variation: the probability moved
    return {"rows": rows, "moved": tv}


@torch.no_grad()
def ablate(
    model,
    tokenizer,
    text: str | None = None,
    heads=(),
    token: int | None = None,
    ids: list[int] | None = None,
    top: int = TOP,
) -> dict:
    """The kind-"ablate" document: next-token probabilities with and without the heads, at `token`
    (None: at every position), and the patterns of the layers from the first ablated one on."""
    cfg = model.cfg
    if not model.family.generates:
        raise TextError.of("errors.ablate_no_next_token")
    pairs = check_heads(cfg, heads)
    text, ids = read_ids(model, tokenizer, text, ids)
    T = len(ids)
    check_size(cfg, T)
    positions = range(T)
    if token is not None:
        positions = [check_token(token, T)]
    first = min((L for L, _ in pairs), default=cfg.n_layers)
    with evaluating(model):
        p0, A0 = _run(model, ids, first)
        with heads_off(model, pairs):
            p1, A1 = _run(model, ids, first)

    delta = (A1.double() - A0.double()).abs()  # (n, n_heads, T, T)
    max_change = [[0.0] * cfg.n_heads for _ in range(first)] + delta.amax(dim=(-1, -2)).tolist()
    lower = bool(cfg.causal)
    nxt = [
        {"pos": i, "token": tokenizer.display(ids[i]), **_next_rows(p0[i], p1[i], tokenizer, top)} for i in positions
    ]
    return Document(
        {
            **header("ablate"),
            "text": text,
            "ids": [int(t) for t in ids],
            "tokens": [tokenizer.display(t) for t in ids],
            "heads": [list(p) for p in pairs],
            "first": first,
            "next": nxt,
            "max_change": max_change,
            "changes": _largest_changes(A0, A1, delta, first),
            "patterns": {"first": first, "before": pack(A0, lower=lower), "after": pack(A1, lower=lower)},
        }
    )  # a dict that shows itself in a notebook (shown.Document)


def _largest_changes(A0: torch.Tensor, A1: torch.Tensor, delta: torch.Tensor, first: int) -> list[dict]:
    """The TOP_CHANGES attention weights that moved most (delta = |A1 - A0|, (n, n_heads, T, T) from
    layer `first` on), largest first; none that did not move."""
    changes = []
    if delta.numel():
        flat = delta.flatten()
        for n in torch.topk(flat, min(TOP_CHANGES, flat.numel())).indices.tolist():
            L, h, i, j = torch.unravel_index(torch.tensor(n), delta.shape)
            L, h, i, j = int(L), int(h), int(i), int(j)
            if delta[L, h, i, j] == 0:
                break
            changes.append(
                {
                    "layer": first + L,
                    "head": h,
                    "query": i,
                    "key": j,
                    "before": float(A0[L, h, i, j]),
                    "after": float(A1[L, h, i, j]),
                }
            )
    return changes
