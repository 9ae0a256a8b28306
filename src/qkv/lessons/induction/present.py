"""Lesson "induction", said and drawn: the induction score of every head and the in-context gap over
training, one layer against two, and the two-layer model with each head switched off (numbers from
qkv.lessons.induction.measure)."""

from __future__ import annotations

from pathlib import Path

from qkv.lessons.common.text import then
from qkv.lessons.induction.result import Ablation, Probe, Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator
from qkv.presentation.text import width

EVERY = 5  # the text's table shows every 5th measurement (the figure shows them all)
FORMED = 3  # an induction head formed: the best score ends at least this many times the even spread's
REMOVED = 0.3  # switching a head off "removes" the gain when less than this share of the gap is left
# How far the numbers move from seed to seed on tiny Shakespeare (python benchmarks/induction_spread.py,
# seeds 0-4, one thread as the lesson trains, on a 2-core AMD EPYC with AVX-512). Seed 0 with other kernels
# (ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=AVX2 ONEDNN_MAX_CPU_ISA=AVX2; or ATEN_CPU_CAPABILITY=default
# MKL_CBWR=COMPATIBLE, plain SSE sums) moved the numbers by about 1e-6 and changed no printed digit: the
# training does not blow such rounding up. Seed 0 on Python's documentation, what an installed package trains
# on, gave 0.144, L1 H1, 10% left. The text states these ranges.
SPREAD = {"seeds": (0, 4), "score": (0.14, 0.18), "gap": (-3.43, -2.65), "kept": (0.0, 0.38)}


def title(lang: str) -> str:
    return translator(lang, "lessons.induction")("title")


def head_name(layer: int, head: int, lang: str) -> str:
    return translator(lang, "lessons.induction")("head", layer=layer, head=head)


def roles(lang: str) -> dict[str, str]:
    """Each role of an ablated head, by the names of qkv.lessons.induction.measure.ROLES."""
    say = translator(lang, "lessons.induction")
    return {"induction": say("role_induction"), "previous": say("role_previous"), "other": say("role_other")}


def sources(lang: str, short: bool = False) -> dict[str, str]:
    """Each text it may train on, by the names of qkv.lessons.induction.measure.SOURCES (short: as the
    headline names it)."""
    say = translator(lang, "lessons.induction")
    if short:
        return {
            "shakespeare": say("short_shakespeare"),
            "python_docs": say("short_python_docs"),
            "corpus": say("short_corpus"),
        }
    return {
        "shakespeare": say("source_shakespeare"),
        "python_docs": say("source_python_docs"),
        "corpus": say("source_corpus"),
    }


def models(lang: str) -> dict[str, str]:
    """Each model's name, by the names of qkv.lessons.induction.measure.VARIANTS."""
    say = translator(lang, "lessons.induction")
    return {"one": say("model_one"), "two": say("model_two")}


def _last(n: Result, variant: str) -> Probe:
    return n.models[variant].probes[-1]


def _pad(text: str, columns: int) -> str:
    return " " * max(0, columns - width(text)) + text


def _curve_table(n: Result, lang: str) -> str:
    """Every EVERY-th measurement: step, the best induction score and the gap of each model."""
    say = translator(lang, "lessons.induction")
    two, one = n.models["two"], n.models["one"]
    head = [say("col_step"), say("col_best_two"), say("col_gap_two"), say("col_best_one"), say("col_gap_one")]
    cols = [max(10, width(h) + 2) for h in head]
    lines = ["".join(_pad(h, c) for h, c in zip(head, cols))]
    for k in range(0, len(n.probe_steps), EVERY):
        row = [
            str(n.probe_steps[k]),
            f"{two.best[k]:.3f}",
            f"{two.probes[k].gap:+.2f}",
            f"{one.best[k]:.3f}",
            f"{one.probes[k].gap:+.2f}",
        ]
        lines.append("".join(_pad(x, c) for x, c in zip(row, cols)))
    return "\n".join(lines)


