"""Token embeddings, drawn: each token is a row of W_E (d_model numbers); tokens used alike end up
pointing alike. The map projects the rows onto their two main directions (PCA); the lines join each
token to its nearest neighbours by cosine similarity measured in all d_model dimensions, so a line
between two far-apart points shows what the 2-D projection hides.

When the map shows one of the built-in corpus's two-sense words (苹果, 小米, 黑莓 and their English
spellings, core.corpus.lexicon.AMBIGUOUS) for a model qkv trained, a caption says why such a word need
not sit with the fruits: the corpus's sense sentences use it as a food and as a company, and its one
row of W_E is trained by both.
"""

from __future__ import annotations

import numpy as np

from qkv.core.see.hull import pca_2d
from qkv.core.text.corpus.lexicon import AMBIGUOUS
from qkv.presentation.figures import caption, check_path, new_figure, save
from qkv.presentation.i18n import lang_of, translator

DEFAULT_COUNT = 60
# a pretrained WordPiece vocabulary starts with [PAD], [unused0..] and punctuation: show words instead
DEFAULT_WORDS = (
    "king queen man woman boy girl father mother apple banana orange grape fruit bread milk "
    "paris london tokyo china france japan city river one two three four five red green blue "
    "cat dog horse bird fish run walk swim eat drink happy sad good bad big small car bus train"
).split()


def _embeddings(model, tokenizer) -> np.ndarray:
    """W_E's rows for the tokenizer's tokens: (vocab_size, d_model)."""
    W_E = model.embed.weight.detach().float().cpu().numpy()
    return W_E[: tokenizer.vocab_size]


def token_id(tokenizer, text) -> int:
    """The id of a single token, given as its text (or its display form, e.g. ␣ or \\n); ValueError otherwise."""
    if isinstance(text, (int, np.integer)):
        return tokenizer._check_id(text)
    try:
        ids = tokenizer.encode(text) if text else []
    except ValueError:
        ids = []
    if len(ids) == 1:
        return ids[0]
    for i in range(tokenizer.vocab_size):  # the display form, as figures label tokens
        if tokenizer.display(i) == text:
            return i
    what = f"it encodes to {len(ids)} tokens" if ids else "it is not in the vocabulary"
    raise ValueError(f"{text!r} is not a single token of this tokenizer: {what}")


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Each row divided by its length (a zero row stays zero)."""
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    """cos(a, b) = a·b / (|a| |b|) for every pair of rows."""
    unit = _unit(vectors)
    return unit @ unit.T


def nearest_neighbours(model, tokenizer, token_text, k: int = 5) -> list[tuple[str, float]]:
    """The k tokens whose embeddings have the largest cosine similarity with this token's."""
    i = token_id(tokenizer, token_text)
    unit = _unit(_embeddings(model, tokenizer))
    cos = unit @ unit[i]  # (vocab_size,)
    cos[i] = -np.inf  # not itself
    order = np.argsort(-cos, kind="stable")[: max(0, min(k, len(cos) - 1))]
    return [(tokenizer.display(int(j)), float(cos[j])) for j in order]


def pca_map(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates on the two main directions of the rows (geometry.pca_2d), and the share of the
    total variance each direction carries: var(coordinate) / Σ var(X's columns)."""
    coords, _, _ = pca_2d(X)  # (n, 2)
    total = max(float(X.var(axis=0).sum()), 1e-30)
    return coords, coords.var(axis=0) / total


def default_ids(tokenizer) -> list[int]:
    """The tokens the map shows when none are asked for (see embedding_map)."""
    if tokenizer.kind == "wordpiece":
        return [i for i in (tokenizer.hf.token_to_id(w) for w in DEFAULT_WORDS) if i is not None]
    return list(range(min(DEFAULT_COUNT, tokenizer.vocab_size)))


# the two-sense words of the built-in corpus, as its Chinese and English sentences write them
TWO_SENSES = tuple(
    dict.fromkeys([*AMBIGUOUS, *(e[key] for e in AMBIGUOUS.values() for key in ("en_food", "en_company"))])
)


def two_sense_words(model, shown: list[str]) -> list[str]:
    """The built-in corpus's two-sense words among the tokens shown, for a model qkv trained (a pretrained
    model learned its words from other text: the corpus says nothing about it)."""
    if getattr(model, "loaded_from", None) is not None:
        return []
    return [w for w in TWO_SENSES if w in shown]


def embedding_map(model, tokenizer, path, tokens=None, k: int = 3, lang: str | None = None):
    """PCA map of the chosen tokens' embeddings, each joined to its k nearest (cosine) among them.

    tokens: token texts or ids; default the first 60 ids (all when fewer), or for a WordPiece
    vocabulary (a pretrained model's) the everyday words of DEFAULT_WORDS it holds."""
    lang = lang_of(lang)  # None: the language qkv speaks (qkv.set_lang, QKV_LANG)
    say = translator(lang, "figures.embedding")
    check_path(path)
    if tokens is None:
        ids = default_ids(tokenizer)
    else:
        ids = list(dict.fromkeys(token_id(tokenizer, t) for t in tokens))
    if len(ids) < 2:
        raise ValueError(f"the embedding map needs at least 2 distinct tokens; got {len(ids)}")
    E = _embeddings(model, tokenizer)[ids]  # (n, d_model)
    coords, var = pca_map(E)
    cos = cosine_matrix(E)
    np.fill_diagonal(cos, -np.inf)
    k = max(0, min(k, len(ids) - 1))
    fig = new_figure((9, 7.5))
    ax = fig.subplots()
    drawn = set()
    for a in range(len(ids)):
        for b in np.argsort(-cos[a], kind="stable")[:k]:
            edge = (min(a, int(b)), max(a, int(b)))
            if edge in drawn:
                continue
            drawn.add(edge)
            ax.plot(
                coords[list(edge), 0],
                coords[list(edge), 1],
                color="tab:orange",
                alpha=0.25 + 0.5 * max(0.0, float(cos[a, b])),
                lw=0.8,
                zorder=1,
            )
    ax.scatter(coords[:, 0], coords[:, 1], s=14, color="tab:blue", zorder=2)
    for (x, y), i in zip(coords, ids):
        ax.annotate(tokenizer.display(i), (x, y), xytext=(3, 3), textcoords="offset points", fontsize="small", zorder=3)
    ax.set_xlabel(say("axis1", share=var[0]))
    ax.set_ylabel(say("axis2", share=var[1]))
    ax.set_title(say("title", n=len(ids), d=E.shape[1]))
    if k:
        ax.text(0.01, 0.01, say("lines", k=k, d=E.shape[1]), transform=ax.transAxes, fontsize="small", color="0.35")
    senses = two_sense_words(model, [tokenizer.display(i) for i in ids])
    if senses:  # why 苹果 may sit with the companies rather than the fruits
        sep = "、" if lang == "zh" else ", "
        caption(fig, say("two_senses", words=sep.join(senses)), 110 if lang == "zh" else 120, fontsize=9)
    return save(fig, path)
