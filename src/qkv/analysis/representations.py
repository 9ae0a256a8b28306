"""A word's representation, layer by layer, and a linear probe that reads its sense from it.

`stages` names the points of the residual stream to read, `vectors_at` collects the vectors of
given positions there, and `probe_by_stage` fits a logistic regression (fruit or company) on
corpus sentences and scores it on the held-out sense probes at every stage.
"""

from __future__ import annotations

import numpy as np
import torch

from qkv.core.text import corpus
from qkv.core.text.corpus import lexicon as L

PROBE_SENTENCES = 1500  # corpus sentences drawn to fit the linear probe (about 450 use an ambiguous word)
L2 = 1e-2  # ridge penalty of the probe, on standardised features

_FOOD_TAILS = {t[0] for info in L.AMBIGUOUS.values() for t in info["food_tails"]}
_COMPANY_TAILS = {t[0] for t in L.COMPANY_TAILS}


# ---------------------------------------------------------------------------
# Where to read the residual stream
# ---------------------------------------------------------------------------


def stages(cfg) -> list[tuple[str, str]]:
    """(label, activation name) from the token embedding to the output of the last block.

    hook_embed is the row of W_E alone; blocks.0.hook_resid_pre adds the position (when the
    model has a position vector); blocks.L.hook_resid_pre is the input of block L; the last
    entry is what the final block writes, before ln_final and the unembedding.
    """
    out = [("embed", "hook_embed")]
    out += [(f"L{layer} in", f"blocks.{layer}.hook_resid_pre") for layer in range(cfg.n_layers)]
    out.append((f"L{cfg.n_layers - 1} out", f"blocks.{cfg.n_layers - 1}.hook_resid_post"))
    return out


@torch.no_grad()
def vectors_at(model, id_lists: list[list[int]], positions: list[int]) -> dict[str, np.ndarray]:
    """The residual-stream vector at positions[i] of sequence i, at every stage: name -> (N, d_model).

    Sequences are padded on the right: with causal attention a position never sees what comes
    after it, so the padding changes nothing that is read.
    """
    names = [name for _, name in stages(model.cfg)]
    T = max(len(ids) for ids in id_lists)
    batch = torch.zeros(len(id_lists), T, dtype=torch.long)
    for i, ids in enumerate(id_lists):
        batch[i, : len(ids)] = torch.tensor(ids)
    _, trace = model.run_with_trace(batch, names=names)
    rows = torch.arange(len(id_lists))
    pos = torch.tensor(positions)
    return {name: trace[name][rows, pos].double().numpy() for name in names}


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# ---------------------------------------------------------------------------
# The linear probe: logistic regression on one stage's vectors
# ---------------------------------------------------------------------------


def sense_examples(seed: int = 0, n_sentences: int = PROBE_SENTENCES) -> list[tuple[str, bool]]:
    """(the sentence up to and including the ambiguous word, is_company) from corpus text.

    Only sense sentences are kept ("… 苹果 ， tail 。"); the label is the sense its tail belongs
    to (股价 上涨了 is about a company, 味道 很 甜 about a fruit).
    """
    out = []
    for line in corpus.generate(seed=seed, n_sentences=n_sentences, lang="zh").splitlines():
        words = line.split()
        for i, w in enumerate(words[:-2]):
            if w in L.AMBIGUOUS and words[i + 1] == "，":
                tail = " ".join(words[i + 2 : -1])
                if tail in _FOOD_TAILS or tail in _COMPANY_TAILS:
                    out.append((" ".join(words[: i + 1]), tail in _COMPANY_TAILS))
                break
    return out


def heldout_examples(seed: int = 0) -> list[tuple[str, bool]]:
    """The held-out sense probes (frames the corpus never uses), cut right after the ambiguous
    word; the label is the sense of the expected continuation."""
    out = []
    for p in corpus.probes("sense", lang="zh", seed=seed):
        words = p.prompt.split()
        assert words[-1] == "，" and words[-2] in L.AMBIGUOUS, p.prompt
        out.append((" ".join(words[:-1]), p.expected in _COMPANY_TAILS))
    return out


def fit_probe(X: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 50):
    """Logistic regression P(company | x) = sigmoid(w·x' + b) on standardised x' = (x - mu) / sd,
    minimising the mean cross-entropy + l2/2 |w|^2 by Newton's method (the loss is convex and
    the ridge term makes the Hessian positive definite). Returns a predict function.

    The algebra runs in torch (float64) rather than numpy: on a busy 2-core machine OpenBLAS's
    own thread pool made each small solve take a tenth of a second."""
    X, y = torch.from_numpy(X), torch.from_numpy(y).double()
    mu, sd = X.mean(0), X.std(0, unbiased=False) + 1e-8
    with_bias = lambda A: torch.cat([(A - mu) / sd, torch.ones(len(A), 1, dtype=A.dtype)], 1)
    Z = with_bias(X)  # (N, d_model + 1): the last column carries b
    n, d = Z.shape
    ridge = torch.full((d,), l2, dtype=torch.float64)
    ridge[-1] = 0.0  # the bias is not penalised
    theta = torch.zeros(d, dtype=torch.float64)
    for _ in range(steps):
        p = torch.sigmoid(Z @ theta)
        grad = Z.T @ (p - y) / n + ridge * theta
        hess = (Z.T * (p * (1 - p))) @ Z / n + torch.diag(ridge) + 1e-10 * torch.eye(d, dtype=torch.float64)
        step = torch.linalg.solve(hess, grad)
        theta -= step
        if step.abs().max() < 1e-9:
            break
    return lambda Xt: (with_bias(torch.from_numpy(Xt)) @ theta > 0).numpy()


def encode_examples(tokenizer, examples):
    ids = [tokenizer.encode(text) for text, _ in examples]
    return ids, [len(x) - 1 for x in ids], np.array([label for _, label in examples], dtype=float)


def probe_by_stage(model, train, test) -> dict[str, float]:
    """Held-out accuracy of a probe fitted at each stage."""
    tr, te = vectors_at(model, *train[:2]), vectors_at(model, *test[:2])
    acc = {}
    for label, name in stages(model.cfg):
        predict = fit_probe(tr[name], train[2])
        acc[label] = float(np.mean(predict(te[name]) == test[2].astype(bool)))
    return acc