def _ablation_table(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.induction")
    role = roles(lang)
    head = [say("col_off"), say("col_first"), say("col_second"), say("col_gap"), say("col_kept")]
    rows = [[say("none"), *_losses(_last(n, "two")), _pct(1.0)]]
    rows += [
        [
            say("row_head", which=head_name(a.layer, a.head, lang), role=role[a.role]),
            *_losses(a),
            _pct(a.kept),
        ]
        for a in n.ablation
    ]
    first = max(width(r[0]) for r in [head, *rows]) + 2
    cols = [first] + [max(10, width(h) + 2) for h in head[1:]]
    line = lambda r: r[0] + " " * (first - width(r[0])) + "".join(_pad(x, c) for x, c in zip(r[1:], cols[1:]))
    return "\n".join(line(r) for r in [head, *rows])


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _losses(d: Probe | Ablation) -> list[str]:
    return [f"{d.first:.2f}", f"{d.second:.2f}", f"{d.gap:+.2f}"]


def _fields(n: Result, lang: str) -> dict:
    two, one = _last(n, "two"), _last(n, "one")
    ind, prev = n.induction_head, n.previous_head
    return {
        **n.to_numbers(),
        "source_text": sources(lang)[n.source],
        "source_short": sources(lang, short=True)[n.source],
        "ind_from": n.rise.from_,
        "ind_to": n.rise.to,
        "rise_start": n.rise.start,
        "rise_middle": n.rise.middle,
        "rise_end": n.rise.end,
        "gap_middle": n.gap_rise.middle,
        "first_two": two.first,
        "second_two": two.second,
        "gap_two": two.gap,
        "first_one": one.first,
        "second_one": one.second,
        "gap_one": one.gap,
        "best_one": max(n.models["one"].best),
        "ind_name": head_name(ind.layer, ind.head, lang),
        "ind_layer": ind.layer,
        "ind_head": ind.head,
        "ind_score": ind.score,
        "prev_name": head_name(prev.layer, prev.head, lang),
        "prev_score": prev.score,
        "kept_pct": _pct(n.kept),
        "kept_previous_pct": _pct(n.kept_previous),
        "kept_other_pct": _pct(n.kept_other),
        "formed_times": n.rise.to / n.baseline,
    }


def _verdicts(n: Result, f: dict, lang: str) -> str:
    """What the numbers say, each sentence chosen by the numbers it reports."""
    say = translator(lang, "lessons.induction")
    out = [say("formed" if f["ind_to"] >= FORMED * n.baseline else "not_formed", **f)]
    if f["ind_to"] >= FORMED * n.baseline:  # do the score and the gap move at the same time?
        together = abs(f["gap_middle"] - f["rise_middle"]) <= 2 * n.probe_every
        out.append(say("together" if together else "apart"))
    out.append(say("one_flat" if f["best_one"] < FORMED * n.baseline else "one_formed", **f))
    out.append(say("ablate_removes" if n.kept < REMOVED else "ablate_reduces", **f))
    out.append(say("previous_needed" if n.kept_previous < 0.5 else "previous_not_needed", **f))
    out.append(say("others_keep", **f))
    return then(out, lang)


def _spread(n: Result, lang: str) -> str:
    """How far another run's numbers may lie from these (SPREAD, measured on tiny Shakespeare only)."""
    say = translator(lang, "lessons.induction")
    if n.source != "shakespeare":
        return say("spread_other", seed=n.seed, source_short=sources(lang, short=True)[n.source])
    (score_lo, score_hi), (gap_lo, gap_hi), (kept_lo, kept_hi) = (SPREAD[k] for k in ("score", "gap", "kept"))
    return say(
        "spread",
        seed=n.seed,
        seed_lo=SPREAD["seeds"][0],
        seed_hi=SPREAD["seeds"][1],
        score_lo=score_lo,
        score_hi=score_hi,
        gap_lo=gap_lo,
        gap_hi=gap_hi,
        kept_lo=_pct(kept_lo),
        kept_hi=_pct(kept_hi),
    )


def text(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.induction")
    f = _fields(n, lang)
    surprised = min(f["first_two"], f["first_one"]) > n.uniform_loss  # worse than an even guess, both
    return say(
        "text",
        **f,
        surprise=say("surprised", **f) if surprised else "",
        curve_table=_curve_table(n, lang),
        ablation_table=_ablation_table(n, lang),
        verdicts=_verdicts(n, f, lang),
        spread=_spread(n, lang),
    )


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.induction")("headline", **_fields(n, lang))


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    return [_training_figure(n, out, lang), _ablation_figure(n, out, lang)]


def _training_figure(n: Result, out: Path, lang: str) -> Path:
    """Top: every head's induction score over training (two layers solid, one layer dashed); bottom: the
    in-context gap of both models. The rise of the two-layer model's best score (10% to 90%) is shaded."""
    say = translator(lang, "lessons.induction")
    fig = new_figure((8, 7))
    top, bottom = fig.subplots(2, 1, sharex=True)
    steps = n.probe_steps
    for ax in (top, bottom):
        ax.axvspan(n.rise.start, n.rise.end, color="0.9", zorder=0)
        ax.grid(alpha=0.3)
    colour, name = 0, models(lang)
    for variant, style in (("two", "-"), ("one", "--")):
        model = n.models[variant]
        for layer in range(model.n_layers):
            for head in range(n.n_heads):
                scores = [p.induction[layer][head] for p in model.probes]
                label = say("curve_head", model=name[variant], which=head_name(layer, head, lang))
                top.plot(steps, scores, style, color=f"C{colour}", label=label)
                colour += 1
        gaps = [p.gap for p in model.probes]
        bottom.plot(steps, gaps, style, color="k" if variant == "two" else "0.5", lw=2, label=name[variant])
    top.axhline(n.baseline, color="k", ls=":", lw=1, label=say("even_spread"))
    top.set_ylabel(say("y_score"))
    top.set_title(say("fig_title", **n.to_numbers()))
    top.legend(fontsize="small", ncol=2)
    bottom.axhline(0, color="k", lw=0.8)
    bottom.set_ylabel(say("y_gap"))
    bottom.set_xlabel(say("x_step"))
    bottom.legend(fontsize="small")
    return save(fig, out / "induction_training.png")


def _ablation_figure(n: Result, out: Path, lang: str) -> Path:
    """The two-layer model's first- and second-half loss, unablated and with each head switched off."""
    say = translator(lang, "lessons.induction")
    role = roles(lang)
    rows = [(say("none"), _last(n, "two"))]
    rows += [(f"{head_name(a.layer, a.head, lang)}\n{role[a.role]}", a) for a in n.ablation]
    fig = new_figure((8, 4.5))
    ax = fig.subplots()
    w = 0.38
    xs = range(len(rows))
    ax.bar([x - w / 2 for x in xs], [r.first for _, r in rows], w, label=say("first_half"), color="C7")
    ax.bar([x + w / 2 for x in xs], [r.second for _, r in rows], w, label=say("second_half"), color="C0")
    ax.axhline(n.uniform_loss, color="k", ls=":", lw=1, label=say("uniform", **n.to_numbers()))
    ax.set_xticks(list(xs), [label for label, _ in rows], fontsize="small")
    ax.set_ylabel(say("y_loss"))
    ax.set_title(say("ablation_title"))
    ax.grid(alpha=0.3, axis="y")
    ax.set_ylim(0, 1.2 * max(max(r.first, r.second) for _, r in rows))  # room for the legend
    ax.legend(fontsize="small", loc="upper center", ncol=3)
    return save(fig, out / "induction_ablation.png")
