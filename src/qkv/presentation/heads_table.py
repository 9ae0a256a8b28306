"""The head detector as plain text (`qkv heads`): one table per score, layers down, heads across, and
under each the strongest head of that kind (numbers from qkv.analysis.head_scores)."""

from __future__ import annotations

from qkv.analysis.head_scores import KINDS

from .i18n import translator


def _cells(rows: list[list[str]]) -> str:
    """Rows of cells, each column right-aligned to its widest cell."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(r, widths)).rstrip() for r in rows)


def table(scores, kind: str, lang: str) -> str:
    """One kind's table: its title (name, meaning, the even head's score), the numbers, the strongest head."""
    say = translator(lang, "interpret")
    M = scores[kind]  # (n_layers, n_heads)
    base = scores.baselines[kind]
    rows = [[say("corner")] + [say("col_head", head=h) for h in range(M.shape[1])]]
    rows += [[say("row_layer", layer=L)] + [f"{float(v):.3f}" for v in M[L]] for L in range(M.shape[0])]
    layer, head, best = scores.best(kind)
    ratio = best / base if base > 0 else float("inf")
    title = say("table_title", title=say(f"name_{kind}"), means=say(f"means_{kind}"), baseline=base)
    strongest = say("strongest", layer=layer, head=head, score=best, ratio=ratio)
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
