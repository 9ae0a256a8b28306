"""Direct logit attribution: how much each part of a GPT writes, directly, into one logit.

In a pre-norm GPT the residual stream at the end is a sum of what every part wrote into it:

    x = W_E[token] + pos + sum_L ( sum_h z_h W_O[h] + b_O  +  MLP_L )        (hook_embed, hook_pos_embed,
                                                                               attn.hook_result, hook_mlp_out)
    logit = LN_final(x) . W_U[:, token] + b_U[token]

The final norm divides by one number per position, its scale s (ln_final.hook_scale). Held at the
value of this very run, the norm is linear, so the logit splits into one term per part c:

    LayerNorm:  (c - mean(c)) / s * w . W_U[:, token]        plus the constant  b . W_U[:, token]
    RMSNorm:    c / s * w . W_U[:, token]                    (no centring, no shift)
    norm=none:  c . W_U[:, token]                            (s = 1, w = 1)

and b_U[token]. The terms add up to the logit exactly (in float64: a float64 model's own logit to
1e-12; a float32 model's to its float32 rounding, reported as `rounding`). "Direct": a head's term is
what its output does to the logit through the residual stream alone, not through the later layers
that read it. A post-norm model has no such path (its final norm is inside every block) and a model
without residual connections no stream to split: both are refused in one line. Inside model.hooks(...)
the parts are those of the edited run; a hook that changes the residual stream itself (not a part that
writes into it) leaves them summing to something other than the logit.

    a = logit_attribution(model, ids, position=-1, token=" Paris", tokenizer=tok)
    a.components             # {"embed": .., "pos_embed": .., "L0H0": .., .., "L0_b_O": .., "L0_mlp": .., ..}
    a.heads                  # (n_layers, n_heads) float64; a.mlp, a.attn_bias (n_layers,) or None
    a.to_json()              # kind "logit-attribution"

Component names: embed, pos_embed, L{l}H{h} (a head), L{l}_b_O (the attention output's bias),
L{l}_mlp, ln_final_b (the final LayerNorm's shift), b_U (the unembedding's bias), in that order.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from qkv.analysis.inputs import check_gpt, one_sequence, read_token
from qkv.core.io.document import header
from qkv.core.io.shown import Shown
from qkv.core.machine.device import model_device
from qkv.core.model import evaluating
from qkv.core.see.indices import TextError, check_token
from qkv.core.see.trace import trace_names


@dataclass(repr=False)
class Attribution(Shown):
    """The direct contributions to one logit (see the module docstring); every number is float64."""

    ids: list[int]
    position: int
    token: int
    logit: float  # the model's own logit at (position, token)
    components: dict[str, float]  # name -> its term, in the order of the computation
    heads: torch.Tensor  # (n_layers, n_heads): the L{l}H{h} terms
    attn_bias: torch.Tensor | None  # (n_layers,): the L{l}_b_O terms; None without W_O's bias
    mlp: torch.Tensor | None  # (n_layers,): the L{l}_mlp terms; None for attention-only blocks
    scale: float  # the final norm's s at this position (1 without a norm)
    norm: str
    tokens: list[str] | None = None  # the ids shown by the tokenizer, if one was given
    token_text: str | None = None  # the token shown by the tokenizer
    shown_as = "logit-attribution"  # a notebook's display (qkv.apps.displays); not a field

    def brief(self) -> str:
        return f"position={self.position}, token={self.token}, logit={self.logit:.4g}, {len(self.components)} terms"

    @property
    def total(self) -> float:
        """The sum of the terms: the logit, up to the model's own rounding."""
        return float(sum(self.components.values()))

    def to_json(self) -> dict:
        """The kind-"logit-attribution" document: the terms in order, and the heads as an
        (n_layers, n_heads) table beside the per-layer b_O and MLP terms, for a page to draw."""
        c = self.components
        return {
            **header("logit-attribution"),
            "ids": self.ids,
            "tokens": self.tokens,
            "position": self.position,
            "token": self.token,
            "token_text": self.token_text,
            "logit": self.logit,
            "total": self.total,
            "rounding": self.logit - self.total,
            "norm": self.norm,
            "scale": self.scale,
            "components": [{"name": k, "value": v} for k, v in c.items()],
            "embed": c["embed"],
            "pos_embed": c.get("pos_embed"),
            "heads": self.heads.tolist(),
            "attn_bias": None if self.attn_bias is None else self.attn_bias.tolist(),
            "mlp": None if self.mlp is None else self.mlp.tolist(),
            "constant": {"ln_final_b": c.get("ln_final_b"), "b_U": c.get("b_U")},
        }


