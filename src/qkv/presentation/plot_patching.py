"""Activation patching as a heat map (qkv figure patching): layers down, positions (or heads) across.

Colour = the share of the way from the corrupted run to the clean one that patching that one piece
brings back, (patched - corrupted) / (clean - corrupted): 0 (white) changes nothing, 1 (blue) restores
the clean answer, below 0 (red) pushes further away -- blue toward the clean run, as on the page (and as
in its attribution panel, where blue raises the logit). When the two runs' metrics are equal there is no
way to share out, and the colour is patched - corrupted instead (blue: patching raises the metric,
red: lowers it). The caption repeats the table's caution when the runs barely differ (gap_small).
It reads the kind-"patching" document (qkv.analysis.patch.Patching.to_json).
"""

from __future__ import annotations

import numpy as np

from qkv.presentation.figures import caption, check_path, column_labels, new_figure, save, short
from qkv.presentation.hook_words import named
from qkv.presentation.i18n import lang_of, translator
from qkv.presentation.patching_table import across, grid, tokens

CMAP = "RdBu"  # matplotlib's RdBu runs red (low) to blue (high): positive, toward the clean run, is blue


def _labels(doc: dict, kind: str, say) -> list[str]:
    if kind == "whole":
        return [say("whole")]
    if kind == "head":
        return [say("head", head=h) for h in range(len(doc["values"][0]))]
    clean, corrupted = tokens(doc, "clean"), tokens(doc, "corrupted")
    return [
        f"{i} {short(a)}" if a == b else f"{i} {short(a)}/{short(b)}" for i, (a, b) in enumerate(zip(clean, corrupted))
    ]


def patching_heatmap(doc: dict, path, lang: str | None = None, annotate: bool | None = None):
    """Draw the document's values (n_layers, T or n_heads; n_layers for a whole layer) to `path` (.png or
    .svg); returns the path."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    say = translator(lang, "figures.patching")
    check_path(path)
    kind = across(doc)
    shares = doc["normalized"] is not None
    values = np.asarray(grid(doc, "normalized" if shares else "values"), dtype=float)  # (n_layers, width)
    if not shares:  # equal runs: no direction toward the clean one, so up (patched > corrupted) is blue
        values = values - doc["corrupted"]
    n_layers, width = values.shape
    annotate = n_layers * width <= 160 if annotate is None else annotate
    reach = float(np.nanmax(np.abs(values))) if values.size else 0.0
    reach = max(reach, 1.0) if shares else (reach or 1.0)  # a share's scale always shows 0..1
    labels = _labels(doc, kind, say)
    longest = max((len(s) for s in labels), default=1)
    fig = new_figure((min(16.0, 2.6 + 0.75 * width), min(12.0, 2.6 + 0.5 * n_layers + 0.08 * longest)))
    ax = fig.subplots()
    image = ax.imshow(values, cmap=CMAP, vmin=-reach, vmax=reach, aspect="auto", interpolation="nearest")
    column_labels(ax, range(width), labels, longest > 3 and kind == "pos", fontsize="small")
    ax.set_yticks(range(n_layers), [say("layer", layer=L) for L in range(n_layers)], fontsize="small")
    ax.tick_params(length=0)
    ax.set_xlabel(say({"pos": "positions", "head": "heads", "whole": "whole_label"}[kind]))
    if annotate:
        for L in range(n_layers):
            for i in range(width):
                v = values[L, i]
                colour = "white" if abs(v) > 0.6 * reach else "black"
                ax.text(
                    i,
                    L,
                    f"{v:.2f}".replace("-0.00", "0.00"),
                    ha="center",
                    va="center",
                    fontsize="x-small",
                    color=colour,
                )
    what = "share" if shares else "difference"
    bar = fig.colorbar(image, ax=ax, shrink=0.85)
    bar.set_label(f"{say(what)}\n{say(what + '_colours')}", fontsize="small", linespacing=1.6)
    ax.set_title(say("title", site=named(doc["site"], lang)))
    note = [say("runs", clean=f"{doc['clean']:.3f}", corrupted=f"{doc['corrupted']:.3f}")]
    if doc["answer"] is not None:
        note.insert(0, say("metric", answer=doc["answer"], wrong=doc["wrong"], pos=doc["position"]))
    if shares and doc.get("gap_small"):
        note.append(say("gap_small"))
    caption(fig, "  ".join(note))
    return save(fig, path)
