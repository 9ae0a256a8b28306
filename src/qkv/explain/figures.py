"""Figures: shared helpers for the plot_* modules, and the `qkv figure KIND` command.

    qkv figure attention --ckpt runs/demo --text "我投资了苹果" --out attn.png --lang zh
    qkv figure head      --ckpt DIR --text TEXT --layer 0 --head 1 --out head.svg
    qkv figure hull      --ckpt DIR --text TEXT --layer 0 --head 1 --token 3 --out hull.png
    qkv figure positions --out pe.png          qkv figure rope --out rope.png
    qkv figure embedding --ckpt DIR --tokens 我,你,他 --out emb.png
    qkv figure loss      --log runs/a --log runs/b --out loss.png

Every figure is written as PNG or SVG, chosen by the suffix of the output path. The plotting
functions take plain arrays; only run_figure touches checkpoints and traces.
"""

from __future__ import annotations

import argparse
from pathlib import Path

SUFFIXES = (".png", ".svg")
LANGS = ("en", "zh")
KINDS = ("attention", "head", "hull", "positions", "rope", "embedding", "loss")
NEEDS_MODEL = ("attention", "head", "hull", "embedding")
NEEDS_TRACE = ("attention", "head", "hull")


# ---------------------------------------------------------------- helpers for the plot_* modules

def check_path(path) -> Path:
    """The output path, if its suffix names a format we write (.png or .svg); ValueError otherwise."""
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        raise ValueError(f"cannot write a figure to {p}: the file name must end in .png or .svg")
    return p


def check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"lang must be 'en' or 'zh', got {lang!r}")
    return lang


def tr(lang: str, en: str, zh: str) -> str:
    """The English or the Chinese string."""
    return zh if check_lang(lang) == "zh" else en


def new_figure(figsize=(6.4, 4.8)):
    """A matplotlib Figure that draws Chinese with the CJK font.

    It is not registered with pyplot, so there is no global state to clean up: once saved and
    dropped it is freed (safe in a web server's threads too)."""
    from . import fonts

    fonts.setup_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def save(fig, path) -> Path:
    """Write the figure as PNG or SVG (by suffix). Returns the path.

    Nothing needs closing: the Figure was never given to pyplot, so dropping it frees it."""
    p = check_path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, format=p.suffix.lower()[1:], dpi=150)
    return p


def short(label: str, width: int = 8) -> str:
    """A token label short enough for an axis: long tokens end in an ellipsis."""
    return label if len(label) <= width else label[: width - 1] + "…"