def _names(cfg) -> list[str]:
    """What the attribution reads from one traced forward pass."""
    known = set(trace_names(cfg))
    wanted = ["hook_embed", "hook_pos_embed", "ln_final.hook_scale", "logits"]
    for L in range(cfg.n_layers):
        wanted += [f"blocks.{L}.attn.hook_result", f"blocks.{L}.hook_mlp_out"]
    return [n for n in wanted if n in known]


def _block_terms(model, tr, at, term, parts: dict[str, float]):
    """Each block's terms: every head's z_h W_O[h], the attention's bias b_O, the MLP's output, each
    read along the direction (term); added to `parts` by name. (heads, biases, mlps), lists per layer."""
    heads, bias, mlp = [], [], []
    for L, block in enumerate(model.blocks):
        h = term(at(f"blocks.{L}.attn.hook_result"))  # (n_heads,): each head's z_h W_O[h]
        heads.append(h)
        parts.update({f"L{L}H{n}": float(v) for n, v in enumerate(h)})
        b_O = block.attn.W_O.bias
        if b_O is not None:
            bias.append(term(b_O.detach().double().cpu()))
            parts[f"L{L}_b_O"] = float(bias[-1])
        name = f"blocks.{L}.hook_mlp_out"
        if name in tr:
            mlp.append(term(at(name)))
            parts[f"L{L}_mlp"] = float(mlp[-1])
    return heads, bias, mlp


@torch.no_grad()
def logit_attribution(model, ids, position: int = -1, token=None, tokenizer=None) -> Attribution:
    """The direct logit attribution of `token` (an id, or a one-token word read by `tokenizer`; None: the
    model's own top prediction) at `position` of the sequence `ids` ((T,), (1, T) or a list)."""
    check_gpt(model, "interpret.attribution_family")
    cfg = model.cfg
    if not cfg.residual:
        raise TextError.of("interpret.attribution_no_residual")
    if cfg.norm == "post":
        raise TextError.of("interpret.attribution_post_norm")
    if cfg.norm_placement != "pre" or cfg.output_logits_soft_cap is not None:  # Gemma, OLMo-2
        raise TextError.of(
            "gemma.attribution", what="output_logits_soft_cap" if cfg.norm_placement == "pre" else "norm_placement"
        )
    ids = one_sequence(model, ids)
    i = check_token(position, len(ids))
    if token is not None:
        token = read_token(token, tokenizer, cfg.d_vocab, many="interpret.token_pieces", empty="outputs.target_empty")
    with evaluating(model):
        logits, tr = model.run_with_trace(torch.tensor([ids], device=model_device(model)), names=_names(cfg))
    if token is None:
        token = int(logits[0, i].argmax())

    def at(name: str) -> torch.Tensor:
        return tr[name][0, i].double()  # (d_model,) or (n_heads, d_model): position i of the one sequence

    # the direction each part is read along: w * W_U[:, token] / s (w = 1, s = 1 without a norm)
    ln = model.ln_final
    u = model.unembed.weight[token].detach().double().cpu()  # (d_model,): W_U[:, token]
    w = ln.weight.detach().double().cpu() if cfg.pre_norm else torch.ones_like(u)
    s = float(at("ln_final.hook_scale")) if cfg.pre_norm else 1.0
    direction = w * u / s  # (d_model,)
    centre = cfg.norm == "pre"  # LayerNorm subtracts each part's own mean (a linear map); RMSNorm does not

    def term(c: torch.Tensor) -> torch.Tensor:  # c (..., d_model) -> (...)
        if centre:
            c = c - c.mean(-1, keepdim=True)
        return c @ direction

    parts: dict[str, float] = {"embed": float(term(at("hook_embed")))}
    if "hook_pos_embed" in tr:
        parts["pos_embed"] = float(term(at("hook_pos_embed")))
    heads, bias, mlp = _block_terms(model, tr, at, term, parts)
    if getattr(ln, "bias", None) is not None:
        parts["ln_final_b"] = float(ln.bias.detach().double().cpu() @ u)
    if model.unembed.bias is not None:
        parts["b_U"] = float(model.unembed.bias[token].detach().double())
    return Attribution(
        ids=ids,
        position=i,
        token=token,
        logit=float(logits[0, i, token].double()),
        components=parts,
        heads=torch.stack(heads),  # (n_layers, n_heads)
        attn_bias=torch.stack(bias) if bias else None,
        mlp=torch.stack(mlp) if mlp else None,
        scale=s,
        norm=cfg.norm,
        tokens=[tokenizer.display(t) for t in ids] if tokenizer is not None else None,
        token_text=tokenizer.display(token) if tokenizer is not None else None,
    )
