"""Lesson: the two senses of "apple" inside a real LLM (SmolLM2-135M-Instruct), layer by layer.

Each pair is a fruit sentence and a company sentence that both end in the word " apple", written the
same way (lower case: the tokenizer keeps case, and " Apple" would be another token, telling the
model the answer at the embedding). A decoder reads only the words before a position, so the cue
word that tells the sense (ate, shares, ...) stands before apple. At apple's last token, for the
embedding (blocks.0.hook_resid_pre: W_E[apple] alone, the same vector in every sentence, since a
Llama adds no position vector) and after each block (blocks.L.hook_resid_post), the lesson measures

1. cosines: mean cos(a, b) between a fruit and a company sentence (across) and between two sentences
   of the same sense (within); gap = within - across;
2. a linear probe's accuracy for the sense on held-out pairs: ridge least squares on standardised
   vectors (qkv.lessons.real_apple.measure.ridge_probe), K folds of whole pairs, each sentence scored
   once by a probe that never saw it nor its partner;
3. which heads read the cue: pattern[h][apple, cue] of every head, the mean over the sentences;
4. what the model predicts next: the top tokens of softmax(logits) at apple.
"""

from __future__ import annotations

import numpy as np
import torch

from qkv.core.io.refusal import phrase
from qkv.lessons.common.llm import model_name, traced_batch, word_end, word_start
from qkv.lessons.llm_apple.result import Head, Next, Result
from qkv.lessons.real_apple.measure import cosines, probe_accuracy

NEEDS_MODEL = "llm"  # run() loads SmolLM2, or the decoder --ckpt names
READS = ("decoder",)
READS_WHY = phrase("lessons.llm_apple.reads_why")  # why it reads no other family (said when it refuses one)
WORD = " apple"
K_FOLDS = 4
TOP_NEXT = 3  # next tokens kept per sentence
TOP_HEADS = 3
PARTED = 0.9  # held-out accuracy from which the text calls the senses parted
# (fruit sentence, its cue word, company sentence, its cue word); every sentence ends in WORD
PAIRS = (
    ("For lunch I ate an apple", "ate", "For years I owned stock in apple", "stock"),
    ("She peeled and sliced a juicy apple", "peeled", "She sold all her shares of apple", "shares"),
    ("He picked a ripe red apple", "ripe", "He invested his savings in apple", "invested"),
    ("The horse happily munched an apple", "munched", "The analysts downgraded the stock of apple", "stock"),
    ("My grandmother baked a pie with apple", "baked", "My broker bought more shares of apple", "shares"),
    (
        "The fruit bowl held a banana and an apple",
        "banana",
        "The tech giants are Microsoft, Google and apple",
        "Google",
    ),
    ("For a snack the kids ate a green apple", "ate", "Last quarter the iPhone maker apple", "iPhone"),
    ("I washed and bit into a crunchy apple", "crunchy", "I checked the share price of apple", "share"),
    ("We made fresh juice from a sour apple", "juice", "We bought a new laptop made by apple", "laptop"),
    ("The children shared one sweet apple", "sweet", "The investors sold their stake in apple", "stake"),
    ("A worm had eaten through the apple", "worm", "A lawsuit was filed against the company apple", "company"),
    ("She added cinnamon to the baked apple", "cinnamon", "She reads every earnings report from apple", "earnings"),
)


def sentences() -> tuple[list[str], list[str], np.ndarray]:
    """(the sentences, fruit first, their cue words, their labels: 0 fruit, 1 company)."""
    fruit, company = [(p[0], p[1]) for p in PAIRS], [(p[2], p[3]) for p in PAIRS]
    texts = [t for t, _ in fruit + company]
    return texts, [c for _, c in fruit + company], np.array([0.0] * len(fruit) + [1.0] * len(company))


def positions(tokenizer, texts: list[str], cues: list[str]) -> tuple[list[list[int]], list[int], list[int]]:
    """(each sentence's ids, the position of apple's last token, the position of the cue's first token)."""
    ids, word, cue = [], [], []
    for text, c in zip(texts, cues):
        if not text.endswith(WORD) or f" {c}" not in text:
            raise ValueError(f"{text!r} must end in {WORD!r} and hold the cue {c!r}")
        ids.append(tokenizer.encode(text))
        word.append(word_end(tokenizer, text, len(text)))
        cue.append(word_start(tokenizer, text, text.index(f" {c}")))
    return ids, word, cue


