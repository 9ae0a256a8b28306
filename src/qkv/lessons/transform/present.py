"""Lesson "transform", said and drawn: the singular values of W_Q, W_K, W_V, W_O (trained vs random),
and a cloud of word vectors before and after x W_Q (numbers from qkv.lessons.transform.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.common.text import commas, then
from qkv.lessons.transform.result import Result
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator

MATRICES = ("W_Q", "W_K", "W_V", "W_O")
COLORS = {"fruit": "#d62728", "company": "#1f77b4", "energy": "#2ca02c", "ambiguous": "#333333"}


def title(lang: str) -> str:
    return translator(lang, "lessons.transform")("title")


def group_names(lang: str) -> dict[str, str]:
    """Each group of words the cloud colours (the lesson's n.groups, and "ambiguous"), by name."""
    say = translator(lang, "lessons.transform")
    return {
        "fruit": say("group_fruit"),
        "company": say("group_company"),
        "energy": say("group_energy"),
        "ambiguous": say("group_ambiguous"),
    }


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.transform")
    q = n.detail["W_Q"]
    sv = q["singular_values"]
    words = {g: commas([w for w, lab in zip(n.words, n.labels) if lab == g], lang) for g in (*n.groups, "ambiguous")}
    ratios = {p: commas([f"{r:.2f}" for r in n.after_ratio[p]], lang) for p in ("q", "k", "v")}
    shares = {p: commas([f"{s:.0%}" for s in n.kept_share[p]], lang) for p in ("q", "k", "v")}
    return {
        **n.to_numbers(),
        "q_s1": sv[0],
        "q_sr": sv[-1],
        "r": len(sv),
        "q_cond": q["condition"],
        "q_erank": q["effective_rank"],
        "q_top4": q["energy_top"]["4"],
        "q_cos": q["rotation_cos"],
        "rq_cond": n.detail_random["W_Q"]["condition"],
        "fruit_words": words.get("fruit", ""),
        "company_words": words.get("company", ""),
        "energy_words": words.get("energy", ""),
        "ambiguous_words": words["ambiguous"],
        "ratios_q": ratios["q"],
        "ratios_k": ratios["k"],
        "ratios_v": ratios["v"],
        "shares_q": shares["q"],
        "shares_k": shares["k"],
        "shares_v": shares["v"],
        "hq": n.heads_separating_more["q"],
        "hk": n.heads_separating_more["k"],
        "hv": n.heads_separating_more["v"],
        "t_min": min(s.trained.condition_min for s in n.summary.values()),
        "t_max": max(s.trained.condition_max for s in n.summary.values()),
        "r_min": min(s.random.condition_min for s in n.summary.values()),
        "r_max": max(s.random.condition_max for s in n.summary.values()),
        "input_how": say("input_pre" if n.pre_norm else "input_plain"),
        "n_group_words": sum(lab != "ambiguous" for lab in n.labels),
        "verdict": say("holds" if n.uneven_claim_holds else "fails"),
    }


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.transform")("headline", **_fields(n, lang))


def _table(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.transform")
    rows = []
    for name in MATRICES:
        t, r = n.summary[name].trained, n.summary[name].random
        rows.append(
            say(
                "row",
                matrix=name,
                t_condition_mean=t.condition_mean,
                t_condition_min=t.condition_min,
                t_condition_max=t.condition_max,
                t_effective_rank_mean=t.effective_rank_mean,
                t_top4_mean=t.top4_mean,
                t_rotation_cos_mean=t.rotation_cos_mean,
                r_condition_mean=r.condition_mean,
                r_condition_min=r.condition_min,
                r_condition_max=r.condition_max,
                r_effective_rank_mean=r.effective_rank_mean,
                r_top4_mean=r.top4_mean,
                r_rotation_cos_mean=r.rotation_cos_mean,
            )
        )
    return "\n".join(rows)


def _nearest(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.transform")
    group = group_names(lang)
    parts = [
        say(
            "nearest_word",
            word=w,
            before=group[n.nearest_before[w]],
            after=group[n.nearest_q[w]],
        )
        for w in n.nearest_before
    ]
    return say("nearest", head=n.head, words=commas(parts, lang)) if parts else ""


def text(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.transform")
    f = _fields(n, lang)
    cloud = [say("cloud_after", **f)]
    half = n.n_heads / 2
    cloud.append(say("q_sorts" if f["hq"] > half else "q_not_sorts", **f))
    cloud.append(say("kv_counts", **f))
    if f["hk"] > half and f["hv"] > half:
        cloud.append(say("kv_sort"))
    near = _nearest(n, lang)
    stretch = then([say("stretch_verdict", **f)] + ([say("stretch_means", **f)] if n.uneven_claim_holds else []), lang)
    parts = [
        say("intro", **f),
        say("stretch", **f) + "\n" + _table(n, lang) + "\n" + stretch,
        say("cloud_before", **f),
        then(cloud, lang),
        say("kept", **f) + (("\n\n" + near) if near else ""),
        say("twin", **f),
        say("caveat", **f),
    ]
    return "\n\n".join(parts)


def _spectra_figure(n: Result, out: Path, lang: str) -> Path:
    say = translator(lang, "lessons.transform")
    fig = new_figure((11, 3.4))
    axes = fig.subplots(1, len(MATRICES), sharey=True)
    for ax, name in zip(axes, MATRICES):
        for detail, label, style in ((n.detail, say("trained"), "-o"), (n.detail_random, say("random"), "--s")):
            s = np.array(detail[name]["singular_values"])
            ax.plot(np.arange(1, len(s) + 1), s, style, markersize=3, label=label)
        ax.set_yscale("log")
        ax.set_title(say("fig_matrix", matrix=name, cond=n.detail[name]["condition"]), fontsize="medium")
        ax.set_xlabel(say("fig_index"))
    axes[0].set_ylabel(say("fig_sigma"))
    axes[0].legend(fontsize="small")
    fig.suptitle(say("fig_spectra", layer=n.layer, head=n.head))
    return save(fig, out / "transform_spectra.png")


def _cloud_figure(n: Result, out: Path, lang: str) -> Path:
    say = translator(lang, "lessons.transform")
    fig = new_figure((10, 4.6))
    axes = fig.subplots(1, 2)
    labels = np.array(n.labels)
    group = group_names(lang)
    for ax, cloud, heading in (
        (axes[0], n.cloud_before, say("fig_before", ratio=n.before_ratio)),
        (axes[1], n.cloud_q, say("fig_after", head=n.head, ratio=n.after_ratio["q"][n.head])),
    ):
        P = np.array(cloud)
        for g in (*n.groups, "ambiguous"):
            sel = labels == g
            if sel.any():
                ax.scatter(
                    P[sel, 0],
                    P[sel, 1],
                    s=28,
                    c=COLORS.get(g, "#777777"),
                    marker="x" if g == "ambiguous" else "o",
                    label=group[g],
                )
        for (x, y), w in zip(P, n.words):
            ax.annotate(w, (x, y), fontsize="x-small", xytext=(3, 3), textcoords="offset points")
        ax.set_title(heading, fontsize="medium")
        ax.set_xlabel(say("fig_pc1"))
        ax.set_ylabel(say("fig_pc2"))
    axes[0].legend(fontsize="small")
    return save(fig, out / "transform_cloud.png")


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    return [_spectra_figure(n, out, lang), _cloud_figure(n, out, lang)]
