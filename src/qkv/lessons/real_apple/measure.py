"""Lesson: the word apple, fruit or company, inside a real pretrained encoder (all-MiniLM-L6-v2).

    embedding output   x(apple) = LN(W_E[apple] + W_pos[p] + W_type[0])   only the position p varies
    after block L      x_L(apple): attention has mixed in the other tokens of the sentence

The tokenizer lower-cases, so "Apple" (the company) and "apple" (the fruit) are one token. For the
apple token of FRUIT and COMPANY frames, at the embedding output and after each block, the lesson
measures

1. cosines: the mean cos(a, b) over pairs of a fruit frame and a company frame ("across"), and over
   pairs of frames of the same sense ("within"); gap = within − across;
2. a linear probe's accuracy for the sense on frames it was not fitted on: ridge least squares on
   standardised vectors, K folds, each frame predicted once, by the probe fitted on the other folds;

for the pretrained weights, for the same architecture with random weights (BERT's initialisation,
seeded) and for MiniLM with the entries of every weight matrix shuffled (seeded).

apple stands at the same positions, as often, in the fruit and the company frames, and a fold holds
pairs (fruit frame, company frame) with apple at the same position: position alone tells the probe
nothing, and at the embedding output (where only position varies) its accuracy is exactly 1/2.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from qkv.lessons.common.real import model_name
from qkv.lessons.real_apple.result import Result

NEEDS_MODEL = "minilm"  # run() loads MiniLM, or the BERT-family encoder --ckpt names
READS = ("encoder",)  # the model families (Family.design) it reads
WORD = "apple"
K_FOLDS = 4
RIDGE = 10.0  # λ of the probe's ridge penalty, on standardised vectors
INIT_STD = 0.02  # BERT's initialisation: weights N(0, 0.02²), biases 0, LayerNorm scale 1 and shift 0
MODELS = ("pretrained", "random", "shuffled")

FRUIT = (
    "I ate an apple after lunch.",
    "She cut the apple into thin slices.",
    "He picked a ripe apple from the tree.",
    "The apple in my bag was bruised.",
    "My grandmother baked an apple pie on Sunday.",
    "A green apple is more sour than a red one.",
    "The children shared one apple between them.",
    "He threw the apple core into the compost.",
    "This apple tastes sweet and crunchy.",
    "She peeled an apple with a small knife.",
    "The horse happily munched an apple.",
    "Put the apple in the fruit bowl.",
    "A worm had eaten through the apple.",
    "Apple sauce goes well with roast pork.",
    "The apple fell from the branch onto the grass.",
    "We pressed apple juice at the farm.",
    "He packed an apple and a sandwich for school.",
    "The teacher found an apple on her desk.",
    "One apple a day keeps the doctor away.",
    "The apple was too hard to bite.",
    "She washed the apple under cold water.",
    "An apple rolled off the kitchen table.",
    "I bought a bag of apple slices for the trip.",
    "The smoothie had banana, apple and spinach.",
    "He grated an apple into the porridge.",
    "Apple slices turn brown after an hour.",
    "My dog likes to chew on an apple.",
    "She chose a shiny apple at the market.",
    "Apple crumble came out of the oven.",
    "Cinnamon goes well with baked apple.",
    "A single apple hung on the bare tree.",
    "He cored the apple and filled it with raisins.",
    "The salad was topped with chopped apple and walnuts.",
    "I left half an apple in the fridge.",
    "Apple skin can taste bitter and waxy.",
    "Birds pecked at the fallen apple.",
    "She traded her apple for a pear.",
    "Caramel apple is a favourite at the fair.",
    "Apple seeds are small, dark and bitter.",
    "Apple blossoms cover the orchard in spring.",
    "He polished the apple on his sleeve before eating it.",
    "This apple is juicy and fresh.",
    "The farmer sold every apple he harvested.",
    "Apple trees need a cold winter to bear fruit.",
)
COMPANY = (
    "I bought Apple shares last year.",
    "On Tuesday morning, Apple announced a new phone.",
    "She works as an engineer at Apple.",
    "Yesterday Apple reported record profits.",
    "The lawsuit against Apple was dismissed.",
    "Investors expect Apple to raise its dividend.",
    "Recently Apple opened a new store downtown.",
    "He sold his Apple stock before the crash.",
    "The new app was rejected by Apple for privacy reasons.",
    "Apple released a software update for its laptops.",
    "Analysts downgraded Apple after weak sales.",
    "My brother got a job offer from Apple.",
    "Today Apple competes with Samsung in phones.",
    "The chip was designed by Apple in California.",
    "In the end, Apple paid a large fine in Europe.",
    "The CEO of Apple spoke at the conference.",
    "Reportedly Apple acquired a small music startup.",
    "Shares of Apple fell three percent today.",
    "Apple is one of the most valuable companies in the world.",
    "The new Apple watch tracks your heart rate.",
    "Lately Apple hired hundreds of engineers.",
    "Regulators are investigating Apple over app store fees.",
    "She bought a laptop from the Apple store.",
    "Famously Apple sued a rival over a patent.",
    "Everyone knows that Apple stock hit an all-time high.",
    "The supplier signed a contract with Apple.",
    "As usual, Apple will hold its developer conference in June.",
    "He has worked for Apple for ten years.",
    "To boost sales, Apple cut the price of its tablet.",
    "Like its rivals, Apple launched a streaming service.",
    "The market value of Apple passed three trillion dollars.",
    "After the tariffs, Apple moved some production to India.",
    "The board of Apple approved a share buyback.",
    "Apple designs its phones but others assemble them.",
    "Fans lined up outside the Apple store at dawn.",
    "According to reports, Apple delayed the launch of its headset.",
    "Our fund holds a stake in Apple.",
    "Apple makes most of its money from the iPhone.",
    "The founders started Apple in a garage.",
    "Apple earnings beat expectations again.",
    "A former Apple executive joined the startup.",
    "Apple updated its privacy policy.",
    "The Apple keynote revealed three new products.",
    "Apple and Google dominate the smartphone market.",
)


def frames() -> tuple[list[str], np.ndarray]:
    """The frames, fruit first, and their labels (0 fruit, 1 company)."""
    return list(FRUIT) + list(COMPANY), np.array([0.0] * len(FRUIT) + [1.0] * len(COMPANY))


def word_positions(tokenizer, texts) -> tuple[int, list[list[int]], list[int]]:
    """(the id of WORD, each text's ids, the position of WORD in each); a one-line error when WORD is
    not one token of this vocabulary or a text does not hold it exactly once."""
    word = tokenizer.encode(WORD)
    word = [i for i in word if i not in getattr(tokenizer, "special", ())]
    if len(word) != 1:
        raise ValueError(f"this lesson needs {WORD!r} to be one token; this tokenizer splits it into {len(word)}")
    ids = [tokenizer.encode(t) for t in texts]
    for text, x in zip(texts, ids):
        if x.count(word[0]) != 1:
            raise ValueError(f"the frame {text!r} does not hold the token {WORD!r} exactly once")
    return word[0], ids, [x.index(word[0]) for x in ids]


def position_folds(positions: list[int], labels: np.ndarray, k: int = K_FOLDS, seed: int = 0) -> list[list[int]]:
    """K lists of frame indices (the test frames of each fold): fruit and company frames are paired by
    the position of the word, and each pair goes to one fold whole (pairs dealt in a seeded order)."""
    fruit = sorted((i for i in range(len(labels)) if labels[i] == 0), key=lambda i: (positions[i], i))
    company = sorted((i for i in range(len(labels)) if labels[i] == 1), key=lambda i: (positions[i], i))
    pairs = list(zip(fruit, company))
    if len(fruit) != len(company) or any(positions[a] != positions[b] for a, b in pairs):
        raise ValueError("the fruit and company frames must hold the word at the same positions, equally often")
    order = np.random.default_rng(seed).permutation(len(pairs))
    return [sorted(i for p in order[f::k] for i in pairs[p]) for f in range(k)]


def stages(cfg) -> list[tuple[str, str]]:
    """(label, activation) for the embedding output and each block's output."""
    return [("embed", "blocks.0.hook_resid_pre")] + [
        (f"L{L}", f"blocks.{L}.hook_resid_post") for L in range(cfg.n_layers)
    ]


@torch.no_grad()
def word_vectors(model, ids: list[list[int]], positions: list[int], pad_id: int = 0) -> dict[str, np.ndarray]:
    """stage label -> (N, d_model): the vector at positions[i] of sentence i (a padded batch, masked)."""
    from qkv.core.model.encoder import pad_batch

    batch, mask = pad_batch(ids, pad_id)  # (N, T_max) each
    named = stages(model.cfg)
    _, trace = model.run_with_trace(batch, names=[name for _, name in named], attention_mask=mask)
    rows, pos = torch.arange(len(ids)), torch.tensor(positions)
    return {label: trace[name][rows, pos].double().numpy() for label, name in named}


def cosines(X: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Mean cosine across the senses (every fruit-company pair) and within each (pairs i < j)."""
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    C = U @ U.T  # (N, N)
    f, c = labels == 0, labels == 1
    within = lambda m: float(C[np.ix_(m, m)][np.triu_indices(int(m.sum()), 1)].mean())
    out = {"across": float(C[np.ix_(f, c)].mean()), "within_fruit": within(f), "within_company": within(c)}
    out["within"] = (out["within_fruit"] + out["within_company"]) / 2
    out["gap"] = out["within"] - out["across"]
    return out


def ridge_probe(X: np.ndarray, y: np.ndarray, ridge: float = RIDGE):
    """Least squares with a ridge penalty on standardised vectors, targets ±1:
    w = Zᵀ(Z Zᵀ + λI)⁻¹(t − mean t) (the dual form: fewer frames than coordinates). Returns predict(X) -> bool."""
    mu, sd = X.mean(0), X.std(0) + 1e-8
    Z = (X - mu) / sd  # (n, d)
    t = 2.0 * y - 1.0
    b = t.mean()
    w = Z.T @ np.linalg.solve(Z @ Z.T + ridge * np.eye(len(Z)), t - b)  # (d,)
    return lambda Xt: ((Xt - mu) / sd) @ w + b > 0


def probe_accuracy(X: np.ndarray, y: np.ndarray, folds: list[list[int]], fit=ridge_probe) -> float:
    """The share of frames whose sense the probe fitted on the other folds gets right."""
    correct = 0
    for test in folds:
        train = np.setdiff1d(np.arange(len(y)), test)
        predict = fit(X[train], y[train])
        correct += int((predict(X[test]) == y[test].astype(bool)).sum())
    return correct / len(y)


def random_encoder(cfg, seed: int = 0):
    """The same architecture, freshly initialised as BERT is: weights N(0, INIT_STD²), biases 0,
    LayerNorm scale 1 and shift 0 (a seeded generator; the global random state is left alone)."""
    from qkv.core.model.encoder import Encoder
    from qkv.core.model.nn.layernorm import LayerNorm

    g = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        model = Encoder(cfg)
    with torch.no_grad():
        for module in model.modules():
            for name, p in module.named_parameters(recurse=False):
                if isinstance(module, LayerNorm):
                    p.fill_(1.0 if name == "weight" else 0.0)
                elif name == "bias":
                    p.zero_()
                else:
                    p.normal_(0.0, INIT_STD, generator=g)
    return model.eval()


def shuffled_copy(model, seed: int = 0):
    """A copy whose every weight matrix (each 2-D parameter: embeddings, W_QKV, W_O, the MLP's) holds
    the same entries in a random order; biases and LayerNorm parameters stay as they are."""
    g = torch.Generator().manual_seed(seed)
    out = copy.deepcopy(model)
    with torch.no_grad():
        for p in out.parameters():
            if p.dim() == 2:
                p.copy_(p.flatten()[torch.randperm(p.numel(), generator=g)].view_as(p))
    return out.eval()


def by_stage(model, ids, positions, labels, folds, pad_id) -> dict:
    """Cosines and probe accuracy at every stage: key -> list over stages."""
    vectors = word_vectors(model, ids, positions, pad_id)
    cos = {label: cosines(X, labels) for label, X in vectors.items()}
    out = {key: [cos[s][key] for s in vectors] for key in ("across", "within", "within_fruit", "within_company", "gap")}
    out["probe"] = [probe_accuracy(X, labels, folds) for X in vectors.values()]
    return out


def summary(m: dict, labels: list[str]) -> dict:
    """The numbers the text names for one model: best probe stage, largest gap, the extremes."""
    best = int(np.argmax(m["probe"]))
    big = int(np.argmax(m["gap"]))
    blocks = slice(1, None)  # the stages after the embedding output
    return {
        "best_probe": m["probe"][best],
        "best_probe_stage": labels[best],
        "max_gap": m["gap"][big],
        "max_gap_stage": labels[big],
        "min_block_gap": float(min(m["gap"][blocks])),
        "max_abs_gap": float(np.abs(m["gap"]).max()),
        "min_cosine": float(min(m["across"] + m["within"])),
        "min_block_probe": float(min(m["probe"][blocks])),
    }


def measure(model, tokenizer, seed: int = 0) -> Result:
    """The cosines and probes of every stage, for the model and its random and shuffled twins (counted into
    plain dicts by the names of Result's fields, which become the result here)."""
    texts, labels = frames()
    word_id, ids, positions = word_positions(tokenizer, texts)
    folds = position_folds(positions, labels, K_FOLDS, seed)
    pad = getattr(tokenizer, "pad_id", 0)
    models = {"pretrained": model, "random": random_encoder(model.cfg, seed), "shuffled": shuffled_copy(model, seed)}
    stage_labels = [label for label, _ in stages(model.cfg)]
    per_model = {}
    for name, m in models.items():
        per_model[name] = by_stage(m, ids, positions, labels, folds, pad)
        per_model[name].update(summary(per_model[name], stage_labels))
    counts = np.bincount([p for p, y in zip(positions, labels) if y == 0])
    return Result.from_numbers(
        {
            "word": WORD,
            "token_id": int(word_id),
            "pieces": tokenizer.pieces(COMPANY[0]) if hasattr(tokenizer, "pieces") else [],
            "n_fruit": len(FRUIT),
            "n_company": len(COMPANY),
            "examples": {"fruit": FRUIT[0], "company": COMPANY[0]},
            "frames": texts,
            "labels": labels.tolist(),
            "positions": positions,
            "position_counts": {str(p): int(c) for p, c in enumerate(counts) if c},
            "folds": folds,
            "k_folds": K_FOLDS,
            "ridge": RIDGE,
            "init_std": INIT_STD,
            "seed": seed,
            "stages": stage_labels,
            "models": per_model,
            "d_model": model.cfg.d_model,
            "n_layers": model.cfg.n_layers,
            "n_heads": model.cfg.n_heads,
            "model_name": model_name(model),
        }
    )
