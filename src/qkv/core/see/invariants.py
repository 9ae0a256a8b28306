"""Check the invariants of a trace: what must hold for the numbers to be the real computation.

    each attention row:    a_ij >= 0,  sum_j a_ij = 1,  a_ij = 0 where the mask hides j
    each head's output:    z_i = sum_j a_ij v_j lies in the convex hull of the values v_j
                           (checked geometrically: a linear program looks for convex weights)
    the heads add up:      sum_h z_h W_O[h] + b_O = attn_out
    the residual stream:   resid_mid = resid_pre + attn_out,  resid_post = resid_mid + mlp_out
                           (post-norm: resid_mid = LN1(resid_pre + attn_out), and so on;
                           a parallel block: resid_post = resid_pre + attn_out + mlp_out, no resid_mid)

In training mode, attention dropout zeroes weights and scales the rest up without renormalising,
so rows stop summing to 1 and z may leave the hull; residual dropout breaks the residual sums.
The report shows where, and by how much.

An encoder-decoder is checked stack by stack: the encoder's blocks, then the decoder's, where
cross-attention adds its own: rows sum to 1, padding of the source gets weight 0, each z lies in
the hull of the SOURCE's values, and resid_mid_cross = resid_mid + cross_attn_out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import torch

from qkv.core.io.document import header
from qkv.core.io.finite import weights_phrase
from qkv.core.io.refusal import Phrase
from qkv.core.io.shown import Shown
from qkv.core.see.hull import convex_weights
from qkv.core.spec.family import family_of

TOL = 1e-5  # float32's rounding, relative to the size of the numbers
# a model that computes in half precision (--dtype bfloat16) rounds every sum at its own precision
HALF_TOL = {torch.bfloat16: 2**-7, torch.float16: 2**-9}


def tolerance(model) -> float:
    """How far a check may deviate for a model computing in its parameters' dtype (None: float32)."""
    p = next(model.parameters(), None) if model is not None else None
    return HALF_TOL.get(p.dtype, TOL) if p is not None else TOL


@dataclass
class CheckItem:
    name: str
    layer: int
    passed: bool
    worst: float  # the largest deviation found
    checked: int  # how many rows / points / positions were checked
    failures: list = field(default_factory=list)  # e.g. (batch, head, query, value) of rows that broke it
    site: str = ""  # an encoder-decoder's "encoder", "decoder" or "decoder cross-attention"; "" for one stack

    def line(self) -> str:
        mark = "ok  " if self.passed else "FAIL"
        extra = f"; {len(self.failures)} failing, e.g. {self.failures[0]}" if self.failures else ""
        where = f"{self.site} layer {self.layer}" if self.site else f"layer {self.layer}"
        return f"{mark} {where} {self.name}: worst deviation {self.worst:.3g} over {self.checked}{extra}"


@dataclass(repr=False)
class CheckReport(Shown):
    """What qkv.check found; in a notebook it shows itself in the reader's words (qkv.apps.displays)."""

    shown_as: ClassVar[str] = "check"

    items: list[CheckItem]
    training: bool
    weights: str | None = None  # core.finite.weights_note: which weight is NaN or infinite, None if none
    weights_checked: bool = False  # a trace that holds its model: its weights were looked at
    tol: float = TOL  # the deviation that passes (relative): float32's, or a half-precision model's
    weights_why: Phrase | None = None  # `weights` as a catalogued phrase, to be said in the reader's language

    @property
    def passed(self) -> bool:
        return self.weights is None and all(item.passed for item in self.items)

    def failed(self) -> list[CheckItem]:
        return [item for item in self.items if not item.passed]

    def __str__(self) -> str:
        mode = "training mode (dropout active)" if self.training else "evaluation mode"
        weights = [f"FAIL {self.weights}" if self.weights else "ok   the model's weights are finite"]
        weights = weights if self.weights_checked else []  # the weights' finiteness is one check more
        passed = sum(i.passed for i in self.items) + (self.weights_checked and self.weights is None)
        head = f"{passed}/{len(self.items) + len(weights)} checks pass, {mode}"
        if self.tol != TOL:
            head += f", at the model's half precision (deviations up to {self.tol:g} pass)"
        return "\n".join([head, *weights] + [item.line() for item in self.items])

    def brief(self) -> str:
        weights = int(self.weights_checked)  # the weights' finiteness is one check more
        passed = sum(i.passed for i in self.items) + (weights and self.weights is None)
        return f"passed={self.passed}, {passed}/{len(self.items) + weights} checks pass, training={self.training}"

    def to_json(self) -> dict:
        return {
            **header("check"),
            "training": self.training,
            "passed": self.passed,
            "tolerance": self.tol,  # the relative deviation that passes: float32's, or a half-precision model's
            **({"weights_finite": self.weights is None} if self.weights_checked else {}),
            **({"weights": self.weights} if self.weights else {}),
            "items": [
                {
                    "name": i.name,
                    "layer": i.layer,
                    "passed": i.passed,
                    "worst": i.worst,
                    "checked": i.checked,
                    "failures": [list(f) for f in i.failures[:20]],
                    **({"site": i.site} if i.site else {}),
                }
                for i in self.items
            ],
        }


