"""Lesson: one word, two contexts — attention makes 苹果 depend on the words around it.

The token 苹果 enters the model as one row of W_E, the same row whatever sentence it sits in. A
fixed map x -> x W can only give the same output for the same input, so the fruit and the company
can be told apart only after attention has mixed in the other tokens: z_i = sum_j a_ij x_j W_V
depends on every x_j, and the block adds it back, x_i + z_i W_O. This lesson measures that:

1. the input embedding of 苹果 in "我 吃了 苹果" and in "我 投资了 苹果" (identical);
2. the cosine similarity of the two 苹果 vectors after each layer (it starts at 1 and falls);
3. a linear probe (logistic regression) that reads fruit-or-company from the 苹果/小米/黑莓
   vector at each layer, fitted on corpus sentences and scored on the held-out sense probes;
4. the next words the model predicts after "… 苹果 ，" in each context;
5. all of it again on an untrained model of the same shape: the formula still mixes context,
   but only training makes the result useful.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from qkv.analysis.probing import probe_accuracy
from qkv.analysis.representations import (
    cosine,
    encode_examples,
    heldout_examples,
    probe_by_stage,
    sense_examples,
    stages,
    vectors_at,
)
from qkv.core import corpus
from qkv.core.models.gpt import GPT

from .training import threads

NEEDS_MODEL = True
READS = ("decoder",)  # the model families (Family.design) it reads
READS_WHY = (  # why it reads no other family (said when it refuses one)
    "it compares the next words the model predicts, and an encoder has no next-token head; "
    "real-apple is this lesson on an encoder"
)
WORD = "苹果"
SUBJECT, FRUIT_CUE, COMPANY_CUE = "我", "吃了", "投资了"
FRUIT = f"{SUBJECT} {FRUIT_CUE} {WORD}"  # 苹果 sits at the same position in both sentences
COMPANY = f"{SUBJECT} {COMPANY_CUE} {WORD}"
TOP = 3


@torch.no_grad()
def next_words(model, tokenizer, prompt: str, top: int = TOP) -> list[tuple[str, float]]:
    probs = torch.softmax(model(torch.tensor([tokenizer.encode(prompt)]))[0, -1].double(), -1)
    p, i = probs.topk(top)
    return [(tokenizer.display(int(t)), float(q)) for t, q in zip(i, p)]


@torch.no_grad()
def attention_side(model, tokenizer) -> dict:
    """What attention does at 苹果 in the two sentences, layer by layer.

    attn_cosine: the cosine between the two sentences of what the layer's attention writes into
    the residual stream at 苹果 (blocks.L.hook_attn_out = sum over heads of z_h W_O[h]).
    cue_weight["fruit"] and ["company"]: the largest weight A any head of the layer gives, from 苹果,
    to the cue word (its last token), in each sentence.
    """
    out = {"attn_cosine": {}, "cue_weight": {"fruit": {}, "company": {}}}
    traces = {}
    for sense, text, cue in (("fruit", FRUIT, FRUIT_CUE), ("company", COMPANY, COMPANY_CUE)):
        ids = tokenizer.encode(text)
        cue_pos = len(tokenizer.encode(f"{SUBJECT} {cue}")) - 1
        _, trace = model.run_with_trace(torch.tensor([ids]))
        traces[sense] = trace
        for layer in range(model.cfg.n_layers):
            out["cue_weight"][sense][f"L{layer}"] = float(trace["pattern", layer][0, :, -1, cue_pos].max())
    for layer in range(model.cfg.n_layers):
        a, b = (traces[s]["attn_out", layer][0, -1].double().numpy() for s in ("fruit", "company"))
        out["attn_cosine"][f"L{layer}"] = cosine(a, b)
    out["n_visible"] = len(tokenizer.encode(FRUIT))
    return out


def measure_one(model, tokenizer, train, test, heldout_probes) -> dict:
    """Every measurement of the lesson, for one model."""
    a, b = tokenizer.encode(FRUIT), tokenizer.encode(COMPANY)
    va = vectors_at(model, [a], [len(a) - 1])
    vb = vectors_at(model, [b], [len(b) - 1])
    cos = {label: cosine(va[name][0], vb[name][0]) for label, name in stages(model.cfg)}
    diff = float(np.abs(va["hook_embed"][0] - vb["hook_embed"][0]).max())
    return {
        "cosine": cos,
        "embed_max_abs_diff": diff,
        **attention_side(model, tokenizer),
        "probe_accuracy": probe_by_stage(model, train, test),
        "next_fruit": next_words(model, tokenizer, FRUIT + " ， "),
        "next_company": next_words(model, tokenizer, COMPANY + " ， "),
        "continuation_accuracy": probe_accuracy(model, tokenizer, heldout_probes),
    }


def untrained_like(model, seed: int = 0) -> GPT:
    """A freshly initialised GPT of the same shape (the global torch RNG is left as it was)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        fresh = GPT(model.cfg)
    return fresh.eval()


