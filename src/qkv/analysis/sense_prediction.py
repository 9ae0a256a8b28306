"""Which sense of a word the model's own prediction points to, in each of two sentences.

    senses = sense_prediction(model, tokenizer, ids, pos, groups)   # groups: [["味道", "看起来"], ["股价", "利润"]]

Cosines say how alike two vectors of the word are; they do not say which meaning the model reads. Its
next-token distribution does: after "我 昨天 吃了 苹果 ，" the bundled model gives the food words (味道,
看起来, ...) 0.95 and the company words (股价, 利润, ...) 0.006; after "我 上周 投资了 苹果 ，" the other way.
For each sentence, read at the word's (last) position p:

    P = softmax(logits at p)                      the model's prediction right after the word
    if its top token is punctuation or a line break with P > STEP_P (the word is followed by "，" at
    0.99, and no sense word can come yet): append that token and read once more, after it
    p(group g) = sum over g's words w of P(first token of w)
    leans = arg max_g p(g), ratio = p(leans) / p(second)

A causal model's vector at position p sees positions 0..p only: at p = 0 it is the same in every
sentence, and so is its prediction ("first": the page says so). Groups default to the corpus's
sense words for a word it knows (default_groups: the first words of its food tails and of the
company tails).
"""

from __future__ import annotations

import unicodedata

import torch

from qkv.core.model import evaluating
from qkv.core.text.corpus import lexicon

STEP_P = 0.8  # a punctuation token predicted above this is written before the senses are read
TOP = 5  # the top predictions shown
MAX_GROUPS, MAX_WORDS = 4, 8  # sense groups, and words in each, the page may ask for


def default_groups(word: str) -> list[list[str]]:
    """The corpus's sense words for `word` (lexicon.AMBIGUOUS): [food words, company words], or []."""
    info = lexicon.AMBIGUOUS.get(word.strip())
    if not info:
        return []
    first = lambda tails: list(dict.fromkeys(zh.split()[0] for zh, _ in tails))
    return [first(info["food_tails"]), first(lexicon.COMPANY_TAILS)]


def closes_line(text: str) -> bool:
    """Whether a token's text is only whitespace, punctuation or symbols (a line break, a comma, 。)."""
    return bool(text) and all(unicodedata.category(c)[0] in "PSZC" for c in text)


def _probs(model, ids: list[int]) -> torch.Tensor:
    """P(next token) after ids (d_vocab,)."""
    logits = model(torch.tensor([ids], device=next(model.parameters()).device))  # (1, T, d_vocab)
    return torch.softmax(logits[0, -1].double(), -1).cpu()


def _first_ids(tokenizer, words: list[str]) -> list[tuple[str, int]]:
    """(word, its first token) for each word the tokenizer writes, without special tokens."""
    special = set(getattr(tokenizer, "special", None) or ())
    out = []
    for w in words:
        try:
            ids = [i for i in tokenizer.encode(w) if i not in special]
        except ValueError:
            continue
        if ids:
            out.append((w, ids[0]))
    return out


@torch.no_grad()
def sense_prediction(model, tokenizer, ids: list[int], pos: int, groups: list[list[str]]) -> dict:
    """The prediction after the word at `pos` of `ids`, and each group's probability (module docstring)."""
    prefix = list(ids[: pos + 1])
    with evaluating(model):
        P = _probs(model, prefix)
        step = None
        top1 = int(P.argmax())
        if float(P[top1]) > STEP_P and closes_line(tokenizer.decode([top1])):
            step = {"id": top1, "token": tokenizer.display(top1), "p": float(P[top1])}
            P = _probs(model, prefix + [top1])
    values, order = P.topk(min(TOP, P.shape[0]))
    top = [{"id": int(i), "token": tokenizer.display(int(i)), "p": float(v)} for v, i in zip(values, order)]
    out_groups = []
    for words in groups:
        found = _first_ids(tokenizer, words)
        out_groups.append(
            {
                "words": [w for w, _ in found],
                "p": float(sum(float(P[i]) for _, i in found)),
                "missing": [w for w in words if w not in {f for f, _ in found}],
            }
        )
    ps = [g["p"] for g in out_groups]
    leans, ratio = None, None
    if len(ps) >= 2 and max(ps) > 0:
        leans = max(range(len(ps)), key=ps.__getitem__)
        second = max(p for k, p in enumerate(ps) if k != leans)
        ratio = ps[leans] / second if second > 0 else None
    return {"pos": pos, "step": step, "top": top, "groups": out_groups, "leans": leans, "ratio": ratio}


def predictions(model, tokenizer, sides, groups: list[list[str]] | None, word: str) -> dict:
    """The "prediction" part of a compare document: sides = [(ids_a, pos_a), (ids_b, pos_b)]; groups
    None: default_groups(word). available false (and why) for a model without a next-token head."""
    causal = bool(model.cfg.causal)
    first = [p == 0 for _, p in sides]
    if not getattr(model.family, "next_token", True):
        return {"available": False, "why": "no_lm_head", "causal": causal, "first": first}
    groups = default_groups(word) if groups is None else groups
    groups = [g[:MAX_WORDS] for g in groups[:MAX_GROUPS]]
    a, b = (sense_prediction(model, tokenizer, ids, p, groups) for ids, p in sides)
    return {"available": True, "causal": causal, "first": first, "step_p": STEP_P, "a": a, "b": b}
