"""Attention patterns as heatmaps: row = the query token (who is looking), column = the key token
(who is looked at), colour = the weight A[q, k] = softmax(q·k / √d_head) over the row.

Each row sums to 1. In a causal model a token cannot look ahead, so the upper triangle is 0;
those cells are drawn grey, as "not allowed" rather than "weight 0 by choice".
"""

from __future__ import annotations

import numpy as np

from qkv.presentation.figures import check_path, column_labels, label_step, new_figure, save, short
from qkv.presentation.i18n import lang_of, translator

CMAP = "Blues"
MASKED = "#c8c8c8"  # grey for cells the causal mask forbids


def _masked(pattern: np.ndarray) -> np.ma.MaskedArray:
    """Hide the cells above the diagonal that are exactly 0 (the causal mask)."""
    T = pattern.shape[-1]
    above = np.triu(np.ones((T, T), dtype=bool), k=1)
    return np.ma.masked_array(pattern, mask=np.broadcast_to(above, pattern.shape) & (pattern == 0))


def _cmap():
    import matplotlib

    return matplotlib.colormaps[CMAP].with_extremes(bad=MASKED)


def _check(pattern: np.ndarray, tokens, dims: int, what: str) -> np.ndarray:
    pattern = np.asarray(pattern, dtype=float)
    if pattern.ndim != dims or pattern.shape[-1] != pattern.shape[-2]:
        raise ValueError(
            f"{what} must have shape {'(n_layers, n_heads, T, T)' if dims == 4 else '(T, T)'}; got {pattern.shape}"
        )
    if len(tokens) != pattern.shape[-1]:
        raise ValueError(f"{len(tokens)} token labels for {pattern.shape[-1]} positions")
    return pattern


def _tick_labels(ax, tokens, axis: str, rotate: bool = False, width: int = 8, room: int = 24) -> None:
    step = label_step(len(tokens), room)
    ticks = list(range(0, len(tokens), step))
    labels = [short(tokens[i], width) for i in ticks]
    if axis == "x":
        column_labels(ax, ticks, labels, rotate, fontsize="small")
    else:
        ax.set_yticks(ticks, labels, fontsize="small")


def attention_grid(patterns, tokens, path, lang: str | None = None, title: str | None = None, first_layer: int = 0):
    """One small heatmap per head: rows = layers, columns = heads, one colour scale 0..1.

    patterns: (n_layers, n_heads, T, T). Token labels only on the left column (queries) and the
    bottom row (keys). `first_layer` numbers the rows when only some layers are given."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    say = translator(lang, "figures.attention")
    check_path(path)
    patterns = _check(patterns, tokens, 4, "patterns")
    n_layers, n_heads, T, _ = patterns.shape
    tokens = [str(t) for t in tokens]
    cell = min(2.6, max(1.4, 0.09 * T + 0.8))  # inches per panel
    fig = new_figure((cell * n_heads + 1.6, cell * n_layers + 1.2))
    axes = fig.subplots(n_layers, n_heads, squeeze=False, sharex=True, sharey=True)
    cmap, masked = _cmap(), _masked(patterns)
    room = max(4, int(cell * 6))
    image = None
    for L in range(n_layers):
        for H in range(n_heads):
            ax = axes[L, H]
            image = ax.imshow(masked[L, H], cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest")
            ax.tick_params(length=0, labelsize="x-small")
            if L == 0:
                ax.set_title(say("head", head=H), fontsize="small")
            if H == 0:
                ax.set_ylabel(say("layer", layer=first_layer + L))
                _tick_labels(ax, tokens, "y", room=room)
            if L == n_layers - 1:
                _tick_labels(ax, tokens, "x", rotate=True, room=room)
    fig.colorbar(image, ax=axes, shrink=0.8, label=say("weight"))
    fig.suptitle(title or say("grid_title"))
    return save(fig, path)


def head_heatmap(pattern, tokens, path, layer: int, head: int, lang: str | None = None, annotate: bool | None = None):
    """One head's pattern (T, T), token labels on both axes; numbers in the cells when T <= 16."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    say = translator(lang, "figures.attention")
    check_path(path)
    pattern = _check(pattern, tokens, 2, "pattern")
    T = pattern.shape[0]
    tokens = [str(t) for t in tokens]
    annotate = T <= 16 if annotate is None else annotate
    side = min(11.0, max(4.5, 0.45 * T + 2.0))
    fig = new_figure((side + 1.2, side))
    ax = fig.subplots()
    masked = _masked(pattern)
    image = ax.imshow(masked, cmap=_cmap(), vmin=0.0, vmax=1.0, interpolation="nearest")
    _tick_labels(ax, tokens, "x", rotate=max(len(t) for t in tokens) > 2, width=10, room=40)
    _tick_labels(ax, tokens, "y", width=10, room=40)
    ax.tick_params(length=0)
    ax.set_xlabel(say("key"))
    ax.set_ylabel(say("query"))
    if annotate:
        size = "small" if T <= 10 else "x-small"
        for q in range(T):
            for k in range(T):
                if masked.mask is not np.ma.nomask and masked.mask[q, k]:
                    continue
                w = pattern[q, k]
                ax.text(
                    k, q, f"{w:.2f}", ha="center", va="center", fontsize=size, color="white" if w > 0.6 else "black"
                )
    fig.colorbar(image, ax=ax, shrink=0.8, label=say("row_sum"))
    ax.set_title(say("head_title", layer=layer, head=head))
    return save(fig, path)
