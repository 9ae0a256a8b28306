"""A cloud of word vectors before and after one head's map x ↦ x W_Q (or W_K, W_V).

Which vector stands for a word: the vector the head itself reads when the text is that word alone,
i.e. the input of block L's attention (pre-norm: LN1 of the residual stream, blocks.L.ln1.hook_out;
post-norm or no norm: blocks.L.hook_resid_pre). In block 0 of a GPT that is LN1(W_E[word] + P[0]), the
embedding row plus the position-0 vector, normalised; in later blocks the word has also read itself
through the blocks below. A tokenizer that adds special tokens ([CLS] … [SEP]) gets them, and the
word's own position is read. Words that are not exactly one token of the vocabulary are left out.

    after = x W          the linear map alone; the bias b is one shift of the whole cloud and changes
                         no distance between words (q = x W_Q + b_Q is what the trace records)

How far apart the groups are, measured the same way before and after (`separation`):
    ratio     mean distance between group centroids / mean distance of a word to its own group's
              centroid (scale-free: multiplying all vectors by one number leaves it unchanged)
    accuracy  leave-one-out nearest centroid: the share of words whose nearest centroid, computed
              without them, is their own group's
Both in the full space (d_model before, d_head after) and in the 2-D picture (the top two principal
components, `pca2`), since a picture can hide or invent what the full space has.
"""

from __future__ import annotations

import numpy as np
import torch

from qkv.analysis.origin import attention_input_name
from qkv.analysis.transform import attention_module, head_biases, head_matrices
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.see.indices import check_layer_head
from qkv.core.see.trace import run_with_trace

# unambiguous members of each group, as the built-in corpus uses them; 苹果, 小米 and 黑莓 are both a
# fruit (a grain, a berry) and a company there, so they are shown apart, in no group
GROUPS = {
    "fruit": ("香蕉", "梨", "葡萄", "桃子", "西瓜", "草莓", "橘子"),
    "company": ("腾讯", "联想", "华为", "百度"),
    "energy": ("原子能", "太阳能", "风能", "水能", "煤炭", "天然气"),
}
AMBIGUOUS = ("苹果", "小米", "黑莓")
PROJECTIONS = {"q": "W_Q", "k": "W_K", "v": "W_V"}


def _one_token(tokenizer, word: str) -> tuple[list[int], int] | None:
    """(ids of the word alone, the position of its one token), or None when it is not one token."""
    try:
        ids = tokenizer.encode(word)
    except ValueError:
        return None
    special = set(getattr(tokenizer, "special", None) or ())
    own = [i for i, t in enumerate(ids) if t not in special]
    return (ids, own[0]) if len(own) == 1 else None


@torch.no_grad()
def word_inputs(model, tokenizer, words, layer: int) -> tuple[list[str], torch.Tensor, torch.Tensor]:
    """(the words kept, x (n, d_model) float64, the trace's q, k, v (3, n, n_heads, d_head)) for each word
    alone as a text; see the module docstring for which vector."""
    attention_module(model, layer)
    found = [(w, _one_token(tokenizer, w)) for w in words]
    found = [(w, f) for w, f in found if f is not None]
    if not found:
        return (
            [],
            torch.zeros(0, model.cfg.d_model, dtype=torch.float64),
            torch.zeros(3, 0, model.cfg.n_heads, model.cfg.d_head),
        )
    kept, rows = [], []
    by_len: dict[int, list] = {}
    for w, (ids, pos) in found:
        by_len.setdefault(len(ids), []).append((w, ids, pos))
    name = attention_input_name(model.cfg, layer)
    hooks = [f"blocks.{layer}.attn.hook_{p}" for p in PROJECTIONS]
    qkv_rows = []
    for group in by_len.values():  # texts of one length make one batch
        ids = torch.tensor([ids for _, ids, _ in group])  # (n, T)
        _, trace = run_with_trace(model, ids, [name, *hooks])
        at = torch.arange(len(group)), torch.tensor([pos for *_, pos in group])
        kept += [w for w, *_ in group]
        rows.append(trace[name][at].double())  # (n, d_model)
        # (3, n, n_heads, d_head): the shorthand gives each query head its key/value head (grouped-query attention)
        qkv_rows.append(torch.stack([trace[p, layer][at].double() for p in PROJECTIONS]))
        del trace  # its reservation goes back before the next group's pass takes its own
    order = sorted(range(len(kept)), key=lambda i: words.index(kept[i]))
    return [kept[i] for i in order], torch.cat(rows)[order], torch.cat(qkv_rows, dim=1)[:, order]


def _named(by_index: dict[str, str], words) -> dict[str, str]:
    return {words[int(i)]: g for i, g in by_index.items()}


def pca2(X) -> dict:
    """The top two principal components of the rows of X: coords = (X − mean) C ᵀ, C (2, d) orthonormal rows.
    Each component's sign is fixed so that its largest entry (in absolute value) is positive."""
    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(0)
    _, s, Vh = np.linalg.svd(X - mean, full_matrices=False)
    C = Vh[:2].copy()
    if C.shape[0] < 2:
        C = np.vstack([C, np.zeros((2 - C.shape[0], X.shape[1]))])
    for row in C:
        if row[np.argmax(np.abs(row))] < 0:
            row *= -1
    var = s**2
    return {
        "coords": (X - mean) @ C.T,
        "components": C,
        "mean": mean,
        "explained": [float(v) for v in (var[:2] / var.sum() if var.sum() > 0 else np.zeros(2))],
    }