@dataclass(frozen=True)
class _Site:
    """One attention sub-layer to check: its names' prefix, whether it is causal, which keys are padding."""

    site: str  # "", "encoder", "decoder", "decoder cross-attention"
    layer: int
    prefix: str  # e.g. "decoder.blocks.0."
    attn: str  # "attn" or "cross_attn"
    causal: bool
    pad: torch.Tensor | None  # (B, T_k) True at padding keys, or None
    pad_queries: bool  # the queries are the same (padded) tokens as the keys
    cross: bool = False  # its block has a cross-attention sub-layer too (a decoder block)
    stack: str = ""  # the stack's name: the model's attribute that holds its blocks ("" : model.blocks)
    tol: float = TOL  # the deviation that passes (checks.tolerance)


def _sites(trace) -> list[_Site]:
    """Every attention sub-layer of the model, stack by stack (its family's stacks, models.family)."""
    cfg, pad, tol = trace.cfg, _padding(trace), tolerance(trace.model)
    sites = []
    for stack in family_of(cfg).stacks:
        own_pad = pad if stack.padded else None  # a decoder's target is not padded: its tokens are all real
        for L in range(getattr(cfg, stack.layers)):
            p = f"{stack.prefix}blocks.{L}."
            causal = stack.is_causal(cfg)
            sites.append(_Site(stack.name, L, p, "attn", causal, own_pad, stack.padded, stack.cross, stack.name, tol))
            if stack.cross:  # its queries are the target's, its keys the (padded) source's
                sites.append(
                    _Site(
                        f"{stack.name} cross-attention", L, p, "cross_attn", False, pad, False, False, stack.name, tol
                    )
                )
    return sites


def _item(site: _Site, name: str, passed: bool, worst: float, checked: int, failures: list | None = None) -> CheckItem:
    return CheckItem(name, site.layer, passed, worst, checked, [] if failures is None else failures, site=site.site)


def _rows(trace, site: _Site) -> list[CheckItem]:
    pattern = trace[f"{site.prefix}{site.attn}.hook_pattern"].double()  # (B, n_heads, T_q, T_k)
    sums = pattern.sum(-1)  # (B, n_heads, T_q)
    off = (sums - 1).abs()
    bad = (~(off <= site.tol)).nonzero().tolist()  # a NaN row is as wrong as a row that sums to 2
    items = [
        _item(
            site,
            "rows sum to 1",
            not bad,
            off.max().item(),
            sums.numel(),
            [(b, h, i, round(sums[b, h, i].item(), 6)) for b, h, i in bad],
        ),
        _item(
            site,
            "weights are non-negative",
            pattern.min().item() >= 0,  # False when a weight is NaN (torch's min passes NaN on)
            -pattern.min().item() if not pattern.min().item() >= 0 else 0.0,
            pattern.numel(),
        ),
    ]
    if site.causal:
        T_q, T_k = pattern.shape[-2:]
        seen = torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q)  # on and below the diagonal
        window = _window(trace, site)
        if window is not None:  # a sliding-window layer (Gemma, Mistral): the older keys are hidden too
            seen = seen.triu(T_k - T_q - window + 1)
        hidden = ~seen
        leak = pattern[..., hidden].abs().max().item() if hidden.any() else 0.0
        items.append(
            _item(
                site, "masked weights are 0", leak == 0.0, leak, int(hidden.sum()) * pattern.shape[0] * pattern.shape[1]
            )
        )
    if site.pad is not None and site.pad.any():  # (B, T_k): no query may weigh a padding key
        leak = pattern.transpose(1, 3)[site.pad].abs().max().item()  # (B, T_k, T_q, n_heads)[pad]
        what = "padding keys get weight 0" if site.pad_queries else "source padding gets weight 0"
        items.append(_item(site, what, leak == 0.0, leak, int(site.pad.sum()) * pattern.shape[1] * pattern.shape[2]))
    return items


def _padding(trace) -> torch.Tensor | None:
    """(B, T) bool, True at padding, for a trace of a padded batch; else None."""
    mask = getattr(trace, "attention_mask", None)
    return None if mask is None else ~mask.bool().cpu()


def _window(trace, site: _Site) -> int | None:
    """The sliding window of the site's attention (keys more than window - 1 before a query are hidden), or None."""
    if trace.model is None:
        return None
    return getattr(getattr(_block(trace.model, site), site.attn), "window", None)


