"""Positions, drawn: the sinusoidal table that is added to the embeddings, and RoPE's rotations.

Sinusoidal: PE[t, 2i] = sin(t·ω_i), PE[t, 2i+1] = cos(t·ω_i), ω_i = 10000^(-2i/d_model): the first
dimensions oscillate fast, the last ones barely move, so every position gets its own pattern.
RoPE: each pair (x_2i, x_2i+1) of q and k is turned by the angle t·θ_i; since rotations compose,
(R_s q)·(R_t k) = q·(R_(t−s) k): the score sees only the offset t − s.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from qkv.core.model.nn.position import RoPE, sinusoidal_table
from qkv.presentation.figures import check_path, new_figure, save
from qkv.presentation.i18n import lang_of, translator


def sinusoidal_figure(path, n_ctx: int = 64, d_model: int = 64, lang: str | None = None):
    """Heatmap of the table (positions × dimensions) and, beside it, a few dimensions as curves."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    say = translator(lang, "figures.position")
    check_path(path)
    if n_ctx < 2 or d_model < 2:
        raise ValueError(f"n_ctx and d_model must be at least 2; got n_ctx={n_ctx}, d_model={d_model}")
    table = sinusoidal_table(n_ctx, d_model).numpy()  # (n_ctx, d_model)
    fig = new_figure((11, 4.8))
    left, right = fig.subplots(1, 2, width_ratios=(1.2, 1))
    image = left.imshow(table, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    left.set_xlabel(say("dims"))
    left.set_ylabel(say("position"))
    left.set_title(say("table_title", n_ctx=n_ctx, d_model=d_model))
    fig.colorbar(image, ax=left, shrink=0.85)
    dims = sorted({0, 2 * (d_model // 16), 2 * (d_model // 8), 2 * (d_model // 4)} & set(range(0, d_model, 2)))
    t = np.arange(n_ctx)
    for d in dims:
        period = 2 * math.pi * 10000 ** (d / d_model)
        right.plot(t, table[:, d], marker=".", markersize=3, label=say("dim", d=d, period=period))
    right.set_xlabel(say("position"))
    right.set_ylabel("PE[t, d]")
    right.set_ylim(-1.15, 1.6)
    right.legend(fontsize="small", loc="upper right", ncols=2)
    right.set_title(say("curves_title"))
    return save(fig, path)


def _pair_angles(d_head: int, positions: list[int], base: float) -> np.ndarray:
    """The angle of each pair after RoPE at each position, measured on RoPE itself: (len(positions), d_head/2)."""
    rope = RoPE(max(positions) + 1, d_head, base)
    x = torch.zeros(1, 1, max(positions) + 1, d_head)
    x[..., 0::2] = 1.0  # every pair starts as (1, 0): angle 0
    rotated = rope(x)[0, 0, positions]  # (len(positions), d_head)
    return torch.atan2(rotated[:, 1::2], rotated[:, 0::2]).numpy()


def _slow_pair(d_head: int, positions: list[int], base: float) -> int:
    """The slowest pair that still turns at least 30° over the positions shown (so arrows separate)."""
    span = max(positions) - min(positions)
    for i in reversed(range(1, d_head // 2)):
        if span * base ** (-2 * i / d_head) >= math.radians(30):
            return i
    return min(1, d_head // 2 - 1)


def rope_figure(path, d_head: int = 8, positions=range(0, 8), lang: str | None = None, base: float = 10000.0):
    """One pair (x_2i, x_2i+1) of a query turned by t·θ_i at several positions t, for a fast and a slow pair."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    say = translator(lang, "figures.position")
    check_path(path)
    positions = sorted(set(int(t) for t in positions))
    if d_head < 2 or d_head % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions, so d_head must be even and at least 2; got {d_head}")
    if not positions or positions[0] < 0:
        raise ValueError("positions must be non-negative integers, at least one")
    angles = _pair_angles(d_head, positions, base)
    pairs = [0] + ([_slow_pair(d_head, positions, base)] if d_head >= 4 else [])
    fig = new_figure((5.2 * len(pairs), 6.2))
    axes = fig.subplots(1, len(pairs), squeeze=False)[0]
    import matplotlib

    colours = matplotlib.colormaps["viridis"](np.linspace(0, 0.9, len(positions)))
    circle = np.linspace(0, 2 * math.pi, 200)
    for ax, i in zip(axes, pairs):
        theta = base ** (-2 * i / d_head)
        ax.plot(np.cos(circle), np.sin(circle), color="0.8", lw=1)
        ax.axhline(0, color="0.9", lw=0.8)
        ax.axvline(0, color="0.9", lw=0.8)
        for n, (t, colour) in enumerate(zip(positions, colours)):
            a = angles[n, i]
            ax.annotate(
                "",
                xy=(math.cos(a), math.sin(a)),
                xytext=(0, 0),
                arrowprops=dict(arrowstyle="-|>", color=colour, lw=1.8),
            )
            r = 1.13 + 0.09 * (n % 2)  # stagger the labels of neighbouring arrows
            ax.text(
                r * math.cos(a), r * math.sin(a), f"t={t}", color=colour, ha="center", va="center", fontsize="small"
            )
        ax.set_aspect("equal")
        ax.set_xlim(-1.45, 1.45)
        ax.set_ylim(-1.45, 1.45)
        ax.set_xlabel(f"$x_{{{2 * i}}}$")
        ax.set_ylabel(f"$x_{{{2 * i + 1}}}$")
        ax.set_title(say("pair", i=i, speed=say("fast" if i == 0 else "slow"), theta=theta), fontsize="medium")
    s, t, shift = 1, 3, 4
    dots = _rope_dots(d_head, base, [(s, t), (s + shift, t + shift)])
    note = say("offset", s=s, t=t, a=dots[0], s2=s + shift, t2=t + shift, b=dots[1])
    fig.suptitle(say("rope_title", d_head=d_head))
    fig.text(0.5, 0.01, note, ha="center", va="bottom")
    fig.get_layout_engine().set(rect=(0, 0.08, 1, 0.92))
    return save(fig, path)


def _rope_dots(d_head: int, base: float, pairs_of_positions) -> list[float]:
    """(R_s q)·(R_t k) for fixed random q, k at each (s, t), computed with RoPE."""
    n = max(max(p) for p in pairs_of_positions) + 1
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(d_head, generator=g), torch.randn(d_head, generator=g)
    rope = RoPE(n, d_head, base)
    rq = rope(q.expand(1, 1, n, d_head))[0, 0]  # (n, d_head): q placed at every position
    rk = rope(k.expand(1, 1, n, d_head))[0, 0]
    return [float(rq[s] @ rk[t]) for s, t in pairs_of_positions]
