"""Draw a named figure from a checkpoint, a text or a training log: what `qkv figure` runs.

This module loads the model and runs it (a trace, a translation); qkv.presentation draws what it is given.

    figure("attention", "attn.png", text="我 投资了 苹果", lang="zh")          # every head, every layer
    figure("head", "head.svg", ckpt="runs/demo", text=TEXT, layer=0, head=1)
    figure("hull", "hull.png", text=TEXT, layer=0, head=1, token=3)
    figure("positions", "pe.png");  figure("rope", "rope.png")
    figure("embedding", "emb.png", tokens=["我", "你", "他"]);  figure("loss", "loss.png", log=["runs/a", "runs/b"])
    figure("alignment", "align.png", ckpt="runs/translate", text="我 投资了 苹果 。", layer=1)   # translation models

`ckpt` defaults to the bundled model (for "alignment": the bundled translation model). Every figure is
PNG or SVG, chosen by the suffix of `out`. On a translation model (an encoder-decoder) "alignment" draws
its cross-attention (target × source) and "hull" the cross-attention's z among the source values.
"""

from __future__ import annotations

from pathlib import Path

from qkv.core.io.refusal import Refusal
from qkv.presentation.figures import check_path
from qkv.presentation.i18n import lang_of

KINDS = ("attention", "head", "hull", "positions", "rope", "embedding", "loss", "alignment")
NEEDS_MODEL = ("attention", "head", "hull", "embedding", "alignment")
NEEDS_TRACE = ("attention", "head", "hull")


def figure(
    kind: str,
    out,
    ckpt=None,
    text: str | None = None,
    layer: int | None = None,
    head: int | None = None,
    token: int | None = None,
    lang: str | None = None,
    log=(),
    tokens=None,
) -> Path:
    """Draw the figure `kind` (one of KINDS) to `out` and return its path (see the module docstring).

    layer, head (head, hull: default 0; attention: every layer unless given), token (hull: default
    the last), tokens (embedding: token texts, or one comma-separated string), log (loss: run
    directories or log.jsonl files; default ckpt's)."""
    lang = lang_of(lang)
    if kind not in KINDS:
        raise ValueError(f"unknown figure kind {kind!r}; choose one of {', '.join(KINDS)}")
    out = check_path(out)
    model = tokenizer = None
    if kind in NEEDS_MODEL or (kind in ("positions", "rope") and ckpt):
        from qkv.core.hub.bundled import default_ckpt, default_translate_ckpt
        from qkv.core.train.checkpoint import load

        model, tokenizer = load(ckpt or (default_translate_ckpt() if kind == "alignment" else default_ckpt()))
    if kind == "alignment" or (kind in NEEDS_TRACE and model.family.translates):
        path = _translation_figure(kind, model, tokenizer, out, lang, text, layer, head, token)
    elif kind in NEEDS_TRACE:
        path = _trace_figure(kind, model, tokenizer, out, lang, text, layer, head, token)
    elif kind == "positions":
        from qkv.presentation.plot_position import sinusoidal_figure

        size = dict(n_ctx=model.cfg.n_ctx, d_model=model.cfg.d_model) if model else {}
        path = sinusoidal_figure(out, lang=lang, **size)
    elif kind == "rope":
        from qkv.presentation.plot_position import rope_figure

        size = dict(d_head=model.cfg.d_head, base=model.cfg.rope_base) if model else {}
        path = rope_figure(out, lang=lang, **size)
    elif kind == "embedding":
        from qkv.presentation.plot_embedding import embedding_map

        if isinstance(tokens, str):
            tokens = [s for s in tokens.split(",") if s]
        path = embedding_map(model, tokenizer, out, tokens=tokens or None, lang=lang)
    else:  # loss
        from qkv.presentation.plot_training import loss_curves

        logs = [log] if isinstance(log, (str, Path)) else list(log or [])
        logs = logs or ([ckpt] if ckpt else [])
        if not logs:
            raise ValueError("the loss figure needs a run: give --log DIR (repeatable) or --ckpt DIR")
        path = loss_curves(logs, out, lang=lang)
    return Path(path)


def _trace(model, tokenizer, text: str | None):
    """(ids, trace, token labels) for the text."""
    import torch

    if not text:
        raise Refusal.of("errors.figure_no_text")
    ids = tokenizer.encode(text)
    if len(ids) > model.cfg.n_ctx:
        raise ValueError(
            f"the text has {len(ids)} tokens but the model's context holds {model.cfg.n_ctx} (n_ctx); shorten it"
        )
    with torch.no_grad():
        _, trace = model.run_with_trace(torch.tensor([ids], dtype=torch.long))
    return ids, trace, [tokenizer.display(i) for i in ids]


def _trace_figure(kind, model, tokenizer, out, lang, text, layer_arg, head_arg, token):
    """A GPT's figure: the layer and head checked, the text traced, then drawn (presentation.draw)."""
    from qkv.core.see.indices import check_layer_head
    from qkv.presentation.draw import trace_figure

    cfg = model.cfg
    layer, head = check_layer_head(cfg, 0 if layer_arg is None else layer_arg, 0 if head_arg is None else head_arg)
    _, trace, labels = _trace(model, tokenizer, text)
    return trace_figure(kind, cfg, trace, labels, out, lang, layer, head, token, every_layer=layer_arg is None)


def _translation_figure(kind, model, tokenizer, out, lang, text, layer, head, token):
    """A translation model's figure: checked, the text translated and traced, then drawn
    (presentation.draw_translation)."""
    from qkv.analysis import cross_attention as cross
    from qkv.core.see.indices import check_layer_head
    from qkv.presentation.draw_translation import translation_figure

    if not model.family.translates:
        raise ValueError(f"the alignment figure needs a translation model; this one is {model.family.title}")
    if kind in ("attention", "head"):
        raise ValueError(
            f"this is a translation model: `qkv figure {kind}` draws a GPT's self-attention; "
            "draw its cross-attention with `qkv figure alignment`"
        )
    cross.check_translation_model(model, tokenizer)
    if not text or not text.strip():
        raise ValueError("the text is empty: give --text with the source sentence")
    cfg = model.cfg
    L, H = check_layer_head(cfg, cfg.n_layers - 1 if layer is None else layer, head, "decoder")
    r = cross.read(model, tokenizer, text)
    tr = cross.trace(model, r, {cross.cross_name(L, h) for h in ("hook_pattern", "hook_v", "hook_z")}.__contains__)
    return translation_figure(kind, tokenizer, r, tr, out, lang, L, H, token)
