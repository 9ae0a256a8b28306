"""The figures `qkv figure` draws from a GPT's trace: every head of the chosen layers ("attention"),
one head's pattern ("head"), and one query's z among the values it read ("hull").

It draws what it is given: the trace of a text and the labels of its tokens (qkv.apps.figure loads
the model and runs it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.core.see.indices import check_token
from qkv.presentation.i18n import t


def trace_figure(kind, cfg, trace, labels, out, lang, layer: int, head: int, token, every_layer: bool) -> Path:
    """Draw `kind` ("attention", "head" or "hull") from `trace` (one sequence, labels one per token) to `out`.

    layer, head: checked (check_layer_head); every_layer: attention draws every layer, not only `layer`;
    token: hull's query (None: the last)."""
    if kind == "attention":
        from qkv.presentation.plot_attention import attention_grid

        layers = range(cfg.n_layers) if every_layer else [layer]
        patterns = np.stack(
            [trace["pattern", L][0].detach().float().numpy() for L in layers]
        )  # (layers, n_heads, T, T)
        title = None if every_layer else t("figures.attention.layer_title", lang, layer=layer)
        return attention_grid(patterns, labels, out, lang=lang, title=title, first_layer=layers[0])
    if kind == "head":
        from qkv.presentation.plot_attention import head_heatmap

        pattern = trace["pattern", layer][0, head].detach().float().numpy()  # (T, T)
        return head_heatmap(pattern, labels, out, layer, head, lang=lang)
    from qkv.presentation.plot_hull import hull_figure

    q = check_token(len(labels) - 1 if token is None else token, len(labels))
    values = trace["v", layer][0, : q + 1, head].detach().float().numpy()  # (q+1, d_head)
    z = trace["z", layer][0, q, head].detach().float().numpy()  # (d_head,)
    weights = trace["pattern", layer][0, head, q, : q + 1].detach().float().numpy()  # (q+1,)
    title = t("figures.hull.trace_title", lang, layer=layer, head=head, pos=q, tok=labels[q])
    return hull_figure(values, z, weights, out, labels=labels[: q + 1], title=title, lang=lang).path
