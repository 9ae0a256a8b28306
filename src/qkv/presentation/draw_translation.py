"""The figures of a translation model (an encoder-decoder) that `qkv figure` draws: its cross-attention
as an alignment (kind "alignment"), and one target step's z among the source values (kind "hull").

It draws what it is given: the greedy translation and its teacher-forced trace, read as
qkv.analysis.cross_attention does (qkv.apps.figure runs them). The rows are the words each decoder
step writes (</s> last), the columns the source words. When the source is one of the corpus's
sentences and the translation is its counterpart, the gold alignment is drawn over the cells;
otherwise a line under the picture says why it is not.
"""

from __future__ import annotations

from pathlib import Path

from qkv.analysis import cross_attention as cross
from qkv.core.see.indices import check_index
from qkv.presentation.i18n import t

# why cross.gold_alignment found no gold links -> the note under the figure
NO_GOLD = {"no_pair": "figures.alignment.no_pair", "differs": "figures.alignment.differs"}


def translation_figure(kind: str, tokenizer, r, tr, out, lang: str, L: int, H: int | None, token: int | None) -> Path:
    """Draw `kind` ("alignment" or "hull") of decoder layer L (head H, None: every head) from the read
    translation `r` (cross.read) and its trace `tr` (cross.trace, with layer L's cross-attention
    pattern, values and z); returns the path."""
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
