"""Lesson: three ways to turn a word into numbers: an index, a one-hot vector, a learned embedding.

    index      the word's id in the vocabulary: a label; id(香蕉) − id(苹果) is just another id
    one-hot    e_id, a vector with a single 1: every two different words have cosine 0
    learned    the row W_E[id] of the trained model: cos(a, b) = a·b / (|a| |b|) can say "alike"

The claim measured: fruit words end up closer to each other than to 原子能 (atomic energy), i.e. the
mean cosine within the fruits is larger than the mean cosine between a fruit and 原子能.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import torch

from qkv.core.bundled import default_ckpt

from .base import LessonResult

NAME = "embedding"
TITLE = {"zh": "序号、独热编码与学到的词嵌入：谁离谁近？",
         "en": "Index, one-hot and learned embeddings: which words are close?"}
FRUITS = ("苹果", "香蕉", "梨", "葡萄")
OTHER = "原子能"
MAP_WORDS = ("苹果", "香蕉", "梨", "葡萄", "橘子", "西瓜", "原子能", "太阳能", "风能", "煤炭", "猫", "狗", "马", "股价", "吃了", "投资了")
K = 5


def single_tokens(tokenizer, words) -> list[str]:
    """The words that are one token of this tokenizer."""
    keep = []
    for w in words:
        try:
            if len(tokenizer.encode(w)) == 1:
                keep.append(w)
        except ValueError:
            continue
    return keep


def cosines(E: torch.Tensor) -> torch.Tensor:
    """cos(a, b) = a·b / (|a| |b|) for every pair of rows of E (n, d)."""
    unit = E / E.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return unit @ unit.T


@torch.no_grad()
def run(lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    from qkv.core.checkpoint import load
    from qkv.presentation.plot_embedding import nearest_neighbours
    from qkv.presentation.i18n import check_lang

    check_lang(lang)
    model, tok = load(ckpt if ckpt is not None else default_ckpt())
    fruits = single_tokens(tok, FRUITS)
    if len(fruits) < 2 or not single_tokens(tok, [OTHER]):
        raise ValueError(f"this vocabulary lacks the words the lesson needs ({', '.join(FRUITS)}, {OTHER})")
    words = fruits + [OTHER]
    ids = [tok.encode(w)[0] for w in words]

    # the index: arithmetic on ids
    diff = ids[1] - ids[0]
    diff_token = tok.display(diff) if 0 <= diff < tok.vocab_size else None

    # one-hot vectors: rows of the identity, one per word
    onehot = torch.eye(model.cfg.d_vocab)[ids]  # (n, d_vocab)
    cos_onehot = cosines(onehot)

    # learned: rows of W_E
    E = model.embed.weight.detach().double()[ids]  # (n, d_model)
    cos = cosines(E)
    n_f = len(fruits)
    within = [cos[i, j].item() for i, j in combinations(range(n_f), 2)]
    across = [cos[i, n_f].item() for i in range(n_f)]
    within_mean, across_mean = float(np.mean(within)), float(np.mean(across))
    holds = within_mean > across_mean
    pairs = {f"{words[i]}-{words[j]}": cos[i, j].item() for i, j in combinations(range(len(words)), 2)}
    neighbours = {w: nearest_neighbours(model, tok, w, k=K) for w in (fruits[0], OTHER)}

    numbers = {
        "words": words, "ids": ids, "id_difference": diff, "id_difference_token": diff_token,
        "onehot_cosines": [cos_onehot[i, j].item() for i, j in combinations(range(len(words)), 2)],
        "onehot_max_offdiag": float((cos_onehot - torch.eye(len(words))).abs().max()),
        "cosines": pairs, "cosine_matrix": cos.tolist(),
        "within_fruit_mean": within_mean, "fruit_other_mean": across_mean, "claim_holds": holds,
        "neighbours": {w: [[t, c] for t, c in nn] for w, nn in neighbours.items()},
        "d_model": model.cfg.d_model, "d_vocab": model.cfg.d_vocab,
    }
    if ckpt is None:  # the bundled model was trained on qkv.corpus.default_text()
        from collections import Counter

        from qkv.core.corpus import default_text

        text = default_text()
        counts = Counter(text.split())
        numbers["corpus_counts"] = {w: counts[w] for w in words}
        numbers["corpus_lines"] = text.count("\n")
    verdict = "holds" if holds else "does not hold"
    headline = (f"id({words[1]}) − id({words[0]}) = {diff}；独热编码的余弦全为 {numbers['onehot_max_offdiag']:.0f}；"
                f"学到的嵌入：水果之间平均余弦 {within_mean:.3f}，水果与{OTHER} {across_mean:.3f}（{'成立' if holds else '不成立'}）；"
                f"离{fruits[0]}最近：{neighbours[fruits[0]][0][0]} {neighbours[fruits[0]][0][1]:.3f}") if lang == "zh" else (
                f"id({words[1]}) − id({words[0]}) = {diff}; one-hot cosines all {numbers['onehot_max_offdiag']:.0f}; "
                f"learned: fruit–fruit mean cosine {within_mean:.3f} vs fruit–{OTHER} {across_mean:.3f} (claim {verdict}); "
                f"nearest to {fruits[0]}: {neighbours[fruits[0]][0][0]} {neighbours[fruits[0]][0][1]:.3f}")
    figures: list[Path] = []
    if out is not None:
        from qkv.presentation.plot_embedding import embedding_map

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        figures.append(embedding_map(model, tok, out / "embedding_map.png", tokens=single_tokens(tok, MAP_WORDS), lang=lang))
    return LessonResult(NAME, TITLE[lang], _text(lang, numbers, fruits), headline, numbers, figures, lang)


def _text(lang: str, n: dict, fruits: list[str]) -> str:
    w, ids = n["words"], n["ids"]
    id_list = ", ".join(f"{a} = {b}" for a, b in zip(w, ids))
    arrow = f"「{n['id_difference_token']}」" if n["id_difference_token"] else ("（不是任何词元）" if lang == "zh" else "(no token at all)")
    arrow_en = f"“{n['id_difference_token']}”" if n["id_difference_token"] else "(no token at all)"
    pairs = ", ".join(f"{k} {v:.3f}" for k, v in n["cosines"].items())
    nn = {k: ", ".join(f"{t} {c:.3f}" for t, c in v) for k, v in n["neighbours"].items()}
    a, o = fruits[0], OTHER
    counts = ", ".join(f"{k} {v}" for k, v in n.get("corpus_counts", {}).items())
    if lang == "zh":
        verdict = ("成立：水果彼此之间更接近" if n["claim_holds"] else "不成立：在这个模型里，水果之间并不比水果与原子能更接近")
        return (
            f"最省事的编码是给每个词一个序号：{id_list}。序号只是标签，做算术没有意义——"
            f"id({w[1]}) − id({w[0]}) = {n['id_difference']}，恰好是{arrow}的序号，和这两个词毫无关系。\n\n"
            f"独热编码给每个词一个只有一位是 1 的向量（这里长 {n['d_vocab']} 位）。"
            f"任何两个不同的词都互相正交：量到的余弦相似度全是 {n['onehot_max_offdiag']:.0f}。它们彼此独立，"
            "但也因此看不出“苹果和香蕉都是水果”。\n\n"
            f"模型学到的词嵌入是 W_E 的一行（{n['d_model']} 维），训练让用法相近的词指向相近的方向。"
            f"余弦相似度：{pairs}。水果两两之间的平均值是 {n['within_fruit_mean']:.3f}，"
            f"水果与{o}之间是 {n['fruit_other_mean']:.3f}，所以“水果彼此更近、离原子能更远”这一说法在这里{verdict}。\n\n"
            f"在整个词表里离「{a}」最近的词元：{nn[a]}；离「{o}」最近的：{nn[o]}。"
            + (f"\n\n提醒：这些距离取决于训练语料里每个词出现了多少次。内置语料（{n['corpus_lines']} 行）中：{counts}；"
               "出现得少的词，嵌入得到的训练也少。" if counts else "")
        )
    verdict = ("holds: the fruits are closer to each other" if n["claim_holds"]
               else "does not hold: in this model the fruits are not closer to each other than to 原子能")
    return (
        f"The cheapest code gives every word a number: {id_list}. The number is only a label, and arithmetic on it "
        f"means nothing: id({w[1]}) − id({w[0]}) = {n['id_difference']}, which happens to be the id of {arrow_en}, "
        "unrelated to either word.\n\n"
        f"One-hot coding gives every word a vector with a single 1 ({n['d_vocab']} entries long). Any two different words "
        f"are orthogonal: every cosine similarity measured is {n['onehot_max_offdiag']:.0f}. They are independent, and "
        "for the same reason nothing in them says that apple and banana are both fruit.\n\n"
        f"A learned embedding is a row of W_E ({n['d_model']} numbers); training pushes words that are used alike "
        f"towards similar directions. Cosine similarities: {pairs}. The mean over pairs of fruits is "
        f"{n['within_fruit_mean']:.3f}; between a fruit and {o} it is {n['fruit_other_mean']:.3f}, so the claim that "
        f"fruits sit together, away from atomic energy, {verdict}.\n\n"
        f"The nearest tokens to “{a}” in the whole vocabulary: {nn[a]}; to “{o}”: {nn[o]}."
        + (f"\n\nA caveat: these distances depend on how often each word occurs in the training text. In the built-in "
           f"corpus ({n['corpus_lines']} lines): {counts}; a rare word's embedding gets few updates." if counts else "")
    )
