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

import weakref
from collections.abc import Callable, Iterable, Mapping

import torch

from qkv.core.io.document import header
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.io.shown import Shown
from qkv.core.machine.device import model_device
from qkv.core.machine.memory import reserve
from qkv.core.see.footprint import TRACE_TAPS, pass_bytes
from qkv.core.see.indices import check_layer_head
from qkv.core.see.names import names_of
from qkv.core.see.tap import readable, recording
from qkv.core.spec.config import ModelConfig
from qkv.core.spec.family import family_of


def trace_names(cfg: ModelConfig) -> list[str]:
    """Every name a trace of a model with this config can hold, in the order of the computation: what
    the model's modules declare they record (see/names.py), then the probs if its family predicts."""
    return [*names_of(cfg).order, *(TRACE_TAPS if family_of(cfg).next_token else ())]


class Trace(Shown, Mapping):
    """Named activations of one forward pass (read-only mapping from name to tensor); its repr is one
    short line and, in a notebook, a summary (qkv.apps.displays), never the numbers."""

    shown_as = "trace"

    def __init__(
        self,
        activations: dict[str, torch.Tensor],
        cfg: ModelConfig,
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
        self.names = names_of(cfg)  # what its modules declare: the shorthand and the key/value heads read it
        self.training = bool(model is not None and model.training)

    def resolve(self, name: str, layer: int | None = None, sub: str | None = None, stack: str | None = None) -> str:
        """The full name for a short one: ("pattern", 0) -> blocks.0.attn.hook_pattern.

        An encoder-decoder's names start with its stack, the decoder (the last stack) unless `stack`
        says "encoder": ("pattern", 0, "cross_attn") -> decoder.blocks.0.cross_attn.hook_pattern."""
        hook = name if name.startswith("hook_") or name in ("logits", *TRACE_TAPS) else f"hook_{name}"
        family = family_of(self.cfg)
        scope = "" if hook in ("logits", *TRACE_TAPS) else family.stack(stack).prefix  # KeyError: no such stack
        if layer is None:
            full = scope + (f"{sub}.{hook}" if sub else hook)
        else:
            try:
                layer, _ = check_layer_head(self.cfg, layer, None, stack)
            except ValueError as e:
                raise KeyError(str(e)) from None
            prefix = f"{scope}blocks.{layer}."
            # a short name reaches the block's own names, its attention's and its MLP's (Block.SHORTHAND)
            full = prefix + f"{sub}.{hook}" if sub else self.names.short.get(prefix + hook, prefix + f"attn.{hook}")
        if full in self.activations:
            return full
        raise KeyError(f"{full} is not in this trace (it holds {len(self.activations)} activations)")

    def __getitem__(self, key) -> torch.Tensor:
        """A full name gives the activation as recorded; the shorthand ("v", L) gives, with grouped-query
        attention, what each query head reads: the key/value heads repeated for their groups (B, T, n_heads, d)."""
        if isinstance(key, tuple):
            key = self.resolve(*key)
            t, group = self.activations[key], self.cfg.group
            if group > 1 and key in self.names.kv and t.shape[2] == self.cfg.n_kv_heads:  # (B, T, n_kv_heads, d)
                return t.repeat_interleave(group, dim=2)
        elif key not in self.activations:
            key = self.resolve(key)
        return self.activations[key]

    def __iter__(self):
        return iter(self.activations)

    def __len__(self) -> int:
        return len(self.activations)

    def brief(self) -> str:
        return f"{len(self)} activations, tokens={tuple(self.ids.shape)}"

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


def name_filter(cfg: ModelConfig, names) -> Callable[[str], bool]:
    """A predicate on activation names for `names` (None: all; a name or a list of full names, each
    checked against trace_names(cfg); a predicate as it is)."""
    if names is None:
        return lambda name: True
    if callable(names):
        return names
    wanted = set([names] if isinstance(names, str) else names)
    unknown = sorted(wanted - set(trace_names(cfg)))
    if unknown:
        raise Refusal.of("errors.activation_unknown", names=unknown[:5])
    return wanted.__contains__


def _reserve(model, ids: torch.Tensor, keep, inputs: dict):
    """Reserve the pass's memory before it runs (footprint.pass_bytes; machine/memory.reserve refuses what cannot
    fit): B sequences of the longer of the source's and the target's T tokens."""
    tgt = inputs.get("tgt_ids")
    T = max(ids.shape[-1], tgt.shape[-1] if isinstance(tgt, torch.Tensor) else 0)
    cfg = model.cfg
    names = [n for n in trace_names(cfg) if keep(n)]
    dtype = next(model.parameters()).dtype
    return reserve(pass_bytes(cfg, T, names, dtype, ids.shape[0]), phrase("budget.what_trace", T=T, n=len(names)))


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
    ticket = _reserve(model, ids, keep, inputs)
    device = model_device(model)
    inputs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
    with recording(keep, model) as recorder:  # with any hooks that are on (model.hooks): the trace holds their edits
        logits = model(ids.to(device), explicit=True, **inputs)
    acts = recorder.activations  # on the CPU, in float32 for a bfloat16 model (tap.readable); the logits too
    logits = acts["logits"] if "logits" in acts else readable(logits)  # the trace's own tensor, not a second copy
    cpu = {k: v.to("cpu") if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
    mask = cpu.get("attention_mask", cpu.get("src_mask"))  # an encoder's padding, or a seq2seq source's
    trace = Trace(acts, model.cfg, ids.to("cpu"), model, mask, cpu.get("tgt_ids"))
    weakref.finalize(trace, ticket.release)  # the memory goes back to the budget with the trace
    if not model.family.next_token:
        return logits, trace
    if keep("probs"):
        acts["probs"] = model.next_token_probs(logits)  # P(next token) = softmax(h W_out + b)
    return logits, trace
