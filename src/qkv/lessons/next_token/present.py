"""Lesson "next-token", said and drawn: the most likely next tokens, their entropy, and what a
temperature does to them (numbers from qkv.lessons.next_token.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.common.text import commas, then
from qkv.lessons.next_token.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator


def _pairs(pairs, digits: int) -> list[str]:
    return [f"{t} {p:.{digits}f}" for t, p in pairs]


def title(lang: str) -> str:
    return translator(lang, "lessons.next_token")("title")


def _same_greedy(n: Result) -> bool:
    return all(at.greedy == n.greedy for at in n.temperatures)


def headline(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.next_token")
    temps = n.temperatures
    greedy_at = (
        say("greedy_same", greedy=n.greedy)
        if _same_greedy(n)
        else say("greedy_differs", picks="/".join(at.greedy for at in temps))
    )
    entropies = commas([say("entropy_at", T=at.T, H=at.entropy_bits) for at in temps], lang)
    return say(
        "headline",
        prompt=n.text.strip(),
        top=commas(_pairs(n.top[:3], 3), lang),
        entropies=entropies,
        greedy_at=greedy_at,
    )


def text(n: Result, lang: str) -> str:
    """The verdicts: did the entropy rise with T, and did the greedy pick stay put (it must)?"""
    say = translator(lang, "lessons.next_token")
    temps = n.temperatures
    rows = "\n".join(f"  {r + 1}  {t}  {p:.4f}" for r, (t, p) in enumerate(n.top))
    lines = "\n".join(say("temperature", T=at.T, top=", ".join(_pairs(at.top, 3)), H=at.entropy_bits) for at in temps)
    rising = all(a.entropy_bits < b.entropy_bits for a, b in zip(temps, temps[1:]))
    verdict = then(
        [
            say("rising" if rising else "not_rising"),
            say("same", greedy=n.greedy) if _same_greedy(n) else say("changed"),
        ],
        lang,
    )
    return say(
        "text",
        **n.to_numbers(),
        prompt=n.text.strip(),
        last=n.tokens[-1],
        k=len(n.top),
        rows=rows,
        temps=lines,
        verdict=verdict,
    )


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    """The probabilities of the same tokens (the top at T = 1) at every temperature, as grouped bars."""
    say = translator(lang, "lessons.next_token")
    temps = n.temperatures
    fig = new_figure((8, 4.8))
    ax = fig.subplots()
    x = np.arange(len(n.shown))
    width = 0.8 / len(temps)
    for k, at in enumerate(temps):
        probs = at.shown
        bars = ax.bar(x + (k - (len(temps) - 1) / 2) * width, probs, width, label=say("bar", T=at.T, H=at.entropy_bits))
        for b, p in zip(bars, probs):
            ax.text(
                b.get_x() + b.get_width() / 2, b.get_height(), f"{p:.2f}", ha="center", va="bottom", fontsize="x-small"
            )
    ax.set_xticks(x, n.shown)
    ax.set_ylim(0, 1.08)
    ax.set_ylabel(say("y"))
    ax.set_title(say("fig_title", k=len(n.shown)))
    ax.legend(fontsize="small")
    return [save(fig, out / "next_token_temperature.png")]
