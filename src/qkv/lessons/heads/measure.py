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

import numpy as np
import torch

from qkv.core.io.refusal import phrase
from qkv.lessons.heads.result import Best, Result

NEEDS_MODEL = True
READS = ("decoder",)  # the model families (Family.design) it reads
READS_WHY = phrase("lessons.heads.reads_why")  # why it reads no other family (said when it refuses one)
CATEGORIES = ("cue", "previous", "start", "self")


def cue_words() -> list[str]:
    """The verbs that decide a sense in the corpus: the first word of every food and company cue."""
    from qkv.core.text.corpus import lexicon as L

    phrases = [zh for info in L.AMBIGUOUS.values() for zh, _ in info["food_cues"]] + [zh for zh, _ in L.COMPANY_CUES]
    return list(dict.fromkeys(p.split()[0] for p in phrases))


def prompts(tokenizer, lang: str = "zh") -> list[tuple[list[int], int]]:
    """(ids, cue position) for every sense probe whose words are all in the vocabulary; the text ends
    with the comma (and, for a tokenizer that makes spaces tokens, the space after it), so the last
    position is the one that guesses the next word."""
    from qkv.core.text.corpus import probes

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
def attention_mass(model, items) -> dict:
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
    targets = {
        "cue": torch.tensor([cue for _, cue in items]),
        "previous": last - 1,
        "start": torch.zeros_like(last),
        "self": last,
    }
    mass = {c: np.zeros((cfg.n_layers, cfg.n_heads)) for c in CATEGORIES}
    for layer in range(cfg.n_layers):
        A = trace["pattern", layer].double()[rows, :, last, :]  # (N, n_heads, T_max): each sentence's last row
        for c, j in targets.items():
            mass[c][layer] = A[rows, :, j].mean(0).numpy()  # (n_heads,)
    return {"mass": mass, "baseline": float((1.0 / lengths.double()).mean()), "n": len(items)}


def measure(model, tokenizer, seed: int = 0, limit: int | None = None) -> Result:
    """The attention mass of every head per category, and the head that puts the most on each, for
    each category of CATEGORIES. limit: at most that many sentences, spread evenly over the probes
    (a large model's forward over all of them takes minutes)."""
    items = prompts(tokenizer)
    if not items:
        raise ValueError("no sense probe can be encoded by this checkpoint's tokenizer")
    if limit is not None and len(items) > limit:
        items = [items[i * len(items) // limit] for i in range(limit)]
    m = attention_mass(model, items)
    mass, baseline = m["mass"], m["baseline"]
    best = {}
    for c in CATEGORIES:
        L, H = np.unravel_index(int(np.argmax(mass[c])), mass[c].shape)
        top = float(mass[c][L, H])
        best[c] = Best(layer=int(L), head=int(H), mass=top, ratio=top / baseline)
    return Result(
        n_sentences=m["n"],
        baseline=baseline,
        cue_words=cue_words(),
        categories=list(CATEGORIES),
        example=tokenizer.decode(items[0][0]).strip(),
        example_cue=tokenizer.decode([items[0][0][items[0][1]]]),
        mass={c: mass[c].tolist() for c in CATEGORIES},
        best=best,
        distinct_heads=len({(b.layer, b.head) for b in best.values()}),
    )
