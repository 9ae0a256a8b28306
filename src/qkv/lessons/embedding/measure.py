"""Lesson: three ways to turn a word into numbers: an index, a one-hot vector, a learned embedding.

    index      the word's id in the vocabulary: a label; id(香蕉) − id(苹果) is just another id
    one-hot    e_id, a vector with a single 1: every two different words have cosine 0
    learned    the row W_E[id] of the trained model: cos(a, b) = a·b / (|a| |b|) can say "alike"

The claim measured: fruit words end up closer to each other than to 原子能 (atomic energy), i.e. the
mean cosine within the fruits is larger than the mean cosine between a fruit and 原子能.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import torch

from qkv.lessons.embedding.result import Result

NEEDS_MODEL = True
READS = ("decoder", "encoder")  # the model families (Family.design) it reads
FRUITS = ("苹果", "香蕉", "梨", "葡萄")
OTHER = "原子能"
MAP_WORDS = (
    "苹果",
    "香蕉",
    "梨",
    "葡萄",
    "橘子",
    "西瓜",
    "原子能",
    "太阳能",
    "风能",
    "煤炭",
    "猫",
    "狗",
    "马",
    "股价",
    "吃了",
    "投资了",
)
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


def _training_text() -> tuple[str, str]:
    """(the bundled GPT's training text, "bundled"); ("the built-in corpus, "builtin") without the HSK
    sentences installed: the part of that text which qkv generates."""
    from qkv.core.hub.bundled import training_text
    from qkv.core.text.corpus import default_text

    try:
        return training_text(), "bundled"
    except ValueError:
        return default_text(), "builtin"


@torch.no_grad()
def measure(model, tokenizer, seed: int = 0) -> Result:
    from qkv.presentation.plot_embedding import nearest_neighbours

    fruits = single_tokens(tokenizer, FRUITS)
    if len(fruits) < 2 or not single_tokens(tokenizer, [OTHER]):
        raise ValueError(f"this vocabulary lacks the words the lesson needs ({', '.join(FRUITS)}, {OTHER})")
    words = fruits + [OTHER]
    ids = [tokenizer.encode(w)[0] for w in words]

    # the index: arithmetic on ids
    diff = ids[1] - ids[0]
    diff_token = tokenizer.display(diff) if 0 <= diff < tokenizer.vocab_size else None

    # one-hot vectors: rows of the identity, one per word
    cos_onehot = cosines(torch.eye(model.cfg.d_vocab)[ids])  # (n, n) of (n, d_vocab) rows

    # learned: rows of W_E
    cos = cosines(model.embed.weight.detach().double()[ids])  # (n, n) of (n, d_model) rows
    n_f = len(fruits)
    within = float(np.mean([cos[i, j].item() for i, j in combinations(range(n_f), 2)]))
    across = float(np.mean([cos[i, n_f].item() for i in range(n_f)]))
    text, source = _training_text()  # how often the bundled model's training text shows each word
    counts = Counter(text.split())
    return Result(
        words=words,
        fruits=fruits,
        other=OTHER,
        ids=ids,
        id_difference=diff,
        id_difference_token=diff_token,
        onehot_cosines=[cos_onehot[i, j].item() for i, j in combinations(range(len(words)), 2)],
        onehot_max_offdiag=float((cos_onehot - torch.eye(len(words))).abs().max()),
        cosines=[[words[i], words[j], cos[i, j].item()] for i, j in combinations(range(len(words)), 2)],  # [a, b, cos]
        cosine_matrix=cos.tolist(),
        within_fruit_mean=within,
        fruit_other_mean=across,
        claim_holds=within > across,
        neighbours={w: [[t, c] for t, c in nearest_neighbours(model, tokenizer, w, k=K)] for w in (fruits[0], OTHER)},
        d_model=model.cfg.d_model,
        d_vocab=model.cfg.d_vocab,
        corpus_counts={w: counts[w] for w in words},
        corpus_source=source,
        corpus_lines=text.count("\n"),
        map_tokens=single_tokens(tokenizer, MAP_WORDS),
    )
