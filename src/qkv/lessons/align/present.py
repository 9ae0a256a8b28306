"""Lesson "align", said and drawn: a translation model's cross-attention against the corpus's gold word
alignment, its BLEU, and the ambiguous words 苹果 / 小米 / 黑莓 (numbers from qkv.lessons.align.measure)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from qkv.lessons.align.result import Result
from qkv.lessons.common.text import commas, listing, then
from qkv.presentation.figures import new_figure, save
from qkv.presentation.i18n import translator

MARGIN = 0.2  # "far above the untrained model" means at least this much more accuracy
CLOSE = 0.02  # all heads averaged within this of the best head is "about as much"


COPIED = (
    "n_pairs",
    "n_words",
    "best_acc",
    "acc_mean",
    "untrained_best_acc",
    "untrained_mean",
    "diagonal",
    "chance",
    "reads_best_acc",
    "bleu_greedy",
    "bleu_beam",
    "beam",
    "exact_greedy",
    "exact_beam",
    "n_beam",
    "beam_every",
    "bleu_greedy_some",
    "exact_greedy_some",
    "n_layers",
    "n_heads",
    "d_model",
    "split_word",
)  # said as measured


def title(lang: str) -> str:
    return translator(lang, "lessons.align")("title")


def names(lang: str) -> dict[str, dict[str, str]]:
    """How the text names the lesson's kinds of sentence (qkv.lessons.align.measure.KINDS), kinds of link
    (LINKS) and senses (SENSES): names(lang)["link"]["single"]."""
    say = translator(lang, "lessons.align")
    return {
        "kind": {
            "sense": say("kind_sense"),
            "order": say("kind_order"),
            "drug": say("kind_drug"),
            "job": say("kind_job"),
        },
        "link": {"single": say("link_single"), "phrase": say("link_phrase"), "punct": say("link_punct")},
        "sense": {"food": say("sense_food"), "company": say("sense_company")},
    }


def _counts(n: Result, word: str, sense: str) -> dict:
    r = n.senses.get(word, {}).get(sense)
    if r is None:  # no held-out pair of this word in this sense
        return {"n": 0, "word_ok": 0, "tail_ok": 0, "exact": 0}
    return {"n": r.n, "word_ok": r.word, "tail_ok": r.tail, "exact": r.exact}


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.align")
    L, H = n.best
    rL, rH = n.reads_best
    parts, split, links, numbers = n.parts, n.split_en, n.links, n.to_numbers()
    name = names(lang)
    f = {
        **{k: numbers[k] for k in COPIED},
        "layer": L,
        "head": H,
        "reads_layer": rL,
        "reads_head": rH,
        "millet": split["food"],
        "xiaomi": split["company"],
        "layers": commas([say("layer_acc", layer=k, acc=a) for k, a in enumerate(n.acc_layers)], lang),
        "kinds": listing([say("kind_acc", kind=name["kind"][k], **v.to_numbers()) for k, v in n.kinds.items()], lang),
        "links": listing([say("kind_acc", kind=name["link"][k], **v.to_numbers()) for k, v in links.items()], lang),
        "comma_missed": n.comma_missed,
        "comma_ahead": n.comma_ahead,
        "commas": n.commas,
        # what the rows that write the word of each sense read (n.parts[sense])
        "food_word_w": parts["food"].word,
        "food_cue_w": parts["food"].cue,
        "food_tail_w": parts["food"].tail,
        "food_cue_head": parts["food"].cue_head_max,
        "company_word_w": parts["company"].word,
        "company_cue_w": parts["company"].cue,
        "company_tail_w": parts["company"].tail,
        "company_cue_head": parts["company"].cue_head_max,
    }
    if "single" in links:  # a kind of link no held-out word has is not in n.links, and not said
        f.update(single_best=links["single"].best, single_diagonal=links["single"].diagonal)
    if "phrase" in links:
        f.update(phrase_best=links["phrase"].best, phrase_diagonal=links["phrase"].diagonal)
    sw = n.swap
    f.update(
        swap_n=sw.n,
        swap_cue=sw.cue,
        swap_tail=sw.tail,
        swap_neither=sw.neither,
        swap_faithful=sw.faithful,
        swap_verb_tail=sw.verb_tail,
        swap_zh=" ".join(sw.example_zh),
        swap_en=" ".join(sw.example_en),
    )
    millet, xiaomi = _counts(n, n.split_word, "food"), _counts(n, n.split_word, "company")
    f.update(millet_ok=millet["word_ok"], millet_n=millet["n"], xiaomi_ok=xiaomi["word_ok"], xiaomi_n=xiaomi["n"])
    return f


def _sense_lines(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.align")
    sense = names(lang)["sense"]
    lines = []
    for word, by_sense in n.senses.items():
        cells = [say("sense_cell", sense=sense[s], en=by_sense[s].en, **_counts(n, word, s)) for s in by_sense]
        lines.append(say("sense_line", word=word, cells=listing(cells, lang)))
    return "\n".join(lines)


def _verdicts(n: Result, f: dict, lang: str) -> list[str]:
    say = translator(lang, "lessons.align")
    out = [say("far_above" if n.best_acc >= n.untrained_best_acc + MARGIN else "not_far_above", **f)]
    out.append(say("beats_diagonal" if n.best_acc > n.diagonal else "not_beats_diagonal", **f))
    out.append(say("mean_below" if n.acc_mean < n.best_acc - CLOSE else "mean_not_below", **f))
    out.append(say("reads_lower" if n.reads_best_acc < n.best_acc else "reads_higher", **f))
    return out


def _link_verdicts(n: Result, f: dict, lang: str) -> list[str]:
    say = translator(lang, "lessons.align")
    links, out = n.links, []
    if "single" in links:
        out.append(say("single_beats" if links["single"].best > links["single"].diagonal else "single_not", **f))
    if "phrase" in links and links["phrase"].diagonal > links["phrase"].best:
        out.append(say("phrase_diagonal", **f))
    if n.comma_missed:
        out.append(say("comma_ahead" if n.comma_ahead > n.comma_missed / 2 else "comma_elsewhere", **f))
    return out


def _split_verdict(n: Result, f: dict, lang: str) -> str:
    say = translator(lang, "lessons.align")
    sw = n.swap
    cue_decides, tail_decides = sw.cue > sw.n / 2, sw.tail > sw.n / 2
    faithful, rewritten = sw.faithful >= sw.n / 2, sw.verb_tail > sw.faithful
    parts = [
        say("swap_cue" if cue_decides else "swap_tail" if tail_decides else "swap_mixed", **f),
        say("tail_faithful" if faithful else "tail_unfaithful" if rewritten else "tail_mixed", **f),
        say("rows", **f),
    ]
    p = [n.parts[s] for s in ("food", "company")]
    if not cue_decides:  # the sentences below speak of "the verb that decides"
        pass
    elif all(r.cue < min(r.word, r.tail) for r in p):
        parts.append(say("rows_cue_least", **f))
    elif all(r.cue > max(r.word, r.tail) for r in p):
        parts.append(say("rows_cue_most", **f))
    else:
        parts.append(say("rows_cue_between", **f))
    return then(parts, lang)


def text(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.align")
    f = _fields(n, lang)
    return say(
        "text",
        **f,
        verdict=then(_verdicts(n, f, lang), lang),
        senses=_sense_lines(n, lang),
        link_verdict=then(_link_verdicts(n, f, lang) or [""], lang),
        split_verdict=_split_verdict(n, f, lang),
    )


def headline(n: Result, lang: str) -> str:
    return translator(lang, "lessons.align")("headline", **_fields(n, lang))


def _matrix(ax, M, zh, en, links, heading, lang):
    """One alignment matrix: English words written (rows) × Chinese words read (columns), gold links boxed."""
    from matplotlib.patches import Rectangle

    say = translator(lang, "lessons.align")

    M = np.array(M)
    ax.imshow(M, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    for z, e in links:
        ax.add_patch(Rectangle((z - 0.5, e - 0.5), 1, 1, fill=False, ec="tab:orange", lw=1.4))
    pick = M.argmax(1)
    ax.plot(pick, range(len(pick)), "o", ms=3.5, color="tab:red", label=say("fig_pick"))
    ax.set_xticks(range(len(zh)), zh, rotation=90, fontsize="small")
    ax.set_yticks(range(len(en)), en, fontsize="small")
    ax.set_xlabel(say("fig_source"))
    ax.set_title(heading, fontsize="medium")


def figures(n: Result, out: Path, lang: str) -> list[Path]:
    """The example pair's alignment matrices; accuracy per head, trained and untrained; the 小米 rows."""
    say = translator(lang, "lessons.align")
    ex = n.example
    fig = new_figure((12, 6.2))
    left, right = fig.subplots(1, 2)
    _matrix(
        left,
        ex.head_pattern,
        ex.zh,
        ex.en,
        ex.links,
        say("fig_head", layer=ex.layer, head=ex.head),
        lang,
    )
    _matrix(right, ex.mean_pattern, ex.zh, ex.en, ex.links, say("fig_mean"), lang)
    left.set_ylabel(say("fig_target"))
    left.legend(loc="lower left", fontsize="small")
    fig.suptitle(say("fig_matrix_title"))
    paths = [save(fig, out / "align_matrix.png")]

    fig = new_figure((max(6.0, 0.6 * n.n_layers * n.n_heads + 2), 4.4))
    ax = fig.subplots()
    trained, raw = np.array(n.acc_heads).ravel(), np.array(n.untrained_heads).ravel()
    x = np.arange(len(trained))
    ax.bar(x - 0.2, trained, 0.4, label=say("fig_trained"), color="tab:blue")
    ax.bar(x + 0.2, raw, 0.4, label=say("fig_untrained"), color="tab:orange")
    for value, label, style in (
        (n.acc_mean, say("fig_mean_line", acc=n.acc_mean), "-"),
        (n.diagonal, say("fig_diagonal", acc=n.diagonal), "--"),
        (n.chance, say("fig_chance", acc=n.chance), ":"),
    ):
        ax.axhline(value, color="gray", ls=style, lw=1, label=label)
    ax.set_xticks(x, [f"L{k // n.n_heads}H{k % n.n_heads}" for k in x], fontsize="small")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(say("fig_acc"))
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(say("fig_heads_title", n_words=n.n_words, n_pairs=n.n_pairs), fontsize="medium")
    paths.append(save(fig, out / "align_heads.png"))

    fig = new_figure((11, 4.2))
    axes = fig.subplots(1, len(n.examples), squeeze=False)[0]
    for ax, e in zip(axes, n.examples.values()):
        x = np.arange(len(e.zh))
        L, H = e.cue_head
        ax.bar(x - 0.2, e.mean, 0.4, label=say("fig_mean"), color="tab:blue")
        ax.bar(x + 0.2, e.cue_head_row, 0.4, label=say("fig_cue_head", layer=L, head=H), color="tab:green")
        ax.set_xticks(x, e.zh, rotation=90, fontsize="small")
        ax.set_ylim(0, 1.15 * max(max(e.mean), max(e.cue_head_row)))
        ax.set_title(say("fig_split_panel", written=e.written, prefix=" ".join(e.en[: e.row])), fontsize="medium")
        ax.legend(fontsize="small")
    axes[0].set_ylabel(say("fig_weight"))
    fig.suptitle(say("fig_split_title", word=n.split_word))
    paths.append(save(fig, out / "align_split.png"))
    return paths
