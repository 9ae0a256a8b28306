"""What one token looks at, what it takes from there, and what the model predicts next.

    doc = explain(model, tokenizer, "患者 服用 华法林 后 出现 黑便", layer=1, head=0)   # a JSON-ready dict
    qkv.presentation.explanation.Explanation(doc).to_text("zh")                       # shown

The model runs once, traced (qkv.trace), in eval mode. With `layer` and `head` the explanation follows
one head step by step for the query token (default: the last; negative counts from the end):
s_j = q·k_j / √d_head and A = softmax(s) for every key it can see; z = Σ_j A_j v_j; the residual
update x_new = x + Σ_h z_h W_O[h] + b_O; then P(next) = softmax(h W_out + b) — for a model with an
LM head; an encoder (MiniLM, `has_lm_head` False) outputs one vector per token and has no next-token
distribution, so its "next" is null. Without them it
summarises every head (of `layer`, if given; `head` alone picks that head in every layer): the key
it weighs most and the entropy of its attention row. A text longer than n_ctx is cropped from the
left (the dropped count is in "cropped", and a note says so); token indices refer to the kept tokens.
Without a causal mask (an encoder) every query sees every key, those after it included. For a
tokenizer that adds special tokens ([CLS] … [SEP]), the default query is the last token that is not one.

JSON (`to_json()`, a dict; json.dumps(ensure_ascii=False) writes it):
    format "qkv-explain", version 1, kind "explain"
    lang        "en" | "zh": added by qkv.presentation.explanation, in the language it is shown in
    mode        "head" (layer and head given) | "summary"
    text        the input text;  cropped: tokens dropped on the left (0 unless longer than n_ctx)
    tokens, ids readable token strings (tokenizer.display: a space is "␣", a newline "\\n") and ids
    token       the query position (0-based, in tokens);  query: its display string
    layer, head the ones asked for (null when not given), made non-negative
    model       {n_layers, n_heads, d_model, d_head, n_ctx, norm, pos, causal, arch, design, has_lm_head,
                generates, translates}
    attention   (mode "head") {scale: √d_head, argmax: position of the largest weight, weight_sum,
                rows: [{pos, token, dot: q·k, scaled: q·k/√d_head, weight: A}] by position,
                one per key the query can see}
    z           (mode "head") {norm: |z|, first: its first coordinates, d_head, check: max|z − Σ A_j v_j|,
                values: the top `top` keys by A_j·|v_j|: [{pos, token, weight, v_norm, contribution, share}]}
    residual    (mode "head") {norm: "pre" | "post", x: |resid_pre|, head_out: |z W_O| of this head,
                attn_out: |all heads + b_O|, x_plus_attn: |x + attn_out|, resid_mid: |resid_mid|}
    heads       (mode "summary") [{layer, head, top_pos, top_token, top_weight, entropy_bits}],
                with max_entropy_bits = log2(number of visible keys) beside it
    next        null for a model without LM head (an encoder), else {position, top: [{rank, id, token, prob}]
                the `top` most likely next tokens of softmax(h W_out + b) at the query position,
                actual: {id, token, prob, rank} of the token that follows in the text, or null for the
                last token}
"""

from __future__ import annotations

import math

import torch

from qkv.core.io.document import header
from qkv.core.io.refusal import Refusal
from qkv.core.model import evaluating
from qkv.core.see.indices import check_layer_head, check_token

N_COORDS = 4


def model_fields(model, keys) -> dict:
    """A document's "model": the config fields `keys`, the dtype of its weights (what every number was
    computed in: float32, or bfloat16 with --dtype), and what the model's family is and can do."""
    family, p = model.family, next(model.parameters(), None)
    return {
        **{k: getattr(model.cfg, k) for k in keys},
        "dtype": "float32" if p is None else str(p.dtype).removeprefix("torch."),  # what it computed in
        "design": family.design,
        "has_lm_head": family.next_token,
        "generates": family.generates,
        "translates": family.translates,
    }


# the model's fields an explanation document carries (its readers draw the stack from them)
MODEL_FIELDS = tuple(
    "n_layers n_heads d_model d_head n_ctx norm pos causal arch unembed_bias parallel_attn_mlp".split()
)


