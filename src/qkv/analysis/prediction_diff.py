"""Two sentences side by side: what the model predicts after each, and how the two predictions differ.

    doc = side_by_side(model, tokenizer, "我打了你", "你打了我")   # kind "side"

Each sentence is read alone (read_text: typed without spaces, a word tokenizer cuts it into the
words it knows). "next" lists the union of the `top` most likely next tokens after the last token
of each sentence, with the probability of each token after A (p_a) and after B (p_b), and
diff = p_a - p_b: a token in one list only still gets its probability in the other sentence, which
the two next-token panels (ten tokens each) do not show. The attention patterns themselves come
from /api/view (one document per sentence); "same_length" says whether A - B can be taken cell by
cell, "same_tokens" whether the two are the same tokens in another order (我 打了 你 / 你 打了 我).
"""

from __future__ import annotations

import torch

from qkv.analysis.inputs import read_text
from qkv.core.io.document import header
from qkv.core.io.refusal import Refusal
from qkv.core.model import evaluating

MAX_TOP = 50


def _one(tokenizer, text: str, ids: list[int]) -> dict:
    return {"text": text, "ids": [int(i) for i in ids], "tokens": [tokenizer.display(i) for i in ids]}


@torch.no_grad()
def _last_probs(model, ids: list[int]) -> torch.Tensor:
    """softmax of the logits after the last token (the model's own "probs", as the view shows them)."""
    device = next(model.parameters()).device
    with evaluating(model):
        _, trace = model.run_with_trace(torch.tensor([ids], device=device), names=lambda n: n == "probs")
    return trace["probs"][0, -1].float().cpu()  # (d_vocab,)


def side_by_side(model, tokenizer, a: str, b: str, top: int = 10) -> dict:
    if not 1 <= top <= MAX_TOP:
        raise Refusal.of("errors.top_range", max=MAX_TOP, top=top)
    n_ctx = model.cfg.n_ctx
    (a, ids_a), (b, ids_b) = read_text(tokenizer, a, n_ctx), read_text(tokenizer, b, n_ctx)
    doc = {
        **header("side"),
        "a": _one(tokenizer, a, ids_a),
        "b": _one(tokenizer, b, ids_b),
        "same_length": len(ids_a) == len(ids_b),
        "same_tokens": sorted(ids_a) == sorted(ids_b),
        "next": None,
    }
    if not model.family.next_token:  # an encoder predicts no next token
        return doc
    pa, pb = _last_probs(model, ids_a), _last_probs(model, ids_b)
    k = min(top, pa.numel())
    union = dict.fromkeys(pa.topk(k).indices.tolist() + pb.topk(k).indices.tolist())
    rows = [
        {
            "id": i,
            "token": tokenizer.display(i),
            "p_a": float(pa[i]),
            "p_b": float(pb[i]),
            "diff": float(pa[i]) - float(pb[i]),
        }
        for i in union
    ]
    rows.sort(key=lambda r: (-max(r["p_a"], r["p_b"]), r["id"]))
    doc["next"] = rows
    return doc