def _hull(trace, site: _Site, max_points: int) -> CheckItem:
    v = trace[f"{site.prefix}{site.attn}.hook_v"].double()  # (B, T_k, n_kv_heads, d_head): the values (a source's)
    z = trace[f"{site.prefix}{site.attn}.hook_z"].double()  # (B, T_q, n_heads, d_head)
    B, T_k, H = v.shape[0], v.shape[1], z.shape[2]
    group = H // v.shape[2]  # grouped-query attention: query head h reads key/value head h // group
    # the distance is L1, over d_head coordinates: a half-precision model rounds each of them at its own
    # precision, so its bound is d_head of them (float32's stays TOL: its rounding is far below it)
    hull_tol = site.tol if site.tol == TOL else site.tol * v.shape[-1]
    T_q = z.shape[1]
    real = [
        list(range(T_k)) if site.pad is None else (~site.pad[b]).nonzero().flatten().tolist() for b in range(B)
    ]  # real keys
    queries = real if site.pad_queries else [list(range(T_q))] * B  # padding queries belong to no sentence
    points = [(b, h, i) for b in range(B) for h in range(H) for i in queries[b]]
    if len(points) > max_points:  # an even spread over batch, heads and positions
        step = len(points) / max_points
        points = [points[int(n * step)] for n in range(max_points)]
    worst, window = 0.0, _window(trace, site) or T_k
    failures: list[tuple[int, int, int, float | str]] = []  # (batch, head, query, distance or "not finite")
    for b, h, i in points:
        # the values z may mix: the earlier keys (a causal mask's), within the window when the layer slides
        keys = [j for j in real[b] if i - window < j <= i] if site.causal else real[b]
        point, values = z[b, i, h], v[b, keys, h // group]
        if not (torch.isfinite(point).all() and torch.isfinite(values).all()):  # no hull to be in
            worst = math.nan
            failures.append((b, h, i, "not finite"))
            continue
        result = convex_weights(point.numpy(), values.numpy(), tol=hull_tol)  # the model's rounding
        worst = worst if math.isnan(worst) else max(worst, result.distance)
        if not result.inside:
            failures.append((b, h, i, round(result.distance, 6)))
    name = (
        "z lies in the convex hull of the source's values"
        if site.attn == "cross_attn"
        else "z lies in the convex hull of the values"
    )
    return _item(site, name, not failures, worst, len(points), failures)


def _close(site: _Site, name: str, got: torch.Tensor, want: torch.Tensor) -> CheckItem:
    diff = (got.double() - want.double()).abs()
    scale = 1.0 + want.abs().max().item()
    worst = diff.max().item()
    bad = (~(diff.amax(-1) <= site.tol * scale)).nonzero().tolist()  # (batch, position) pairs; NaN is bad
    return _item(site, name, not bad, worst, diff.shape[0] * diff.shape[1], [tuple(p) for p in bad])


def _block(model, site: _Site):
    return (getattr(model, site.stack) if site.stack else model).blocks[site.layer]


def _heads(trace, site: _Site) -> list[CheckItem]:
    """Each head's z_h W_O[h], summed with b_O, is the sub-layer's output."""
    if trace.model is None:
        return []
    W_O = getattr(_block(trace.model, site), site.attn).W_O
    # on the CPU, as every recorded activation; a block with a norm after attention (Gemma, OLMo-2) adds
    # LN1_post(attn.hook_out) as hook_attn_out: the heads sum to attn.hook_out, before that norm
    raw = f"{site.prefix}{site.attn}.hook_out"
    out = trace[raw] if raw in trace else trace[f"{site.prefix}hook_{site.attn}_out"]
    b_O = W_O.bias.detach().to(out.device) if W_O.bias is not None else 0
    heads = trace[f"{site.prefix}{site.attn}.hook_result"].sum(2) + b_O  # (B, T, d_model)
    return [_close(site, f"heads' results + b_O = {site.attn}_out", heads, out)]


def _apply(module, x: torch.Tensor) -> torch.Tensor:
    """module(x) on the module's device and in its dtype (a model on a GPU, or in bfloat16), the result
    where and as x is (the trace's CPU, float32)."""
    p = next(module.parameters(), None)
    return module(x.to(p.device, p.dtype)).to(x.device, x.dtype) if p is not None else module(x)


def _stream(trace, site: _Site) -> list[CheckItem]:
    """The residual sums of one block: resid_mid = resid_pre + attn_out, ... (post-norm: LN of each sum)."""
    p, cfg = site.prefix, trace.cfg
    if cfg.parallel_attn_mlp:  # both sub-layers read resid_pre; one sum
        pre, summed = trace[p + "hook_resid_pre"], trace[p + "hook_attn_out"] + trace[p + "hook_mlp_out"]
        norms = _norm(trace, site, "ln1", pre) + _norm(trace, site, "ln2", pre)
        return [
            *norms,
            _close(site, "resid_post = resid_pre + attn_out + mlp_out", trace[p + "hook_resid_post"], pre + summed),
        ]
    # (the sum's name, the residual before it, the sub-layer's output, the residual after it, its LayerNorm)
    steps = [("resid_mid", "hook_resid_pre", "hook_attn_out", "hook_resid_mid", "ln1")]
    if site.cross:
        steps += [
            ("resid_mid_cross", "hook_resid_mid", "hook_cross_attn_out", "hook_resid_mid_cross", "ln2"),
            ("resid_post", "hook_resid_mid_cross", "hook_mlp_out", "hook_resid_post", "ln3"),
        ]
    elif cfg.mlp != "none":  # attention only: resid_post is resid_mid, nothing is added between them
        steps += [("resid_post", "hook_resid_mid", "hook_mlp_out", "hook_resid_post", "ln2")]
    items = []
    for name, before, out, after, ln in steps:
        o, a = trace[p + out], trace[p + after]
        if cfg.norm_placement != "pre":  # Gemma, OLMo-2: out = LN_post(the sub-layer's raw output)
            sub = "attn" if out == "hook_attn_out" else "mlp"
            items += _norm(trace, site, f"{ln}_post", trace[f"{p}{sub}.hook_out"])
        summed = f"{before.removeprefix('hook_')} + {out.removeprefix('hook_')}"
        if cfg.residual:
            b = trace[p + before]
        else:  # the lesson's model without residual connections: nothing is added
            b, summed = 0.0, out.removeprefix("hook_")
        if cfg.pre_norm:
            items += _norm(trace, site, ln, trace[p + before])
        if cfg.norm != "post":
            items.append(_close(site, f"{name} = {summed}", a, b + o))
        elif trace.model is not None:
            norm = getattr(_block(trace.model, site), ln)
            with torch.no_grad():
                items.append(_close(site, f"{name} = {ln.upper()}({summed})", a, _apply(norm, b + o)))
    return items


def _norm(trace, site: _Site, ln: str, x: torch.Tensor) -> list[CheckItem]:
    """A pre-norm block's LayerNorm or RMSNorm, from the residual x it reads: its scale is
    sqrt(mean(x^2) + eps) (LayerNorm: of x - mean(x)), and out = (x - mean) / scale * weight (+ bias)."""
    norm = getattr(_block(trace.model, site), ln) if trace.model is not None else None
    weight = getattr(norm, "weight", None)
    if norm is None or weight is None:  # norm="none", or a trace without its model
        return []
    p, rms = f"{site.prefix}{ln}.", trace.cfg.norm == "rms"
    x = x.double()
    centred = x if rms else x - x.mean(-1, keepdim=True)
    scale = (centred.pow(2).mean(-1, keepdim=True) + norm.eps).sqrt()  # (B, T, 1)
    out = centred / scale * weight.detach().double().cpu()
    if getattr(norm, "bias", None) is not None:
        out = out + norm.bias.detach().double().cpu()
    what = "sqrt(mean(x²) + eps)" if rms else "sqrt(var(x) + eps)"
    formula = "x / scale · weight" if rms else "(x - mean) / scale · weight + bias"
    return [
        _close(site, f"{ln}'s scale = {what}", trace[p + "hook_scale"], scale),
        _close(site, f"{ln}'s out = {formula}", trace[p + "hook_out"], out),
    ]


def check(trace, max_hull_points: int = 2000) -> CheckReport:
    """Check every invariant on every layer of a trace made by run_with_trace (all names kept).

    The convex-hull check solves one small linear program per (sequence, head, query position),
    at most max_hull_points per layer, spread evenly.
    """
    from qkv.core.see.trace import trace_names

    missing = [n for n in trace_names(trace.cfg) if n not in trace]
    if missing:
        raise ValueError(
            f"the check needs the whole trace; {missing[0]} and {len(missing) - 1} more were not recorded "
            "(run run_with_trace without names)"
        )
    items: list[CheckItem] = []
    for site in _sites(trace):
        items += _rows(trace, site)
        items.append(_hull(trace, site, max_hull_points))
        items += _heads(trace, site)
        if site.attn == "attn":  # a block's residual sums, once per block
            items += _stream(trace, site)
    checked = trace.model is not None
    why = weights_phrase(trace.model) if checked else None
    weights = None if why is None else str(why)  # core.finite.weights_note's line
    return CheckReport(items, trace.training, weights, checked, tolerance(trace.model), weights_why=why)