@torch.no_grad()
def explain(
    model,
    tokenizer,
    text: str,
    layer: int | None = None,
    head: int | None = None,
    token: int | None = None,
    top: int = 5,
) -> dict:
    """Explain how the model processes `text` at one query token (see the module docstring)."""
    cfg = model.cfg
    if not isinstance(text, str) or not text:
        raise Refusal.of("errors.explain_empty")
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise Refusal.of("errors.top_type", top=repr(top))
    layer, head = check_layer_head(cfg, layer, head)
    all_ids = tokenizer.encode(text)  # UnknownTokenError (a ValueError) names what is missing
    ids, cropped = fit_context(cfg, tokenizer, all_ids)
    T = len(ids)
    pos = check_token(default_token(tokenizer, ids) if token is None else token, T)
    mode = "head" if layer is not None and head is not None else "summary"

    layers = [layer] if mode == "head" else ([layer] if layer is not None else list(range(cfg.n_layers)))
    has_lm = model.family.next_token
    wanted = ({"probs"} if has_lm else set()) | {f"blocks.{L}.attn.hook_pattern" for L in layers}
    if mode == "head":
        p, a = f"blocks.{layer}.", f"blocks.{layer}.attn."
        wanted |= {a + n for n in ("hook_dots", "hook_attn_scores", "hook_v", "hook_z", "hook_result")}
        wanted |= {p + n for n in ("hook_resid_pre", "hook_attn_out", "hook_resid_mid")}
    device = next(model.parameters()).device
    with evaluating(model):
        _, tr = model.run_with_trace(torch.tensor([ids], device=device), names=wanted.__contains__)

    shown = [tokenizer.display(i) for i in ids]
    n_vis = pos + 1 if cfg.causal else T  # the keys this query can see
    data = {
        **header("explain"),
        "mode": mode,
        "text": text,
        "cropped": cropped,
        "tokens": shown,
        "ids": [int(i) for i in ids],
        "token": pos,
        "query": shown[pos],
        "layer": layer,
        "head": head,
        "model": model_fields(model, MODEL_FIELDS),
    }
    if mode == "head":
        data.update(_head_detail(tr, cfg, layer, head, pos, n_vis, shown, top))
    else:
        data["heads"], data["max_entropy_bits"] = _summary(tr, layers, head, pos, n_vis, shown), math.log2(n_vis)
        sliding = [L for L in layers if cfg.causal and cfg.slides(L) and cfg.sliding_window < n_vis]
        if sliding:  # Gemma: these layers' rows spread over the window's keys only
            data["window"] = {"layers": sliding, "size": cfg.sliding_window}
    data["next"] = _next(tr, tokenizer, all_ids, cropped, pos, top) if has_lm else None  # an encoder predicts no token
    return data


def fit_context(cfg, tokenizer, ids: list[int]) -> tuple[list[int], int]:
    """(the ids the model reads, how many were dropped on the left). A causal model reads the last
    n_ctx tokens of a longer text; an encoder sees all tokens at once, framed by [CLS] … [SEP], so a
    text longer than n_ctx is refused, not cut. Text of no tokens (or only special ones) is refused."""
    if not ids:
        raise Refusal.of("errors.fit_empty")
    if not [i for i in ids if i not in getattr(tokenizer, "special", ())]:
        raise Refusal.of("errors.fit_only_special")
    if len(ids) > cfg.n_ctx and not cfg.causal:
        raise Refusal.of("errors.fit_too_long", T=len(ids), n_ctx=cfg.n_ctx)
    cropped = max(0, len(ids) - cfg.n_ctx)
    return ids[cropped:], cropped


def default_token(tokenizer, ids: list[int]) -> int:
    """The query shown when none is asked for: the last token, or the last that is not a special
    token ([CLS], [SEP]) for a tokenizer that adds them."""
    special = getattr(tokenizer, "special", None) or ()
    real = [n for n, i in enumerate(ids) if i not in special]
    return real[-1] if real else len(ids) - 1


def _next(tr, tokenizer, all_ids, cropped, pos, top) -> dict:
    """The `top` most likely next tokens at the query position, and the rank of the one that follows."""
    probs = tr["probs"][0, pos]  # (d_vocab,): softmax(h W_out + b) at the query position
    following = all_ids[pos + cropped + 1] if pos + cropped + 1 < len(all_ids) else None
    return {"position": pos, **next_rows(probs, tokenizer, top, following)}


def next_rows(probs: torch.Tensor, tokenizer, top: int, following: int | None) -> dict:
    """{top: the `top` most likely tokens of probs (d_vocab,), actual: the probability and rank of
    `following` (the token that comes next), or None when nothing follows}."""
    values, indices = torch.topk(probs, min(top, probs.shape[0]))
    rows = [
        {"rank": r + 1, "id": i, "token": tokenizer.display(i), "prob": p}
        for r, (p, i) in enumerate(zip(values.tolist(), indices.tolist()))
    ]
    actual = None
    if following is not None:
        p = probs[following]
        actual = {
            "id": following,
            "token": tokenizer.display(following),
            "prob": p.item(),
            "rank": int((probs > p).sum()) + 1,
        }
    return {"top": rows, "actual": actual}


