"""Check the invariants of a trace: what must hold for the numbers to be the real computation.

    each attention row:    a_ij >= 0,  sum_j a_ij = 1,  a_ij = 0 where the mask hides j
    each head's output:    z_i = sum_j a_ij v_j lies in the convex hull of the values v_j
                           (checked geometrically: a linear program looks for convex weights)
    the heads add up:      sum_h z_h W_O[h] + b_O = attn_out
    the residual stream:   resid_mid = resid_pre + attn_out,  resid_post = resid_mid + mlp_out
                           (post-norm: resid_mid = LN1(resid_pre + attn_out), and so on)

In training mode, attention dropout zeroes weights and scales the rest up without renormalising,
so rows stop summing to 1 and z may leave the hull; residual dropout breaks the residual sums.
The report shows where, and by how much.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .geometry import convex_weights

TOL = 1e-5


@dataclass
class CheckItem:
    name: str
    layer: int
    passed: bool
    worst: float  # the largest deviation found
    checked: int  # how many rows / points / positions were checked
    failures: list = field(default_factory=list)  # e.g. (batch, head, query, value) of rows that broke it

    def line(self) -> str:
        mark = "ok  " if self.passed else "FAIL"
        extra = f"; {len(self.failures)} failing, e.g. {self.failures[0]}" if self.failures else ""
        return f"{mark} layer {self.layer} {self.name}: worst deviation {self.worst:.3g} over {self.checked}{extra}"


@dataclass
class CheckReport:
    items: list[CheckItem]
    training: bool

    @property
    def passed(self) -> bool:
        return all(item.passed for item in self.items)

    def failed(self) -> list[CheckItem]:
        return [item for item in self.items if not item.passed]

    def __str__(self) -> str:
        mode = "training mode (dropout active)" if self.training else "evaluation mode"
        head = f"{sum(i.passed for i in self.items)}/{len(self.items)} checks pass, {mode}"
        return "\n".join([head] + [item.line() for item in self.items])

    def to_json(self) -> dict:
        return {"format": "qkv-explain", "version": 1, "kind": "check", "training": self.training, "passed": self.passed,
                "items": [{"name": i.name, "layer": i.layer, "passed": i.passed, "worst": i.worst, "checked": i.checked,
                           "failures": [list(f) for f in i.failures[:20]]} for i in self.items]}


def _rows(trace, layer: int) -> list[CheckItem]:
    pattern = trace["pattern", layer].double()  # (B, n_heads, T_q, T_k)
    sums = pattern.sum(-1)  # (B, n_heads, T_q)
    off = (sums - 1).abs()
    bad = (off > TOL).nonzero().tolist()
    items = [
        CheckItem("rows sum to 1", layer, not bad, off.max().item(), sums.numel(),
                  [(b, h, i, round(sums[b, h, i].item(), 6)) for b, h, i in bad]),
        CheckItem("weights are non-negative", layer, pattern.min().item() >= 0, max(0.0, -pattern.min().item()), pattern.numel()),
    ]
    if trace.cfg.causal:
        T_q, T_k = pattern.shape[-2:]
        hidden = ~torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q)  # above the diagonal
        leak = pattern[..., hidden].abs().max().item() if hidden.any() else 0.0
        items.append(CheckItem("masked weights are 0", layer, leak == 0.0, leak, int(hidden.sum()) * pattern.shape[0] * pattern.shape[1]))
    pad = _padding(trace)
    if pad is not None and pad.any():  # (B, T_k): no query may weigh a padding key
        leak = pattern.transpose(1, 3)[pad].abs().max().item()  # (B, T_k, T_q, n_heads)[pad]
        items.append(CheckItem("padding keys get weight 0", layer, leak == 0.0, leak, int(pad.sum()) * pattern.shape[1] * pattern.shape[2]))
    return items


def _padding(trace) -> torch.Tensor | None:
    """(B, T) bool, True at padding, for a trace of a padded batch; else None."""
    mask = getattr(trace, "attention_mask", None)
    return None if mask is None else ~mask.bool().cpu()


def _hull(trace, layer: int, max_points: int) -> CheckItem:
    v, z = trace["v", layer].double(), trace["z", layer].double()  # (B, T, n_heads, d_head)
    B, T, H, _ = v.shape
    pad = _padding(trace)
    real = [list(range(T)) if pad is None else (~pad[b]).nonzero().flatten().tolist() for b in range(B)]  # real tokens
    points = [(b, h, i) for b in range(B) for h in range(H) for i in real[b]]  # padding queries belong to no sentence
    if len(points) > max_points:  # an even spread over batch, heads and positions
        step = len(points) / max_points
        points = [points[int(n * step)] for n in range(max_points)]
    worst, failures = 0.0, []
    for b, h, i in points:
        keys = [j for j in real[b] if j <= i] if trace.cfg.causal else real[b]  # the values z may mix
        result = convex_weights(z[b, i, h].numpy(), v[b, keys, h].numpy(), tol=TOL)  # float32 rounding
        worst = max(worst, result.distance)
        if not result.inside:
            failures.append((b, h, i, round(result.distance, 6)))
    return CheckItem("z lies in the convex hull of the values", layer, not failures, worst, len(points), failures)


def _close(name: str, layer: int, got: torch.Tensor, want: torch.Tensor) -> CheckItem:
    diff = (got.double() - want.double()).abs()
    scale = 1.0 + want.abs().max().item()
    worst = diff.max().item()
    bad = (diff.amax(-1) > TOL * scale).nonzero().tolist()  # (batch, position) pairs
    return CheckItem(name, layer, not bad, worst, diff.shape[0] * diff.shape[1], [tuple(p) for p in bad])


def _stream(trace, layer: int) -> list[CheckItem]:
    model, items = trace.model, []
    attn_out = trace["attn_out", layer]
    if model is not None:
        W_O = model.blocks[layer].attn.W_O
        heads = trace["result", layer].sum(2) + (W_O.bias if W_O.bias is not None else 0)  # (B, T, d_model)
        items.append(_close("heads' results + b_O = attn_out", layer, heads, attn_out))
    pre, mid, post, mlp_out = (trace[n, layer] for n in ("resid_pre", "resid_mid", "resid_post", "mlp_out"))
    if not trace.cfg.residual:  # the lesson's model without residual connections: nothing is added
        pre, mid_in = 0.0, 0.0
        names = ("resid_mid = attn_out", "resid_post = mlp_out")
    else:
        mid_in = mid
        names = ("resid_mid = resid_pre + attn_out", "resid_post = resid_mid + mlp_out")
    if trace.cfg.norm != "post":
        items.append(_close(names[0], layer, mid, pre + attn_out))
        items.append(_close(names[1], layer, post, mid_in + mlp_out))
    elif model is not None:
        block = model.blocks[layer]
        with torch.no_grad():
            items.append(_close(f"{names[0].replace('= ', '= LN1(')})", layer, mid, block.ln1(pre + attn_out)))
            items.append(_close(f"{names[1].replace('= ', '= LN2(')})", layer, post, block.ln2(mid_in + mlp_out)))
    return items


def check(trace, max_hull_points: int = 2000) -> CheckReport:
    """Check every invariant on every layer of a trace made by run_with_trace (all names kept).

    The convex-hull check solves one small linear program per (sequence, head, query position),
    at most max_hull_points per layer, spread evenly.
    """
    from .trace import trace_names

    missing = [n for n in trace_names(trace.cfg) if n not in trace]
    if missing:
        raise ValueError(f"the check needs the whole trace; {missing[0]} and {len(missing) - 1} more were not recorded "
                         "(run run_with_trace without names)")
    items: list[CheckItem] = []
    for layer in range(trace.cfg.n_layers):
        items += _rows(trace, layer)
        items.append(_hull(trace, layer, max_hull_points))
        items += _stream(trace, layer)
    return CheckReport(items, trace.training)