def pair_folds(n_pairs: int, k: int = K_FOLDS, seed: int = 0) -> list[list[int]]:
    """K lists of sentence indices: pair p is sentences p (fruit) and n_pairs + p (company), dealt whole."""
    order = np.random.default_rng(seed).permutation(n_pairs)
    return [sorted(i for p in order[f::k] for i in (int(p), n_pairs + int(p))) for f in range(k)]


def stages(cfg) -> list[tuple[str, str]]:
    """(label, activation): the embedding, then each block's output."""
    return [("embed", "blocks.0.hook_resid_pre")] + [
        (f"L{L}", f"blocks.{L}.hook_resid_post") for L in range(cfg.n_layers)
    ]


def cue_heads(trace, cfg, word: list[int], cue: list[int]) -> np.ndarray:
    """(n_layers, n_heads): pattern[b, h, word_b, cue_b] averaged over the sentences b."""
    rows = torch.arange(len(word))
    out = np.zeros((cfg.n_layers, cfg.n_heads))
    for L in range(cfg.n_layers):
        A = trace["pattern", L]  # (B, n_heads, T, T)
        out[L] = A[rows, :, torch.tensor(word), torch.tensor(cue)].double().mean(0).numpy()  # (n_heads,)
    return out


def next_tokens(logits: torch.Tensor, tokenizer, word: list[int]) -> list[Next]:
    """The TOP_NEXT most probable next tokens at apple, for each sentence."""
    out = []
    for b, i in enumerate(word):
        p = torch.softmax(logits[b, i].double(), -1)
        top = torch.topk(p, TOP_NEXT)
        out.append(Next(tokens=[tokenizer.display(int(t)) for t in top.indices], p=top.values.tolist()))
    return out


@torch.no_grad()
def measure(model, tokenizer, seed: int = 0) -> Result:
    texts, cues, labels = sentences()
    ids, word, cue = positions(tokenizer, texts, cues)
    cfg = model.cfg
    if max(len(x) for x in ids) > cfg.n_ctx:
        raise ValueError(f"this lesson's sentences need a context of {max(len(x) for x in ids)} tokens")
    named = stages(cfg)
    names = [n for _, n in named] + [f"blocks.{L}.attn.hook_pattern" for L in range(cfg.n_layers)]
    logits, trace = traced_batch(model, ids, names)
    rows = torch.arange(len(ids))
    folds = pair_folds(len(PAIRS), K_FOLDS, seed)
    per = {key: [] for key in ("across", "within", "gap", "probe")}
    for _, name in named:
        X = trace[name][rows, torch.tensor(word)].double().numpy()  # (N, d_model)
        cos = cosines(X, labels)
        for key in ("across", "within", "gap"):
            per[key].append(float(cos[key]))
        per["probe"].append(float(probe_accuracy(X, labels, folds)))
    weights = cue_heads(trace, cfg, word, cue)
    order = np.argsort(-weights, axis=None)[:TOP_HEADS]
    top = [Head(layer=int(k // cfg.n_heads), head=int(k % cfg.n_heads), weight=float(weights.flat[k])) for k in order]
    labels_ = [label for label, _ in named]
    parted = next((s for s, a in enumerate(per["probe"]) if s > 0 and a >= PARTED), -1)
    return Result(
        model_name=model_name(model),
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        d_model=cfg.d_model,
        word=WORD,
        word_ids=tokenizer.encode(WORD),
        other_case_ids=tokenizer.encode(WORD.title()),
        texts=texts,
        cues=cues,
        labels=labels.tolist(),
        word_positions=word,
        cue_positions=cue,
        folds=folds,
        k_folds=K_FOLDS,
        stages=labels_,
        across=per["across"],
        within=per["within"],
        gap=per["gap"],
        probe=per["probe"],
        parted_stage=labels_[parted] if parted >= 0 else "",
        max_gap_stage=labels_[int(np.argmax(per["gap"]))],
        cue_weights=weights.tolist(),
        mean_cue_weight=float(weights.mean()),
        uniform_cue_weight=float(np.mean([1.0 / (w + 1) for w in word])),
        top_heads=top,
        next=next_tokens(logits, tokenizer, word),
    )