def _head_detail(tr, cfg, L, H, pos, n_vis, shown, top) -> dict:
    # a sliding-window layer (Gemma) sees the last sliding_window keys only: those are the rows
    first = max(0, n_vis - cfg.sliding_window) if cfg.causal and cfg.slides(L) else 0
    x, attn_out = tr["resid_pre", L][0, pos], tr["attn_out", L][0, pos]
    # a parallel block (GPT-NeoX) has no resid_mid: its MLP reads x too; x + attn_out is the sum shown
    resid_mid = x + attn_out if cfg.parallel_attn_mlp else tr["resid_mid", L][0, pos]
    return step_detail(
        cfg,
        shown,
        top,
        first=first,
        dots=tr["dots", L][0, H, pos, first:n_vis],
        scaled=tr["attn_scores", L][0, H, pos, first:n_vis],
        weight=tr["pattern", L][0, H, pos, first:n_vis],
        v=tr["v", L][0, first:n_vis, H],
        z=tr["z", L][0, pos, H],
        head_out=tr["result", L][0, pos, H],
        x=x,
        attn_out=attn_out,
        resid_mid=resid_mid,
    )


def step_detail(
    cfg, tokens, top, *, dots, scaled, weight, v, z, head_out, x, attn_out, resid_mid, first: int = 0
) -> dict:
    """One query of one head, step by step (kind explain's attention, z and residual): dots, scaled, weight (n_keys,)
    are q·k, q·k/√d_head and A over the keys named by `tokens` from `first` on (a sliding window's first key);
    v (n_keys, d_head) their values, z (d_head,) the mix; head_out, x, attn_out, resid_mid (d_model,) the residual
    update this head takes part in."""
    rows = [
        {"pos": first + j, "token": tokens[first + j], "dot": d, "scaled": s, "weight": w}
        for j, (d, s, w) in enumerate(zip(dots.tolist(), scaled.tolist(), weight.tolist()))
    ]
    v_norm = v.norm(dim=-1)
    contrib = weight * v_norm  # A_j |v_j|
    share = contrib / contrib.sum().clamp_min(1e-30)
    order = torch.argsort(contrib, descending=True)[:top].tolist()
    vn, cl, sh, wl = v_norm.tolist(), contrib.tolist(), share.tolist(), weight.tolist()
    values = [
        {"pos": first + j, "token": tokens[first + j], "weight": wl[j], "v_norm": vn[j], "contribution": cl[j]}
        | {"share": sh[j]}
        for j in order
    ]
    residual = {
        "norm": cfg.norm,
        "x": x.norm().item(),
        "head_out": head_out.norm().item(),
        "attn_out": attn_out.norm().item(),
        "x_plus_attn": (x + attn_out).norm().item(),
        "resid_mid": resid_mid.norm().item(),
    }
    return {
        "attention": {
            "scale": cfg.attn_scale or math.sqrt(cfg.d_head),  # Gemma: sqrt(query_pre_attn_scalar)
            "argmax": first + int(weight.argmax().item()),
            **({"first": first} if first else {}),  # a sliding window: the keys before `first` are hidden
            **({"soft_cap": cfg.attn_scores_soft_cap} if cfg.attn_scores_soft_cap is not None else {}),
            "weight_sum": weight.sum().item(),
            "rows": rows,
        },
        "z": {
            "norm": z.norm().item(),
            "first": z[:N_COORDS].tolist(),
            "d_head": cfg.d_head,
            "check": (z - weight @ v).abs().max().item(),
            "values": values,
        },
        "residual": residual,
    }


def _summary(tr, layers, head, pos, n_vis, shown) -> list[dict]:
    A = torch.stack([tr["pattern", L][0, :, pos, :n_vis] for L in layers])  # (n_layers, n_heads, n_vis)
    A = A.double()
    entropy = -(A * torch.where(A > 0, A.log2(), torch.zeros_like(A))).sum(-1)  # bits, 0·log 0 = 0
    w, j = A.max(-1)
    out = []
    for li, L in enumerate(layers):
        for h in [head] if head is not None else range(A.shape[1]):
            jj = int(j[li, h])
            out.append(
                {
                    "layer": L,
                    "head": h,
                    "top_pos": jj,
                    "top_token": shown[jj],
                    "top_weight": float(w[li, h]),
                    "entropy_bits": float(entropy[li, h]),
                }
            )
    return out
