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
   but only training makes the result useful;
6. which heads carry the sense, causally (trained model only): activation patching. "我 昨天 吃了 苹果 ，"
   and "我 上周 投资了 苹果 ，" have the same length; one is run with one head's z (at every position)
   taken from the run on the other, and at the comma we measure how far the next-word distribution P
   moves: its total variation distance from the unpatched run, TV = 1/2 sum_w |P_patched(w) - P(w)|,
   and the probability on the first words of each sense's continuations in the corpus (味道, 看起来, 吃
   for the fruit; 股价, 新, 利润 for the company), as the share of the way to the other sentence's,

       share = (mass_patched - mass_run) / (mass_other - mass_run)     (0: nothing moved, 1: all the way),

   for every head alone (qkv.analysis.patch, site "z") and for all heads of a layer together (whole=True).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from qkv.analysis.patch import patch
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
from qkv.core.io.refusal import phrase
from qkv.core.machine import threads
from qkv.core.model.gpt import GPT
from qkv.core.text import corpus
from qkv.lessons.context.result import PATCH_SUMMARY, Head, Layer, Patch, PatchRun, Result

NEEDS_MODEL = True
READS = ("decoder",)  # the model families (Family.design) it reads
READS_WHY = phrase("lessons.context.reads_why")  # why it reads no other family (said when it refuses one)
WORD = "苹果"
SUBJECT, FRUIT_CUE, COMPANY_CUE = "我", "吃了", "投资了"
FRUIT = f"{SUBJECT} {FRUIT_CUE} {WORD}"  # 苹果 sits at the same position in both sentences
COMPANY = f"{SUBJECT} {COMPANY_CUE} {WORD}"
TOP = 3
# the patching pair: 5 tokens each with the bundled tokenizer (checked by patch()), the cue at position 2
PATCH = {"fruit": "我 昨天 吃了 苹果 ，", "company": "我 上周 投资了 苹果 ，"}
PATCH_CUE = {"fruit": "我 昨天 吃了", "company": "我 上周 投资了"}  # up to and with the cue verb
SENSES = ("fruit", "company")
OTHER = {"fruit": "company", "company": "fruit"}


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


def sense_words(tokenizer) -> dict[str, list[int]]:
    """For each sense, the ids of the first words of the continuations the corpus writes after 苹果 in
    that sense (lexicon: 苹果's food_tails, the shared COMPANY_TAILS), those the tokenizer has as one token."""
    from qkv.core.text.corpus import lexicon as L

    tails = {"fruit": L.AMBIGUOUS[WORD]["food_tails"], "company": L.COMPANY_TAILS}
    out = {}
    for sense in SENSES:
        ids = []
        for word in dict.fromkeys(zh.split()[0] for zh, _ in tails[sense]):
            try:
                piece = tokenizer.encode(word)
            except ValueError:  # a word this tokenizer cannot encode
                continue
            if len(piece) == 1:
                ids.append(piece[0])
        out[sense] = ids
    return out


def next_probs(logits: torch.Tensor) -> torch.Tensor:
    """P(next word) at the last position of each row: logits (B, T, d_vocab) -> (B, d_vocab), float64."""
    return torch.softmax(logits[:, -1].double(), -1)


def mass_of(ids: list[int]):
    """The metric logits -> the probability of the words `ids` at the last position, per row (B,)."""
    return lambda logits: next_probs(logits)[:, ids].sum(-1)


def moved_from(reference: torch.Tensor):
    """The metric logits -> total variation distance from the distribution `reference` (d_vocab,), per row."""
    return lambda logits: 0.5 * (next_probs(logits) - reference).abs().sum(-1)


@torch.no_grad()
def patch_lengths(tokenizer) -> dict[str, int | None]:
    """The token count of each sentence of PATCH (None: this tokenizer cannot encode it)."""
    out = {}
    for s in SENSES:
        try:
            out[s] = len(tokenizer.encode(PATCH[s]))
        except ValueError:  # a word this tokenizer does not know
            out[s] = None
    return out


