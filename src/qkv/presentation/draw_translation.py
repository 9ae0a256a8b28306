"""The figures of a translation model (an encoder-decoder) that `qkv figure` draws: its cross-attention
as an alignment (kind "alignment"), and one target step's z among the source values (kind "hull").

The source is translated greedily and the teacher-forced trace read as qkv.analysis.cross_attention does; the
rows are the words each decoder step writes (</s> last), the columns the source words. When the
source is one of the corpus's sentences and the translation is its counterpart, the gold alignment
is drawn over the cells; otherwise a line under the picture says why it is not.
"""

from __future__ import annotations

from pathlib import Path

from qkv.analysis import cross_attention as cross
from qkv.core.see.indices import check_index, check_layer_head
from qkv.presentation.i18n import t

# why cross.gold_alignment found no gold links -> the note under the figure
NO_GOLD = {"no_pair": "figures.alignment.no_pair", "differs": "figures.alignment.differs"}


def translation_figure(
    kind: str,
    model,
    tokenizer,
    out,
    lang: str,
    text: str | None,
    layer: int | None,
    head: int | None,
    token: int | None,
) -> Path:
    """Draw `kind` ("alignment" or "hull") for the translation of `text`; returns the path."""
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
    source = [tokenizer.display(i) for i in r.src]
    written = [tokenizer.display(i) for i in r.written]
    pattern = tr[cross.cross_name(L, "hook_pattern")][0].float().cpu().numpy()  # (n_heads, T_target, T_source)
    if kind == "alignment":
        from qkv.presentation.plot_alignment import alignment_figure

        cells, why = cross.gold_alignment(
            [tokenizer.tokens[i] for i in r.src], [tokenizer.tokens[i] for i in r.written]
        )
        note = None if cells else t(NO_GOLD[why], lang)
        return Path(
            alignment_figure(
                pattern if H is None else pattern[H], source, written, out, L, H, gold=cells, lang=lang, note=note
            )
        )
    from qkv.presentation.plot_hull import hull_figure

    H = 0 if H is None else H
    q = check_index(
        cross.default_step(tokenizer, r.written) if token is None else token,
        len(written),
        "token",
        f"the translation has {len(written)} target steps",
    )
    values = tr[cross.cross_name(L, "hook_v")][0, :, H].float().cpu().numpy()  # (T_source, d_head): the source values
    z = tr[cross.cross_name(L, "hook_z")][0, q, H].float().cpu().numpy()  # (d_head,)
    title = t("figures.alignment.hull_title", lang, layer=L, head=H, pos=q, tok=written[q])
    return hull_figure(values, z, pattern[H, q], out, labels=source, title=title, lang=lang).path