def label_step(n: int, room: int = 24) -> int:
    """Show every k-th label so that at most `room` labels share an axis."""
    return max(1, -(-n // room))


# ---------------------------------------------------------------- the command

def add_figure_parser(subparsers) -> argparse.ArgumentParser:
    """Add `figure KIND ...` to a `qkv` command's subparsers."""
    p = subparsers.add_parser("figure", help="draw a figure (attention, head, hull, positions, rope, embedding, loss)")
    p.add_argument("kind", choices=KINDS, metavar="KIND", help=" | ".join(KINDS))
    p.add_argument("--ckpt", metavar="DIR", help="checkpoint directory (attention, head, hull, embedding; "
                                                 "default: the bundled model)")
    p.add_argument("--text", help="the text to run through the model (attention, head, hull)")
    p.add_argument("--layer", type=int, metavar="L", help="layer (head, hull: default 0; attention: default all)")
    p.add_argument("--head", type=int, metavar="H", help="head (head, hull: default 0)")
    p.add_argument("--token", type=int, metavar="T", help="index of the query token (hull; default the last)")
    p.add_argument("--out", required=True, metavar="PATH", help="output file, .png or .svg")
    p.add_argument("--lang", choices=LANGS, default="en", help="language of titles and labels")
    p.add_argument("--log", action="append", default=[], metavar="DIR", help="a run's directory (loss; repeatable)")
    p.add_argument("--tokens", help="comma-separated tokens to show (embedding)")
    return p


DEFAULTS = dict(ckpt=None, text=None, layer=None, head=None, token=None, lang="en", log=[], tokens=None)


def figure(kind: str, out, **kwargs) -> Path:
    """The Python form of `qkv figure`: figure("head", "h.png", ckpt="runs/demo", text="abc", head=1)."""
    unknown = sorted(set(kwargs) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown figure option(s) {', '.join(unknown)}; known: {', '.join(DEFAULTS)}")
    if isinstance(kwargs.get("log"), (str, Path)):
        kwargs["log"] = [kwargs["log"]]
    return run_figure(argparse.Namespace(kind=kind, out=out, **{**DEFAULTS, **kwargs}))


def _index(value: int | None, n: int, default: int, what: str) -> int:
    i = default if value is None else value
    if not -n <= i < n:
        raise ValueError(f"{what} {i} is out of range: valid are 0..{n - 1}")
    return i % n


def _trace(model, tokenizer, text: str | None):
    """(ids, trace, token labels) for the text."""
    import torch

    if not text:
        raise ValueError("the text is empty: give --text with at least one token")
    ids = tokenizer.encode(text)
    if len(ids) > model.cfg.n_ctx:
        raise ValueError(f"the text has {len(ids)} tokens but the model's context holds {model.cfg.n_ctx} (n_ctx); shorten it")
    if not hasattr(model, "run_with_trace"):
        raise ValueError("this model has no run_with_trace; update qkv")
    with torch.no_grad():
        _, trace = model.run_with_trace(torch.tensor([ids], dtype=torch.long))
    return ids, trace, [tokenizer.display(i) for i in ids]


def run_figure(args) -> Path:
    """Draw the figure that args (from add_figure_parser) ask for; print and return its path."""
    kind, lang = args.kind, check_lang(args.lang)
    if kind not in KINDS:
        raise ValueError(f"unknown figure kind {kind!r}; choose one of {', '.join(KINDS)}")
    out = check_path(args.out)
    model = tokenizer = None
    if kind in NEEDS_MODEL or (kind in ("positions", "rope") and args.ckpt):
        from ..checkpoint import load
        from ..lessons.base import default_ckpt

        model, tokenizer = load(args.ckpt or default_ckpt())
    if kind in NEEDS_TRACE:
        path = _trace_figure(kind, model, tokenizer, args, out, lang)
    elif kind == "positions":
        from .plot_position import sinusoidal_figure

        size = dict(n_ctx=model.cfg.n_ctx, d_model=model.cfg.d_model) if model else {}
        path = sinusoidal_figure(out, lang=lang, **size)
    elif kind == "rope":
        from .plot_position import rope_figure

        size = dict(d_head=model.cfg.d_head, base=model.cfg.rope_base) if model else {}
        path = rope_figure(out, lang=lang, **size)
    elif kind == "embedding":
        from .plot_embedding import embedding_map

        tokens = [t for t in args.tokens.split(",") if t] if args.tokens else None
        path = embedding_map(model, tokenizer, out, tokens=tokens, lang=lang)
    else:  # loss
        from .plot_training import loss_curves

        logs = list(args.log) or ([args.ckpt] if args.ckpt else [])
        if not logs:
            raise ValueError("the loss figure needs a run: give --log DIR (repeatable) or --ckpt DIR")
        path = loss_curves(logs, out, lang=lang)
    print(path)
    return Path(path)


def _trace_figure(kind, model, tokenizer, args, out, lang):
    import numpy as np

    cfg = model.cfg
    layer = _index(args.layer, cfg.n_layers, 0, "layer")
    head = _index(args.head, cfg.n_heads, 0, "head")
    ids, trace, labels = _trace(model, tokenizer, args.text)
    if kind == "attention":
        from .plot_attention import attention_grid

        layers = range(cfg.n_layers) if args.layer is None else [layer]
        patterns = np.stack([trace["pattern", L][0].detach().float().numpy() for L in layers])  # (layers, n_heads, T, T)
        title = None if args.layer is None else tr(lang, f"Layer {layer}", f"第 {layer} 层")
        return attention_grid(patterns, labels, out, lang=lang, title=title, first_layer=layers[0])
    if kind == "head":
        from .plot_attention import head_heatmap

        pattern = trace["pattern", layer][0, head].detach().float().numpy()  # (T, T)
        return head_heatmap(pattern, labels, out, layer, head, lang=lang)
    from .plot_hull import hull_figure

    q = _index(args.token, len(ids), len(ids) - 1, "token")
    values = trace["v", layer][0, : q + 1, head].detach().float().numpy()  # (q+1, d_head)
    z = trace["z", layer][0, q, head].detach().float().numpy()  # (d_head,)
    weights = trace["pattern", layer][0, head, q, : q + 1].detach().float().numpy()  # (q+1,)
    title = tr(lang, f"Layer {layer}, head {head}: the output z of token {q} ({labels[q]}) lies in the hull of the values",
               f"第 {layer} 层第 {head} 个头：第 {q} 个词元（{labels[q]}）的输出 z 落在 Value 的凸包内")
    return hull_figure(values, z, weights, out, labels=labels[: q + 1], title=title, lang=lang).path
