"""Lesson: different heads look at different things, measured as attention mass over many sentences.

For every held-out word-sense probe of qkv.corpus ("我 昨天 吃了 苹果 ，", "他 投资了 小米 ，", ...)
the query is the position right after the comma (the one that must guess how the sentence goes on),
and for each layer and head we add up the weight it puts on

    cue       the verb that decides the sense (吃了, 投资了, ...: the first word of every cue phrase of
              the corpus's lexicon, found in the prompt)
    previous  the token just before the query
    start     position 0, the first token of the sentence
    self      the query's own position

averaged over all probes. A head that spread its weight evenly would give each category
1 / (visible tokens), the uniform baseline.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from qkv.core.bundled import default_ckpt

from .base import LessonResult

NAME = "heads"
TITLE = {"zh": "不同的头看不同的东西：在许多句子上量出注意力的去向",
         "en": "Different heads look at different things: attention mass over many sentences"}
CATEGORIES = ("cue", "previous", "start", "self")
LABELS = {"cue": {"zh": "决定词义的动词", "en": "the cue verb"},
          "previous": {"zh": "前一个词元", "en": "the previous token"},
          "start": {"zh": "句首（位置 0）", "en": "the sentence start (position 0)"},
          "self": {"zh": "自己", "en": "itself"}}
SHORT = {"cue": {"zh": "动词", "en": "cue"}, "previous": {"zh": "前一个", "en": "previous"},
         "start": {"zh": "句首", "en": "start"}, "self": {"zh": "自己", "en": "self"}}


def cue_words() -> list[str]:
    """The verbs that decide a sense in the corpus: the first word of every food and company cue."""
    from qkv.core.corpus import lexicon as L

    phrases = [zh for info in L.AMBIGUOUS.values() for zh, _ in info["food_cues"]] + [zh for zh, _ in L.COMPANY_CUES]
    return list(dict.fromkeys(p.split()[0] for p in phrases))


def prompts(tokenizer, lang: str = "zh") -> list[tuple[list[int], int]]:
    """(ids, cue position) for every sense probe whose words are all in the vocabulary; the text ends
    after the comma and its space, so the last position is the one that guesses the next word."""
    from qkv.core.corpus import probes

    cues = set(cue_words())
    out = []
    for probe in probes("sense", lang="zh"):
        words = probe.prompt.split(" ")
        at = [k for k, w in enumerate(words) if w in cues]
        try:
            ids = tokenizer.encode(probe.prompt + " ")
            head = tokenizer.encode(" ".join(words[: at[-1] + 1])) if at else []
        except ValueError:  # a word this tokenizer cannot encode
            continue
        if head and ids[: len(head)] == head:  # the cue is the last token of the text up to it
            out.append((ids, len(head) - 1))
    return out


@torch.no_grad()
def measure(model, items) -> dict:
    """mass[category]: (n_layers, n_heads) mean weight from each sentence's last position; baseline: mean 1/T.

    All sentences run as one batch, padded on the right: with the causal mask a position never sees
    the ones after it, so the padding changes nothing at or before each sentence's last token."""
    cfg = model.cfg
    lengths = torch.tensor([len(ids) for ids, _ in items])  # (N,)
    batch = torch.zeros(len(items), int(lengths.max()), dtype=torch.long)  # (N, T_max)
    for b, (ids, _) in enumerate(items):
        batch[b, : len(ids)] = torch.tensor(ids)
    if not cfg.causal:
        raise ValueError("this lesson reads a causal model (right padding must not be visible)")
    _, trace = model.run_with_trace(batch, names=lambda name: name.endswith("hook_pattern"))
    rows = torch.arange(len(items))
    last = lengths - 1
    targets = {"cue": torch.tensor([cue for _, cue in items]), "previous": last - 1,
               "start": torch.zeros_like(last), "self": last}
    mass = {c: np.zeros((cfg.n_layers, cfg.n_heads)) for c in CATEGORIES}
    for layer in range(cfg.n_layers):
        A = trace["pattern", layer].double()[rows, :, last, :]  # (N, n_heads, T_max): each sentence's last row
        for c, j in targets.items():
            mass[c][layer] = A[rows, :, j].mean(0).numpy()  # (n_heads,)
    return {"mass": mass, "baseline": float((1.0 / lengths.double()).mean()), "n": len(items)}


def _table_figure(mass, baseline, path, lang):
    from qkv.presentation.figures import new_figure, save, tr

    fig = new_figure((3.2 * len(CATEGORIES) + 1, 3.6))
    axes = fig.subplots(1, len(CATEGORIES), squeeze=False)[0]
    image = None
    for ax, c in zip(axes, CATEGORIES):
        M = mass[c]
        image = ax.imshow(M, cmap="Blues", vmin=0.0, vmax=1.0)
        for L in range(M.shape[0]):
            for H in range(M.shape[1]):
                ax.text(H, L, f"{M[L, H]:.2f}", ha="center", va="center", fontsize="small",
                        color="white" if M[L, H] > 0.6 else "black")
        ax.set_xticks(range(M.shape[1]))
        ax.set_yticks(range(M.shape[0]))
        ax.set_xlabel(tr(lang, "head", "头"))
        ax.set_ylabel(tr(lang, "layer", "层"))
        ax.set_title(LABELS[c][lang], fontsize="medium")
    fig.colorbar(image, ax=list(axes), shrink=0.8, label=tr(lang, "mean attention weight", "平均注意力权重"))
    fig.suptitle(tr(lang, f"Where the query after the comma looks (uniform baseline {baseline:.3f})",
                    f"逗号之后的查询位置把注意力放在哪里（均匀基线 {baseline:.3f}）"))
    return save(fig, path)


