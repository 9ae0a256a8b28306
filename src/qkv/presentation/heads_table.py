"""The head detector as plain text (`qkv heads`): one table per score, layers down, heads across, and
under each the strongest head of that kind, or the line that no head stands out (numbers from
qkv.analysis.head_scores). The kinds are called by the catalogue's short_ names, the ones the page's
head labels show (routes_heads.head_labels)."""

from __future__ import annotations

from qkv.analysis.head_scores import KINDS
from qkv.presentation.i18n import translator
from qkv.presentation.text import width

# A head "stands out" as a kind when its score is at least this many times an even spread's. An untrained
# model's heads all sit at 1.0x; a head that does the job scores many times more (a perfect previous-token
# head on the detector's 49 tokens: ~14x). 1.5x, half again the even share, is the least we name: below it
# the "strongest" head is only a little uneven (on the bundled model the best duplicate head is 0.9x).
STANDS_OUT = 1.5


def _cells(rows: list[list[str]]) -> str:
    """Rows of cells padded to each column's widest cell by display width (a Chinese character takes two
    columns, text.width): the layer names left-aligned, the numbers right-aligned."""
    widths = [max(width(r[c]) for r in rows) for c in range(len(rows[0]))]

    def pad(cell: str, c: int) -> str:
        fill = " " * (widths[c] - width(cell))
        return cell + fill if c == 0 else fill + cell

    return "\n".join("  ".join(pad(cell, c) for c, cell in enumerate(r)).rstrip() for r in rows)


def table(scores, kind: str, lang: str) -> str:
    """One kind's table: its title (name, meaning, the even head's score), the numbers, the strongest head
    (or, when even the best is under STANDS_OUT times an even spread, that none stands out)."""
    say = translator(lang, "interpret")
    M = scores[kind]  # (n_layers, n_heads)
    base = scores.baselines[kind]
    name = say(f"short_{kind}")
    rows = [[say("corner")] + [say("col_head", head=h) for h in range(M.shape[1])]]
    rows += [[say("row_layer", layer=L)] + [f"{float(v):.3f}" for v in M[L]] for L in range(M.shape[0])]
    layer, head, best = scores.best(kind)
    ratio = best / base if base > 0 else float("inf")
    title = say("table_title", kind=name, means=say(f"means_{kind}"), baseline=base)
    key = "strongest" if ratio >= STANDS_OUT else "none_stands_out"
    strongest = say(key, kind=name, layer=layer, head=head, score=best, ratio=ratio)
    return f"{title}\n{_cells(rows)}\n{strongest}"


def render(scores, lang: str) -> str:
    """The whole report: what was measured, then a table per kind (previous, duplicate, induction, first)."""
    say = translator(lang, "interpret")
    B, T = scores.tokens.shape
    if scores.seed is None:
        top = say("header_given", n=B, T=T)
    else:
        top = say("header", n=B, T=T, half=(T - 1) // 2, seed=scores.seed)
    return "\n\n".join([top] + [table(scores, kind, lang) for kind in KINDS]) + "\n"