def can_patch(tokenizer) -> bool:
    """Whether this tokenizer gives the two sentences the same (known) length and has a continuation word
    of each sense as one token: what sense_patching needs."""
    lengths = patch_lengths(tokenizer)
    words = sense_words(tokenizer)
    return lengths["fruit"] is not None and lengths["fruit"] == lengths["company"] and all(words.values())


@torch.no_grad()
def sense_patching(model, tokenizer) -> Patch:
    """The patching experiment (module docstring, 6.), a PatchRun for each sentence of SENSES that is run,
    with the other sentence as the donor: cue (n_layers, n_heads): each head's weight A from the comma on
    the cue verb; tv and share (n_layers, n_heads): one head patched in (share: of the mass on the
    donor's words); layer_tv and layer_share (n_layers,): all heads of a layer patched in. mass[s][w]:
    the unpatched run of s puts this mass on the words of sense w (words[w]); clean_tv: the TV between
    the two unpatched runs."""
    ids = {s: tokenizer.encode(PATCH[s]) for s in SENSES}
    words = sense_words(tokenizer)
    probs = {s: next_probs(model(torch.tensor([ids[s]])))[0] for s in SENSES}  # (d_vocab,) each
    runs = {}
    for s in SENSES:
        donor = OTHER[s]
        toward, away = mass_of(words[donor]), moved_from(probs[s])  # the donor's words gain; P moves
        cue = len(tokenizer.encode(PATCH_CUE[s])) - 1
        _, trace = model.run_with_trace(torch.tensor([ids[s]]), names=lambda n: n.endswith("hook_pattern"))
        share = patch(model, ids[donor], ids[s], "z", toward)  # clean: the donor's run; corrupted: s's
        runs[s] = PatchRun(
            cue=[trace["pattern", L][0, :, -1, cue].tolist() for L in range(model.cfg.n_layers)],
            tv=patch(model, ids[donor], ids[s], "z", away).values.tolist(),
            share=share.normalized.tolist(),
            layer_tv=patch(model, ids[donor], ids[s], "z", away, whole=True).values.tolist(),
            layer_share=patch(model, ids[donor], ids[s], "z", toward, whole=True).normalized.tolist(),
        )
    return Patch(
        words={s: [tokenizer.display(i) for i in words[s]] for s in SENSES},
        mass={s: {w: float(probs[s][words[w]].sum()) for w in SENSES} for s in SENSES},
        clean_tv=float(0.5 * (probs["fruit"] - probs["company"]).abs().sum()),
        fruit=runs["fruit"],
        company=runs["company"],
    )


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


def patch_summary(p: Patch | None) -> dict:
    """The heads and layer the text names (the fields of result.PATCH_SUMMARY), from sense_patching's
    numbers p: patch_cue_head, the head with the most weight on the cue (mean of the two sentences);
    patch_best_head, the head whose z moves the prediction furthest toward the other sense (mean share);
    with, for each, its weight on the cue and share in each sentence; patch_best_layer likewise for whole
    layers (with head_sum, its heads' single shares added up), and patch_rest_layers, the largest share
    of any other layer (either sentence). All None without p."""
    if p is None:
        return dict.fromkeys(PATCH_SUMMARY)
    runs = p.runs()
    L, H = len(p.fruit.share), len(p.fruit.share[0])
    heads = [(layer, head) for layer in range(L) for head in range(H)]
    mean = lambda table, lh: sum(table(runs[s])[lh[0]][lh[1]] for s in SENSES) / len(SENSES)

    def head(lh) -> Head:
        layer, h = lh
        return Head(
            layer=layer,
            head=h,
            cue={s: runs[s].cue[layer][h] for s in SENSES},
            share={s: runs[s].share[layer][h] for s in SENSES},
            tv={s: runs[s].tv[layer][h] for s in SENSES},
        )

    layer_mean = [sum(runs[s].layer_share[layer] for s in SENSES) / len(SENSES) for layer in range(L)]
    best_layer = max(range(L), key=lambda layer: layer_mean[layer])
    return {
        "patch_cue_head": head(max(heads, key=lambda lh: mean(lambda run: run.cue, lh))),
        "patch_best_head": head(max(heads, key=lambda lh: mean(lambda run: run.share, lh))),
        "patch_best_layer": Layer(
            layer=best_layer,
            share={s: runs[s].layer_share[best_layer] for s in SENSES},
            tv={s: runs[s].layer_tv[best_layer] for s in SENSES},
            head_sum={s: sum(runs[s].share[best_layer]) for s in SENSES},  # its heads' single shares, added
        ),
        "patch_rest_layers": max(
            runs[s].layer_share[layer] for s in SENSES for layer in range(L) if layer != best_layer
        ),
    }


