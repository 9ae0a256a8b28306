"""Trace: every intermediate of one forward pass, by name.

    logits, trace = model.run_with_trace(ids)
    trace["blocks.0.attn.hook_pattern"]      # (B, n_heads, T, T): the attention weights A
    trace["pattern", 0]                      # the same, shorter
    trace["normalized", 0, "ln1"]            # blocks.0.ln1.hook_normalized: (x - mean) / scale

Names and meanings follow TransformerLens 4 (docs/trace-format.md lists every name, its shape and
formula, and whether TransformerLens records the same value). Shapes: hook_q/rot_q/z
(B, T, n_heads, d_head); hook_k/v/rot_k (B, T, n_kv_heads, d_head) (grouped-query attention: fewer
key/value heads; the shorthand trace["v", L] repeats each for the query heads of its group);
hook_dots (raw q . k, qkv's own), hook_attn_scores (scaled, masked: -inf)
and hook_pattern (B, n_heads, T_q, T_k); hook_result (B, T, n_heads, d_model): each head's
z_h W_O[h]; a LayerNorm's hook_scale (B, T, 1), hook_normalized and hook_out (B, T, d_model);
residual-stream hooks (B, T, d_model); mlp.hook_pre/post (B, T, d_mlp); logits and probs
(B, T, d_vocab), qkv's own. Tracing takes the explicit path; the logits are the model's.
A model on a GPU runs there (the token ids are moved to it); what a trace returns (the logits and
every activation) is on the CPU, where the analysis code reads it.
An encoder (arch="bert") adds hook_token_type_embed and ln_embed.hook_* before its first block and
has no logits or probs (docs/trace-format.md: where an encoder differs). An encoder-decoder's names
start with encoder. or decoder.; its decoder blocks add cross_attn.hook_* (the pattern is
(B, n_heads, T_target, T_source)), hook_cross_attn_out, hook_resid_mid_cross and ln3.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import torch

from qkv.core.io.document import header
from qkv.core.machine.device import model_device
from qkv.core.see.indices import check_layer_head
from qkv.core.see.tap import readable, recording
from qkv.core.spec.family import family_of

LN_HOOKS = ("hook_scale", "hook_normalized", "hook_out")
ATTN_HOOKS = (
    "hook_q",
    "hook_k",
    "hook_v",
    "hook_q_normed",
    "hook_k_normed",
    "hook_rot_q",
    "hook_rot_k",
    "hook_dots",
    "hook_attn_scores",
    "hook_pattern",
    "hook_z",
    "hook_result",
)


_KV_HOOKS = ("attn.hook_k", "attn.hook_v", "attn.hook_k_normed", "attn.hook_rot_k")  # n_kv_heads of them


def _ln(cfg, name: str) -> list[str]:
    return [] if cfg.norm == "none" else [f"{name}.{hook}" for hook in LN_HOOKS]


def _block_names(cfg, p: str, rope: bool, cross: bool = False) -> list[str]:
    """The names of one block with prefix p, in the order of the computation."""

    def attn(name: str, rotates: bool) -> list[str]:
        def kept(hook: str) -> bool:
            return (rotates or not hook.startswith("hook_rot")) and (cfg.qk_norm or not hook.endswith("_normed"))

        return [f"{p}{name}.{hook}" for hook in ATTN_HOOKS if kept(hook)] + [f"{p}hook_{name}_out"]

    ln1, ln2, ln3 = (_ln(cfg, p + n) for n in ("ln1", "ln2", "ln3"))
    gated = [p + "mlp.hook_pre_linear"] if cfg.mlp == "gated" else []  # x W_in beside the gate's x W_gate
    mlp = [p + "mlp.hook_pre", *gated, p + "mlp.hook_post", p + "hook_mlp_out"]
    # (sub-layer names, its LayerNorm, the residual hook after it): x = x + f(LN(x)) or x = LN(x + f(x))
    subs = [(attn("attn", rope), ln1, p + "hook_resid_mid")]
    if cfg.mlp == "none":  # attention only: the stream after attention is the block's output
        subs += [([], [], p + "hook_resid_post")]
    elif cross:  # a decoder block: cross-attention between the two, LN2 before it, the MLP's LN is LN3
        subs += [(attn("cross_attn", False), ln2, p + "hook_resid_mid_cross"), (mlp, ln3, p + "hook_resid_post")]
    else:
        subs += [(mlp, ln2, p + "hook_resid_post")]
    names = [p + "hook_resid_pre"]
    for hooks, ln, resid in subs:
        names += (hooks + ln if cfg.norm == "post" else ln + hooks) + [resid]
    return names


def trace_names(cfg) -> list[str]:
    """Every name a trace of a model with this config can hold, in the order of the computation:
    each stack of its family (models.family) in turn, then the logits and probs if it predicts."""
    family = family_of(cfg)
    rope, additive = cfg.pos == "rope", cfg.pos in ("learned", "sinusoidal")
    names = []
    for stack in family.stacks:
        p = stack.prefix
        names += [p + "hook_embed"] + ([p + "hook_pos_embed"] if additive else [])
        if stack.embed_norm:  # x = LN_embed(embed + pos_embed + token_type_embed)
            names += ([p + "hook_token_type_embed"] if cfg.n_token_types else []) + [
                f"{p}ln_embed.{hook}" for hook in LN_HOOKS
            ]
        for layer in range(getattr(cfg, stack.layers)):
            names += _block_names(cfg, f"{p}blocks.{layer}.", rope, stack.cross)
        if stack.final_norm == "always" or (stack.final_norm == "pre" and cfg.pre_norm):
            names += _ln(cfg, p + "ln_final")  # a post-norm block already ends in its LayerNorm
    return names + (["logits", "probs"] if family.next_token else [])


class Trace(Mapping):
    """Named activations of one forward pass (read-only mapping from name to tensor)."""

    def __init__(
        self,
        activations: dict[str, torch.Tensor],
        cfg,
        ids: torch.Tensor,
        model=None,
        attention_mask: torch.Tensor | None = None,
        tgt_ids: torch.Tensor | None = None,
    ):
        self.activations = activations
        self.cfg = cfg
        self.ids = ids  # an encoder-decoder: the source tokens
        self.tgt_ids = tgt_ids  # an encoder-decoder: the target tokens fed to the decoder (B, T); else None
        self.attention_mask = attention_mask  # (B, T), 0 at padding (an encoder's batch, a seq2seq source), or None
        self.model = model  # the model that ran (checks read its W_O bias and LayerNorms)
        self.training = bool(model is not None and model.training)

    def resolve(self, name: str, layer: int | None = None, sub: str | None = None, stack: str | None = None) -> str:
        """The full name for a short one: ("pattern", 0) -> blocks.0.attn.hook_pattern.

        An encoder-decoder's names start with its stack, the decoder (the last stack) unless `stack`
        says "encoder": ("pattern", 0, "cross_attn") -> decoder.blocks.0.cross_attn.hook_pattern."""
        hook = name if name.startswith("hook_") or name in ("logits", "probs") else f"hook_{name}"
        family = family_of(self.cfg)
        scope = "" if hook in ("logits", "probs") else family.stack(stack).prefix  # KeyError: no such stack
        if layer is None:
            candidates = [scope + (f"{sub}.{hook}" if sub else hook)]
        else:
            try:
                layer, _ = check_layer_head(self.cfg, layer, None, stack)
            except ValueError as e:
                raise KeyError(str(e)) from None
            prefix = f"{scope}blocks.{layer}."
            candidates = (
                [prefix + f"{sub}.{hook}"] if sub else [prefix + f"attn.{hook}", prefix + hook, prefix + f"mlp.{hook}"]
            )
        for full in candidates:
            if full in self.activations:
                return full
        raise KeyError(f"{candidates[0]} is not in this trace (it holds {len(self.activations)} activations)")

    def __getitem__(self, key) -> torch.Tensor:
        """A full name gives the activation as recorded; the shorthand ("v", L) gives, with grouped-query
        attention, what each query head reads: the key/value heads repeated for their groups (B, T, n_heads, d)."""
        if isinstance(key, tuple):
            key = self.resolve(*key)
            t, group = self.activations[key], self.cfg.group
            if group > 1 and key.endswith(_KV_HOOKS) and t.shape[2] == self.cfg.n_kv_heads:  # (B, T, n_kv_heads, d)
                return t.repeat_interleave(group, dim=2)
        elif key not in self.activations:
            key = self.resolve(key)
        return self.activations[key]

    def __iter__(self):
        return iter(self.activations)

    def __len__(self) -> int:
        return len(self.activations)

    def __repr__(self) -> str:
        return f"Trace({len(self)} activations, tokens={tuple(self.ids.shape)})"

    def to_json(self, tokenizer=None, digits: int = 6) -> dict:
        """The trace as JSON (docs/trace-format.md): each activation's shape and its numbers,
        rounded to `digits` significant digits; -inf (masked scores) becomes null."""
        ids = self.ids[0].tolist()
        acts, bad, first = {}, 0, None
        for name, t in self.activations.items():
            values = t[0].double()  # the first sequence of the batch
            rounded = [
                float(f"{x:.{digits}g}") if x == x and abs(x) != float("inf") else None
                for x in values.flatten().tolist()
            ]
            acts[name] = {"shape": list(values.shape), "data": rounded}
            # a null is the mask's -inf in the scores; anywhere else (and NaN or +inf there) it was no number
            lost = values.isnan() | (values == float("inf"))
            if not name.endswith("hook_attn_scores"):
                lost |= values == float("-inf")
            if lost.any():
                bad += int(lost.sum())
                first = first or f"activations.{name}.data[{int(lost.flatten().nonzero()[0])}]"
        out = {
            **header("trace"),
            **({"non_finite": {"count": bad, "first": first}} if bad else {}),
            "config": self.cfg.to_dict(),
            "ids": ids,
            "tokens": [tokenizer.display(i) for i in ids] if tokenizer else None,
            "training": self.training,
            "activations": acts,
        }
        if self.tgt_ids is not None:  # an encoder-decoder: ids and tokens are the source's
            tgt = self.tgt_ids[0].tolist()
            out.update(tgt_ids=tgt, tgt_tokens=[tokenizer.display(i) for i in tgt] if tokenizer else None)
        return out


def name_filter(cfg, names) -> Callable[[str], bool]:
    """A predicate on activation names for `names` (None: all; a name or a list of full names, each
    checked against trace_names(cfg); a predicate as it is)."""
    if names is None:
        return lambda name: True
    if callable(names):
        return names
    wanted = set([names] if isinstance(names, str) else names)
    unknown = sorted(wanted - set(trace_names(cfg)))
    if unknown:
        raise ValueError(f"unknown activation name(s): {', '.join(unknown[:5])}; see qkv.trace_names(cfg)")
    return wanted.__contains__


@torch.no_grad()
def run_with_trace(model, ids: torch.Tensor, names: Iterable[str] | Callable[[str], bool] | None = None, **inputs):
    """Run the model on ids (B, T) and record the named activations; returns (logits, Trace)
    (an encoder: (hidden states, Trace), with no logits or probs).

    `names` (a list of full names, or a predicate on names) keeps only those, so memory stays
    bounded on long inputs. Attention dropout and residual dropout apply only if the model is in
    training mode, exactly as in a training step. `inputs` go to the model (an encoder's
    attention_mask). The model runs on its own device (ids and inputs are moved there); the
    logits and the trace come back on the CPU (on a CPU model: the very tensors, no copies; a bfloat16
    model's in float32, exactly: tap.readable).
    """
    if ids.dim() == 1:
        ids = ids[None]  # (1, T)
    keep = name_filter(model.cfg, names)
    device = model_device(model)
    inputs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
    with recording(keep, model) as recorder:  # with any hooks that are on (model.hooks): the trace holds their edits
        logits = model(ids.to(device), explicit=True, **inputs)
    acts = recorder.activations  # on the CPU, in float32 for a bfloat16 model (tap.readable); the logits too
    logits = acts["logits"] if "logits" in acts else readable(logits)  # the trace's own tensor, not a second copy
    cpu = {k: v.to("cpu") if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
    mask = cpu.get("attention_mask", cpu.get("src_mask"))  # an encoder's padding, or a seq2seq source's
    trace = Trace(acts, model.cfg, ids.to("cpu"), model, mask, cpu.get("tgt_ids"))
    if not model.family.next_token:
        return logits, trace
    if keep("probs"):
        acts["probs"] = model.next_token_probs(logits)  # P(next token) = softmax(h W_out + b)
    return logits, trace