def run(lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    from qkv.core.checkpoint import load
    from qkv.presentation.i18n import check_lang

    check_lang(lang)
    torch.manual_seed(seed)
    model, tok = load(ckpt if ckpt is not None else default_ckpt())
    items = prompts(tok)
    if not items:
        raise ValueError("no sense probe can be encoded by this checkpoint's tokenizer")
    m = measure(model, items)
    mass, baseline = m["mass"], m["baseline"]
    best = {}
    for c in CATEGORIES:
        L, H = np.unravel_index(int(np.argmax(mass[c])), mass[c].shape)
        best[c] = (int(L), int(H), float(mass[c][L, H]))
    numbers = {"n_sentences": m["n"], "baseline": baseline, "cue_words": cue_words(),
               **{f"mass_{c}": mass[c].tolist() for c in CATEGORIES},
               **{f"best_{c}": [best[c][0], best[c][1]] for c in CATEGORIES},
               **{f"best_{c}_mass": best[c][2] for c in CATEGORIES}}
    if lang == "zh":
        headline = ("；".join(f"{SHORT[c]['zh']}：第 {best[c][0]} 层第 {best[c][1]} 个头 {best[c][2]:.3f}" for c in CATEGORIES)
                    + f"（均匀基线 {baseline:.3f}，{m['n']} 个句子）")
    else:
        headline = ("; ".join(f"{SHORT[c]['en']}: layer {best[c][0]} head {best[c][1]} {best[c][2]:.3f}" for c in CATEGORIES)
                    + f" (uniform baseline {baseline:.3f}, {m['n']} sentences)")
    figures: list[Path] = []
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        figures.append(_table_figure(mass, baseline, out / "heads_mass.png", lang))
    return LessonResult(NAME, TITLE[lang], _text(lang, numbers, best, items, tok), headline, numbers, figures, lang)


def _text(lang, n, best, items, tok) -> str:
    example = tok.decode(items[0][0]).strip()
    cue = tok.decode([items[0][0][items[0][1]]])
    above = {c: best[c][2] / n["baseline"] for c in CATEGORIES}
    distinct = len({best[c][:2] for c in CATEGORIES})
    if lang == "zh":
        lines = [f"- {LABELS[c]['zh']}：第 {best[c][0]} 层第 {best[c][1]} 个头，平均 {best[c][2]:.3f}"
                 f"（均匀基线的 {above[c]:.1f} 倍）" for c in CATEGORIES]
        return (
            "多头注意力让每个头各算一套 q、k、v，于是每个头可以学会关注不同的位置。这里不看单个例子，"
            f"而是在 {n['n_sentences']} 个留出的词义句子上取平均（例如「{example}」，其中决定词义的动词是「{cue}」）。"
            "查询位置是逗号后面的那个位置，它要猜下一个词，而下一个词取决于前面的动词是“吃”还是“投资”。\n\n"
            f"如果一个头把权重平均分给所有能看到的词元，每一类平均只能得到 {n['baseline']:.3f}。"
            "各类里注意力最多的头：\n" + "\n".join(lines) + "\n\n"
            + (f"这 {len(CATEGORIES)} 类各由不同的头拿到最多的注意力：头与头之间有分工，这就是“多头”的意义。"
               if distinct == len(CATEGORIES) else
               f"这 {len(CATEGORIES)} 类只落在 {distinct} 个不同的头上：有的头同时承担了几类。")
            + (f"决定词义的动词最多只得到 {best['cue'][2]:.3f}，比“前一个词元”的 {best['previous'][2]:.3f} 少得多："
               "在这个位置上，没有哪个头像盯住前一个词元那样盯住动词。" if best["cue"][2] < best["previous"][2] / 2 else "")
            + "这些分工是训练出来的，不是预先规定的。"
        )
    lines = [f"- {LABELS[c]['en']}: layer {best[c][0]}, head {best[c][1]}, mean {best[c][2]:.3f} "
             f"({above[c]:.1f}× the uniform baseline)" for c in CATEGORIES]
    return (
        "Multi-head attention gives every head its own q, k and v, so each head can learn to look somewhere else. "
        f"Rather than one example, this lesson averages over {n['n_sentences']} held-out word-sense sentences "
        f"(such as “{example}”, where the verb that decides the sense is “{cue}”). The query is the position after "
        "the comma: it has to guess the next word, and that word depends on whether the verb was about eating or "
        "about investing.\n\n"
        f"A head that spread its weight evenly over the tokens it can see would give each category "
        f"{n['baseline']:.3f} on average. The head with the most weight in each category:\n" + "\n".join(lines) + "\n\n"
        + (f"The {len(CATEGORIES)} categories peak in {distinct} different heads: the heads split the work, which is "
           "what having several of them buys. " if distinct == len(CATEGORIES) else
           f"The {len(CATEGORIES)} categories peak in only {distinct} different heads: some heads do several jobs. ")
        + (f"The cue verb gets at most {best['cue'][2]:.3f}, far less than the previous token's {best['previous'][2]:.3f}: "
           "at this position no head watches the verb the way one watches the previous token. "
           if best["cue"][2] < best["previous"][2] / 2 else "")
        + "The split is learned, not prescribed."
    )