def untrained_like(model, seed: int = 0) -> GPT:
    """A freshly initialised GPT of the same shape (the global torch RNG is left as it was)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        fresh = GPT(model.cfg)
    return fresh.eval()


def measure(model, tokenizer, seed: int = 0) -> Result:
    """The trained model's measurements, and the same for an untrained one of its shape (untrained_*)."""
    start = time.perf_counter()
    # The model is tiny and the batches small: one intra-op thread is fastest, and on a busy
    # 2-core machine two threads waiting on each other made the lesson ten times slower.
    with threads.fixed(1):
        fresh = untrained_like(model, seed)
        train = encode_examples(tokenizer, sense_examples(seed=seed + 1))
        test = encode_examples(tokenizer, heldout_examples(seed=seed))
        heldout_probes = corpus.probes("sense", lang="zh", seed=seed)
        m = measure_one(model, tokenizer, train, test, heldout_probes)
        u = measure_one(fresh, tokenizer, train, test, heldout_probes)
        p = sense_patching(model, tokenizer) if can_patch(tokenizer) else None

    labels = list(m["cosine"])
    best = max(labels, key=lambda k: (m["probe_accuracy"][k], -labels.index(k)))
    ubest = max(labels, key=lambda k: (u["probe_accuracy"][k], -labels.index(k)))
    layers = list(m["cue_weight"]["fruit"])
    return Result(
        sentences={"fruit": FRUIT, "company": COMPANY},
        position=len(tokenizer.encode(FRUIT)) - 1,
        embed_cosine=m["cosine"]["embed"],
        embed_max_abs_diff=m["embed_max_abs_diff"],
        cosine=m["cosine"],
        untrained_cosine=u["cosine"],
        min_cosine_stage=min(labels, key=lambda k: m["cosine"][k]),
        attn_out_cosine=m["attn_cosine"],
        untrained_attn_out_cosine=u["attn_cosine"],
        cue_weight_fruit=m["cue_weight"]["fruit"],
        cue_weight_company=m["cue_weight"]["company"],
        cue_layer=max(layers, key=lambda k: m["cue_weight"]["fruit"][k] + m["cue_weight"]["company"][k]),
        untrained_cue_weight_fruit=u["cue_weight"]["fruit"],
        untrained_cue_weight_company=u["cue_weight"]["company"],
        untrained_max_cue_weight=max(max(u["cue_weight"]["fruit"].values()), max(u["cue_weight"]["company"].values())),
        n_visible=m["n_visible"],
        probe_accuracy=m["probe_accuracy"],
        untrained_probe_accuracy=u["probe_accuracy"],
        best_probe_stage=best,
        best_probe_accuracy=m["probe_accuracy"][best],
        untrained_best_probe_stage=ubest,
        untrained_best_probe_accuracy=u["probe_accuracy"][ubest],
        n_probe_train=len(train[2]),
        n_probe_test=len(test[2]),
        top=TOP,
        next_fruit=m["next_fruit"],
        next_company=m["next_company"],
        untrained_next_fruit=u["next_fruit"],
        untrained_next_company=u["next_company"],
        d_vocab=model.cfg.d_vocab,
        uniform_probability=1 / model.cfg.d_vocab,
        n_continuation_probes=len(heldout_probes),
        continuation_accuracy=m["continuation_accuracy"],
        untrained_continuation_accuracy=u["continuation_accuracy"],
        patch_sentences=dict(PATCH),
        patch_lengths=patch_lengths(tokenizer),
        patch=p,
        **patch_summary(p),
        seconds=time.perf_counter() - start,
    )
