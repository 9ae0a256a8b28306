"""The logit lens: what a GPT would predict if its residual stream stopped before block L.

    P_L(next | tokens) = softmax(LN_final(x_L) W_U + b_U)       x_L = blocks.L.hook_resid_pre, L = 0 .. n_layers - 1
    P_n_layers         = softmax(LN_final(x_out) W_U + b_U)     x_out = the last block's hook_resid_post

Row L reads the residual stream entering block L through the model's own final norm (model.ln_final:
LayerNorm, RMSNorm, or the identity for a post-norm model, whose blocks already end in a norm, and for
norm="none") and its own unembedding (model.unembed), so the last row is the model's output,
softmax(model(ids)), to rounding. Row 0 is the embeddings alone (W_E[ids] + positions): a bigram guess.

    P = logit_lens(model, ids)                # (n_layers + 1, T, d_vocab), float32 on the CPU (refused in one
                                              # line, before it is made, if it cannot fit in the memory free)
    doc = lens_top(model, ids, position=3, k=5, tokenizer=tok)   # kind "logit-lens": the top 5 after each layer

Only a GPT has an unembedding to read the stream through: an encoder (no unembedding) and an
encoder-decoder (its decoder also needs a source sentence) are refused in one line.
"""

from __future__ import annotations

import weakref

import torch

from qkv.analysis.inputs import check_gpt, one_sequence
from qkv.core.io.document import header
from qkv.core.io.refusal import phrase
from qkv.core.io.shown import Document
from qkv.core.machine.device import model_device
from qkv.core.machine.memory import reserve
from qkv.core.model import evaluating
from qkv.core.model.nn.sliding import soft_cap
from qkv.core.see.indices import TextError, check_token

CHUNK_BYTES = 2**26  # the logits and probabilities of this many bytes at a time (~55 positions of a 152k vocabulary)


def stream_names(cfg) -> list[str]:
    """The residual stream the lens reads, row by row: entering each block, then leaving the last."""
    return [f"blocks.{L}.hook_resid_pre" for L in range(cfg.n_layers)] + [f"blocks.{cfg.n_layers - 1}.hook_resid_post"]


@torch.no_grad()
def unembed_stream(model, x: torch.Tensor) -> torch.Tensor:
    """softmax(LN_final(x) W_U + b_U) of residual vectors x (..., d_model) (soft-capped as the model's logits
    are, Gemma 2), by the model's own modules,
    on its device and in its dtype; float32 probabilities on the CPU (..., d_vocab)."""
    p = model.unembed.weight
    logits = soft_cap(model.unembed(model.ln_final(x.to(p.device, p.dtype))), model.cfg.output_logits_soft_cap)
    return torch.softmax(logits.float(), dim=-1).cpu()


@torch.no_grad()
def _lens(model, ids: list[int], positions=slice(None)) -> torch.Tensor:
    """(n_layers + 1, len(positions), d_vocab): the lens at the chosen positions. The probabilities are
    reserved before they are made (core/machine/memory.reserve: refused in one line if they cannot fit) and
    computed CHUNK_BYTES at a time, each row as it would be in one piece, so the peak is the result and one chunk."""
    names, cfg = stream_names(model.cfg), model.cfg
    device = model_device(model)
    T = len(range(len(ids))[positions])
    ticket = reserve(
        len(names) * T * cfg.d_vocab * 4, phrase("budget.what_lens", T=T, rows=len(names), d_vocab=cfg.d_vocab)
    )
    P = torch.empty(len(names), T, cfg.d_vocab)  # (n_layers + 1, T', d_vocab)
    weakref.finalize(P, ticket.release)  # the reservation lasts as long as the probabilities
    step = max(1, CHUNK_BYTES // (cfg.d_vocab * 8))  # positions per chunk: their logits and probabilities
    with evaluating(model):
        _, tr = model.run_with_trace(torch.tensor([ids], device=device), names=names)
        for L, name in enumerate(names):
            x = tr[name][0, positions]  # (T', d_model)
            for a in range(0, T, step):
                P[L, a : a + step] = unembed_stream(model, x[a : a + step])
    return P


def logit_lens(model, ids) -> torch.Tensor:
    """P[L, t] = softmax(LN_final(x_L[t]) W_U + b_U): (n_layers + 1, T, d_vocab) float32 on the CPU,
    x_L the residual stream entering block L; the last row is the model's own output (module docstring)."""
    check_gpt(model, "interpret.lens_family")
    return _lens(model, one_sequence(model, ids))


def lens_top(model, ids, position: int = -1, k: int = 5, tokenizer=None) -> dict:
    """The kind-"logit-lens" document of one position: after each layer, the k most probable next tokens
    (id, probability, and the token's text if a tokenizer is given), and the probability of the token the
    model itself ranks first at the end, layer by layer (a shown.Document: a dict with a notebook display)."""
    check_gpt(model, "interpret.lens_family")
    ids = one_sequence(model, ids)
    T, cfg = len(ids), model.cfg
    i = check_token(position, T)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise TextError.of("interpret.top_k", k=repr(k))
    k = min(k, cfg.d_vocab)
    P = _lens(model, ids, slice(i, i + 1))[:, 0]  # (n_layers + 1, d_vocab)
    final = int(P[-1].argmax())
    show = (lambda t: tokenizer.display(t)) if tokenizer is not None else (lambda t: None)
    layers = []
    for L, (p, name) in enumerate(zip(P, stream_names(cfg))):
        top = torch.topk(p, k)
        rows = [{"id": int(t), "token": show(int(t)), "p": float(q)} for q, t in zip(top.values, top.indices)]
        layers.append({"layer": L, "name": name, "top": rows, "p_final": float(p[final])})
    return Document(
        {
            **header("logit-lens"),
            "ids": ids,
            "tokens": [tokenizer.display(t) for t in ids] if tokenizer is not None else None,
            "position": i,
            "k": k,
            "norm": cfg.norm,
            "final": {"id": final, "token": show(final)},
            "layers": layers,  # n_layers + 1 rows: entering block 0 .. n_layers - 1, then the model's output
        }
    )  # a dict that shows itself in a notebook (shown.Document)
