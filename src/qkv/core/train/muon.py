"""optimizer="muon" (the speedrun's): Muon for the blocks' matrices, AdamW for everything else, as one optimizer.

Muon (torch.optim.Muon) keeps a momentum B = μ B + g for each matrix W and steps along B made orthogonal
(Newton–Schulz: its singular values pushed towards 1), O = NS(g + μ B):

    W = W - lr_muon * sqrt(max(1, rows / cols)) * O

so every direction of the matrix moves by about as much, whatever the gradient's scale. It suits the hidden
matrices (W_Q, W_K, W_V, W_O, the MLP's); the embeddings, the head (the unembedding), the norms' scales and the
biases stay with AdamW, as in modded-nanogpt. Muon has no weight decay here (the speedrun's choice).

`Paired` steps the two as one: the loop, the clip, the checkpoint and the resume see one optimizer whose
param_groups are AdamW's then Muon's, and whose state_dict numbers the parameters in that order (as torch
numbers those of one optimizer), so a checkpoint keeps the form that train/checkpoint.py writes.
The schedule: each Muon group carries lr_scale = muon_lr / lr, and the loop sets lr = lr_at(step) * lr_scale,
so Muon's learning rate has the schedule's shape with its peak at muon_lr.
"""

from __future__ import annotations

import torch
from torch import nn


def muon_matrices(model: nn.Module) -> list[torch.Tensor]:
    """The weights of every nn.Linear except the head (model.unembed) and any matrix shared with an
    embedding table (a tied head): W_QKV, W_O, the MLP's fc_in / fc_gate / fc_out. W_QKV is qkv's one
    (3 d_model, d_model) matrix of W_Q, W_K and W_V stacked, and Muon orthogonalises it whole (its update
    scaled by sqrt(3) for the shape), where the speedrun orthogonalises q, k and v each."""
    head = getattr(model, "unembed", None)
    tables = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    if head is not None:
        tables.add(id(head.weight))
    seen: set[int] = set()
    out = []
    for m in model.modules():
        if isinstance(m, nn.Linear) and m is not head and id(m.weight) not in tables | seen:
            seen.add(id(m.weight))
            out.append(m.weight)
    return out


class Paired:
    """AdamW and Muon stepped as one optimizer: param_groups, step, zero_grad, state_dict, load_state_dict."""

    def __init__(self, adamw: torch.optim.Optimizer, muon: torch.optim.Optimizer):
        self.adamw, self.muon = adamw, muon

    @property
    def param_groups(self) -> list[dict]:
        return self.adamw.param_groups + self.muon.param_groups

    @property
    def state(self) -> dict:
        return {**self.adamw.state, **self.muon.state}

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.adamw.zero_grad(set_to_none=set_to_none)
        self.muon.zero_grad(set_to_none=set_to_none)

    def step(self, closure=None) -> None:
        self.adamw.step()
        self.muon.step()

    def _adamw_count(self) -> int:
        return sum(len(g["params"]) for g in self.adamw.param_groups)

    def state_dict(self) -> dict:
        """One state_dict: AdamW's parameters numbered 0..n-1, Muon's n.. after them."""
        a, m, n = self.adamw.state_dict(), self.muon.state_dict(), self._adamw_count()
        groups = a["param_groups"] + [{**g, "params": [i + n for i in g["params"]]} for g in m["param_groups"]]
        return {"state": {**a["state"], **{i + n: s for i, s in m["state"].items()}}, "param_groups": groups}

    def load_state_dict(self, sd: dict) -> None:
        """Split a state_dict as state_dict writes it back into AdamW's part and Muon's."""
        k, n = len(self.adamw.param_groups), self._adamw_count()
        groups = sd["param_groups"]
        state = sd["state"]
        self.adamw.load_state_dict(
            {"state": {i: s for i, s in state.items() if i < n}, "param_groups": groups[:k]}
        )  # fmt: skip
        muon_groups = [{**g, "params": [i - n for i in g["params"]]} for g in groups[k:]]
        self.muon.load_state_dict(
            {"state": {i - n: s for i, s in state.items() if i >= n}, "param_groups": muon_groups}
        )


# what make_optimizer returns: one torch optimizer, or the pair
AnyOptimizer = torch.optim.Optimizer | Paired


def make_paired(model: nn.Module, tc, fused: bool | None) -> Paired:
    """Muon (peak lr tc.muon_lr, momentum 0.95, Nesterov) for muon_matrices(model); AdamW for the rest,
    weight decay on its matrices (the embeddings, an untied head) only."""
    matrices = {id(p) for p in muon_matrices(model)}
    params = [p for p in model.parameters() if p.requires_grad]
    rest = [p for p in params if id(p) not in matrices]
    groups = [
        {"params": [p for p in rest if p.dim() >= 2], "weight_decay": tc.weight_decay},
        {"params": [p for p in rest if p.dim() < 2], "weight_decay": 0.0},
    ]
    adamw = torch.optim.AdamW(groups, lr=tc.lr, betas=(tc.beta1, tc.beta2), fused=fused)
    scale = tc.muon_lr / tc.lr if tc.lr > 0 else 0.0
    mats = [p for p in params if id(p) in matrices]
    muon = torch.optim.Muon([{"params": mats, "lr_scale": scale}], lr=tc.muon_lr, weight_decay=0.0, momentum=0.95)
    return Paired(adamw, muon)
