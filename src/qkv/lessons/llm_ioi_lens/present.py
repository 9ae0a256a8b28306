"""Lesson "llm-ioi-lens", said and drawn: activation patching of the indirect-object prompt and the logit
lens at " Paris" in a real LLM (numbers from qkv.lessons.llm_ioi_lens.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.common.text import commas, pad, then
from qkv.lessons.llm_ioi_lens.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator
from qkv.presentation.plot_patching import CMAP


def title(lang: str) -> str:
    return translator(lang, "lessons.llm_ioi_lens")("title")


def head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


def row_name(row: int, n_layers: int, lang: str) -> str:
    """A row of the lens: the stream entering block `row`, or the model's output after the last."""
    say = translator(lang, "lessons.llm_ioi_lens")
    return say("row_output") if row == n_layers else say("row_block", layer=row)


def _resid_table(n: Result) -> str:
    """share[L, i] of the residual stream, a row per layer, a column per position (headed by its token)."""
    share = np.array(n.resid.share)
    lines = ["      " + "".join(pad(t.strip()[:6] or "␣", 7, True) for t in n.tokens)]
    for L, row in enumerate(share):
        lines.append(f"  L{L:<3}" + "".join(f"{x:>7.2f}" for x in row))
    return "\n".join(lines)


def _lens_table(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.llm_ioi_lens")
    lens = n.lens
    head = "  " + pad("", 12) + pad(say("col_p", answer=lens.answer.strip()), 14, True) + pad(say("col_rank"), 8, True)
    lines = [head + "   " + say("col_top")]
    for r, (p, rank, top, q) in enumerate(zip(lens.p, lens.rank, lens.top, lens.top_p)):
        lines.append(f"  {pad(row_name(r, n.n_layers, lang), 12)}{p:>14.2e}{rank + 1:>8}   {top!r} {q:.2f}")
    return "\n".join(lines)


def crossover(n: Result) -> int:
    """The first layer from which the last position restores more than any other position (-1: never)."""
    share = np.array(n.resid.share)  # (n_layers, T)
    last = share[:, -1] > share[:, :-1].max(axis=1)
    return next((L for L in range(len(last)) if last[L:].all()), -1)


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.llm_ioi_lens")
    share = np.array(n.resid.share)
    first = int(share[0].argmax())
    lens = n.lens
    return {
        "model": n.model_name or say("unnamed"),
        "n_layers": n.n_layers,
        "n_heads": n.n_heads,
        "n_total": n.n_layers * n.n_heads,
        "clean": n.clean_text,
        "corrupted": n.corrupted_text,
        "answer": n.answer,
        "wrong": n.wrong,
        "T": len(n.tokens),
        "p_answer": n.p_answer,
        "p_wrong": n.p_wrong,
        "clean_top": n.clean_top,
        "m_clean": n.resid.clean,
        "m_corrupted": n.resid.corrupted,
        "resid_table": _resid_table(n),
        "first_token": n.tokens[first],
        "first_pos": first,
        "first_share": share[0, first],
        "last_token": n.tokens[-1],
        "last_pos": len(n.tokens) - 1,
        "last_share": share[-1, -1],
        "cross": crossover(n),
        "best_layer": n.resid.best_layer,
        "best_token": n.tokens[n.resid.best_index],
        "best_share": n.resid.best_share,
        "top_heads": commas([f"{head_name(int(L), int(h))} ({s:.2f})" for L, h, s in n.top_heads], lang),
        "head": head_name(int(n.top_heads[0][0]), int(n.top_heads[0][1])),
        "head_share": n.top_heads[0][2],
        "lens_text": lens.text,
        "lens_answer": lens.answer,
        "lens_table": _lens_table(n, lang),
        "final_top": lens.final_top,
        "final_p": lens.final_p,
        "top1_row": row_name(lens.first_top1, n.n_layers, lang) if lens.first_top1 >= 0 else "",
        "before_p": lens.p[-2] if len(lens.p) > 1 else 0.0,
        "before_rank": lens.rank[-2] + 1 if len(lens.rank) > 1 else 0,
        "mid": len(lens.rank) // 2,
        "mid_rank": lens.rank[len(lens.rank) // 2] + 1,
        "head_on_answer": n.head_on_answer,
        "head_on_wrong": n.head_on_wrong,
    }


def _verdicts(n: Result, f: dict, lang: str) -> tuple[str, str, str]:
    say = translator(lang, "lessons.llm_ioi_lens")
    resid = [say("resid_small" if n.resid.gap_small else "resid", **f)]
    resid.append(say("moves", **f) if f["cross"] >= 0 else say("no_move", **f))
    lens = n.lens
    if lens.first_top1 == n.n_layers:
        seen = say("lens_output", **f)
    elif lens.first_top1 >= 0:
        seen = say("lens_early", **f)
    else:
        seen = say("lens_never", **f)
    heads = say("heads_mover" if n.head_on_answer > n.head_on_wrong else "heads_repeated", **f)
    return then(resid, lang), heads, seen


def text(n: Result, lang: str) -> str:
    f = _fields(n, lang)
    resid, heads, lens = _verdicts(n, f, lang)
    return translator(lang, "lessons.llm_ioi_lens")("text", **f, verdict_resid=resid, verdict_heads=heads,
                                                    verdict_lens=lens)  # fmt: skip


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.llm_ioi_lens")("headline", **_fields(n, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    """Left: the residual stream's shares (layers × positions); middle: the heads' (layers × heads), blue
    toward the clean run as in qkv figure patching; right: the lens's probability of the answer, row by row."""
    say = translator(lang, "lessons.llm_ioi_lens")
    fig = new_figure((15, 5.2))
    left, middle, right = fig.subplots(1, 3)
    for ax, share, x_labels in ((left, n.resid.share, n.tokens), (middle, n.z.share, None)):
        image = ax.imshow(np.array(share), aspect="auto", cmap=CMAP, vmin=-1, vmax=1, origin="lower")
        if x_labels is not None:
            ax.set_xticks(range(len(x_labels)))
            ax.set_xticklabels([t.strip() or "␣" for t in x_labels], rotation=90, fontsize="small")
        ax.set_ylabel(say("fig_layer"))
    fig.colorbar(image, ax=middle)
    middle.set_xlabel(say("fig_head"))
    left.set_title(say("fig_resid_title"), fontsize="medium")
    middle.set_title(say("fig_z_title"), fontsize="medium")
    rows, p = np.arange(len(n.lens.p)), np.asarray(n.lens.p)
    drawn = p > 0  # a probability that underflows float32's softmax (0) has no place on a log axis
    right.semilogy(rows[drawn], p[drawn], "o-", ms=3)
    right.set_xlabel(say("fig_row"))
    right.set_ylabel(say("fig_p", answer=n.lens.answer.strip()))
    right.set_title(say("fig_lens_title", text=n.lens.text), fontsize="medium")
    right.grid(alpha=0.3)
    fig.suptitle(say("fig_title", model=n.model_name or say("unnamed")))
    return [save(fig, out / "llm_ioi_lens.png")]