def measure(model, tokenizer, seed: int = 0) -> dict:
    """The trained model's measurements, and the same for an untrained one of its shape (untrained_*)."""
    start = time.perf_counter()
    # The model is tiny and the batches small: one intra-op thread is fastest, and on a busy
    # 2-core machine two threads waiting on each other made the lesson ten times slower.
    with threads(1):
        fresh = untrained_like(model, seed)
        train = encode_examples(tokenizer, sense_examples(seed=seed + 1))
        test = encode_examples(tokenizer, heldout_examples(seed=seed))
        heldout_probes = corpus.probes("sense", lang="zh", seed=seed)
        m = measure_one(model, tokenizer, train, test, heldout_probes)
        u = measure_one(fresh, tokenizer, train, test, heldout_probes)

    labels = list(m["cosine"])
    best = max(labels, key=lambda k: (m["probe_accuracy"][k], -labels.index(k)))
    ubest = max(labels, key=lambda k: (u["probe_accuracy"][k], -labels.index(k)))
    layers = list(m["cue_weight"]["fruit"])
    return {
        "sentences": {"fruit": FRUIT, "company": COMPANY},
        "position": len(tokenizer.encode(FRUIT)) - 1,
        "embed_cosine": m["cosine"]["embed"],
        "embed_max_abs_diff": m["embed_max_abs_diff"],
        "cosine": m["cosine"],
        "untrained_cosine": u["cosine"],
        "min_cosine_stage": min(labels, key=lambda k: m["cosine"][k]),
        "attn_out_cosine": m["attn_cosine"],
        "untrained_attn_out_cosine": u["attn_cosine"],
        "cue_weight_fruit": m["cue_weight"]["fruit"],
        "cue_weight_company": m["cue_weight"]["company"],
        "cue_layer": max(layers, key=lambda k: m["cue_weight"]["fruit"][k] + m["cue_weight"]["company"][k]),
        "untrained_cue_weight_fruit": u["cue_weight"]["fruit"],
        "untrained_cue_weight_company": u["cue_weight"]["company"],
        "untrained_max_cue_weight": max(
            max(u["cue_weight"]["fruit"].values()), max(u["cue_weight"]["company"].values())
        ),
        "n_visible": m["n_visible"],
        "probe_accuracy": m["probe_accuracy"],
        "untrained_probe_accuracy": u["probe_accuracy"],
        "best_probe_stage": best,
        "best_probe_accuracy": m["probe_accuracy"][best],
        "untrained_best_probe_stage": ubest,
        "untrained_best_probe_accuracy": u["probe_accuracy"][ubest],
        "n_probe_train": len(train[2]),
        "n_probe_test": len(test[2]),
        "top": TOP,
        "next_fruit": m["next_fruit"],
        "next_company": m["next_company"],
        "untrained_next_fruit": u["next_fruit"],
        "untrained_next_company": u["next_company"],
        "d_vocab": model.cfg.d_vocab,
        "uniform_probability": 1 / model.cfg.d_vocab,
        "n_continuation_probes": len(heldout_probes),
        "continuation_accuracy": m["continuation_accuracy"],
        "untrained_continuation_accuracy": u["continuation_accuracy"],
        "seconds": time.perf_counter() - start,
    }