def separation(X, labels) -> dict:
    """ratio (between / within) and leave-one-out nearest-centroid accuracy of the labelled rows of X."""
    X, labels = np.asarray(X, dtype=np.float64), np.asarray(labels)
    groups = sorted(set(labels.tolist()))
    cent = {g: X[labels == g].mean(0) for g in groups}
    within = float(np.mean([np.linalg.norm(X[i] - cent[labels[i]]) for i in range(len(X))]))
    between = float(np.mean([np.linalg.norm(cent[a] - cent[b]) for i, a in enumerate(groups) for b in groups[i + 1 :]]))
    right = 0
    for i in range(len(X)):
        rest = np.arange(len(X)) != i
        dist = {
            g: np.linalg.norm(X[i] - X[rest & (labels == g)].mean(0)) for g in groups if (rest & (labels == g)).any()
        }
        right += min(dist, key=dist.get) == labels[i]
    return {
        "ratio": between / within if within > 0 else float("inf"),
        "accuracy": right / len(X),
        "between": between,
        "within": within,
    }


def kept_share(X, W) -> float:
    """The share of the centred cloud's variance inside the d_head input directions W reads (the
    columns of U in W = U Σ Vᵀ): ‖X_c U‖² / ‖X_c‖². A random d_head-dimensional subspace keeps d_head/d_model."""
    Xc = np.asarray(X, dtype=np.float64) - np.asarray(X, dtype=np.float64).mean(0)
    U = np.linalg.svd(np.asarray(W, dtype=np.float64), full_matrices=False)[0]  # (d_in, r)
    with np.errstate(invalid="ignore", over="ignore"):  # an overflowing model's cloud: NaN, written null
        return float(np.sum((Xc @ U) ** 2) / np.sum(Xc**2))


def nearest_groups(X, labels) -> dict[str, str]:
    """For each row labelled "ambiguous": the group whose centroid (of the other rows) is nearest, by index."""
    X, labels = np.asarray(X, dtype=np.float64), np.asarray(labels)
    groups = [g for g in dict.fromkeys(labels.tolist()) if g != "ambiguous"]
    cent = np.stack([X[labels == g].mean(0) for g in groups])
    return {
        str(i): groups[int(np.argmin(np.linalg.norm(cent - X[i], axis=1)))]
        for i in np.flatnonzero(labels == "ambiguous")
    }


def word_cloud(model, tokenizer, layer: int, head: int, groups=None, ambiguous=AMBIGUOUS) -> dict:
    """The cloud of `groups` (name -> words; default GROUPS) and the `ambiguous` words, before and after
    x W_Q, x W_K, x W_V of one head: 2-D pictures and separations (a plain dict, JSON-able)."""
    layer, head = check_layer_head(model.cfg, layer, head)
    groups = GROUPS if groups is None else groups
    wanted = [w for ws in groups.values() for w in ws] + [
        w for w in ambiguous if not any(w in ws for ws in groups.values())
    ]
    words, X, qkv = word_inputs(model, tokenizer, wanted, layer)
    group_of = {w: g for g, ws in groups.items() for w in ws}
    labels = [group_of.get(w, "ambiguous") for w in words]
    member = np.array([lab != "ambiguous" for lab in labels])
    present = sorted({lab for lab in labels if lab != "ambiguous"}, key=list(groups).index)
    if len(present) < 2 or any(sum(lab == g for lab in labels) < 2 for g in present):
        raise Refusal.of("errors.cloud_words", found=list(words) or phrase("errors.none"))
    mats, biases = head_matrices(model, layer, head), head_biases(model, layer, head)
    Xn = X.numpy()
    lab = np.array(labels)
    out = {
        "layer": layer,
        "head": head,
        "input": attention_input_name(model.cfg, layer),
        "words": words,
        "labels": labels,
        "groups": present,
        "d_model": model.cfg.d_model,
        "d_head": model.cfg.d_head,
    }
    before = pca2(Xn)
    out["before"] = {
        "points": before["coords"].tolist(),
        "explained": before["explained"],
        "separation": separation(Xn[member], lab[member]),
        "separation_2d": separation(before["coords"][member], lab[member]),
        "nearest": _named(nearest_groups(Xn, lab), words),
    }
    for i, (p, W_name) in enumerate(PROJECTIONS.items()):
        after = Xn @ mats[W_name].numpy()  # (n, d_head): x W, no bias
        pic = pca2(after)
        traced = qkv[i, :, head].numpy() - biases["b_" + p.upper()].numpy()  # the trace's q − b_Q
        out[p] = {
            "points": pic["coords"].tolist(),
            "explained": pic["explained"],
            "separation": separation(after[member], lab[member]),
            "separation_2d": separation(pic["coords"][member], lab[member]),
            "nearest": _named(nearest_groups(after, lab), words),
            "kept_share": kept_share(Xn[member], mats[W_name].numpy()),
            "trace_max_diff": float(np.abs(after - traced).max()),
        }
    out["random_share"] = model.cfg.d_head / model.cfg.d_model
    return out
