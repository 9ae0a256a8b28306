"""A model with its positions taken out, and what that does to 我打你 / 你打我.

    twin = without_positions(model)          # the same weights, no position vector, no rotation
    doc = order_pair(model, tokenizer, "我 打了 你 ，", "你 打了 我 ，")

A GPT learns where a token stands in one of two ways: a vector per position added to the token's
embedding (learned or sinusoidal: x_t = W_E[id_t] + P[t]), or a rotation of q and k by their
positions inside attention (RoPE). The twin leaves out both: x_t = W_E[id_t] and q·k unrotated. It
shares every weight with the model (nothing is copied), so it is cheap at any size.

Why the twin is blind to order, and where it is not: in layer 0, with x_t = W_E[id_t], the query of
the last token sees the set of visible tokens and nothing else, so two sentences that hold the same
tokens and end with the same token give its row the same weights, permuted:

    A_b[last, perm[j]] = A_a[last, j]   for every head of layer 0   (perm: a's position j -> b's)

From layer 1 on, the keys are earlier tokens' streams, and under the causal mask token t has read only
tokens 0..t: 打了 has read 我 in one sentence and 你 in the other, so the streams differ and the
equality breaks. That difference ("leak") is what the causal mask still tells a model without
positions; order_pair measures it per layer, as max over heads and keys of |A_b[last, perm[j]] - A_a[last, j]|.
"""

from __future__ import annotations

import copy

import torch

from qkv.analysis.inputs import read_text
from qkv.core.io.document import header
from qkv.core.io.refusal import Refusal
from qkv.core.model import evaluating


def _holds_positions(m: torch.nn.Module) -> bool:
    return any(
        getattr(sub, "rope", None) is not None or getattr(sub, "pos_embed", None) is not None for sub in m.modules()
    )


def _strip(m: torch.nn.Module) -> torch.nn.Module:
    """A shallow copy of m whose own module table is new: pos_embed and rope set to None, the children
    that hold either stripped the same way, every other child (and every parameter) shared."""
    c = copy.copy(m)
    c._modules = dict(m._modules)  # type: ignore[assignment]  # its own table: setting a child leaves m's alone
    for name, child in m._modules.items():
        if child is None:
            continue
        if name in ("pos_embed", "rope"):
            c._modules[name] = None
        elif _holds_positions(child):
            c._modules[name] = _strip(child)
    return c


def without_positions(model) -> torch.nn.Module:
    """The model with no positions (module docstring): x_t = W_E[id_t], q and k unrotated; weights shared.
    Only a decoder (GPT) is offered: a translation model's two stacks are not what the page compares."""
    if model.family.design != "decoder":
        raise Refusal.of("tour.positions_decoder")
    return _strip(model)


@torch.no_grad()
def last_rows(model, ids: list[int]) -> torch.Tensor:
    """The last token's attention row in every layer and head: (L, H, T), float64."""
    device = next(model.parameters()).device
    L = model.cfg.n_layers
    names = [f"blocks.{layer}.attn.hook_pattern" for layer in range(L)]
    with evaluating(model):
        _, tr = model.run_with_trace(torch.tensor([ids], device=device), names=names)
    return torch.stack([tr[n][0, :, -1, :] for n in names]).double()  # (L, H, T)


def permutation(ids_a: list[int], ids_b: list[int]) -> list[int] | None:
    """perm[j]: the position in b of a's token j (the same tokens used in order), or None when b is not a
    reordering of a that ends with the same token."""
    if sorted(ids_a) != sorted(ids_b) or ids_a[-1] != ids_b[-1]:
        return None
    free = list(range(len(ids_b)))
    perm = []
    for i in ids_a:
        k = next(k for k in free if ids_b[k] == i)
        free.remove(k)
        perm.append(k)
    return perm


def order_pair(model, tokenizer, a: str, b: str) -> dict:
    """Kind "order-pair": the last token's rows of two sentences with positions on and off (module docstring).

    rows[on|off][a|b]: (L, H, T) lists; perm; leak[on|off]: per layer, max |A_b[last, perm[j]] - A_a[last, j]|
    (null without a permutation)."""
    twin = without_positions(model)
    read = {key: read_text(tokenizer, s, model.cfg.n_ctx) for key, s in (("a", a), ("b", b))}
    ids = {key: r[1] for key, r in read.items()}
    perm = permutation(ids["a"], ids["b"])
    rows, leak = {}, {}
    for mode, m in (("on", model), ("off", twin)):
        got = {key: last_rows(m, ids[key]) for key in ("a", "b")}
        rows[mode] = {key: got[key].tolist() for key in got}
        if perm is None:
            leak[mode] = None
        else:
            diff = (got["b"][:, :, perm] - got["a"]).abs()  # (L, H, T)
            leak[mode] = diff.amax(dim=(1, 2)).tolist()
    return {
        **header("order-pair"),
        "a": {"text": read["a"][0], "ids": ids["a"], "tokens": [tokenizer.display(i) for i in ids["a"]]},
        "b": {"text": read["b"][0], "ids": ids["b"], "tokens": [tokenizer.display(i) for i in ids["b"]]},
        "perm": perm,
        "rows": rows,
        "leak": leak,
    }
