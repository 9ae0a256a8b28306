"""Lesson "embedding", said and drawn: ids, one-hot cosines, learned cosines and nearest neighbours,
and a map of the embeddings (numbers from qkv.lessons.embedding.measure).

The map is drawn from the model itself (plot_embedding.embedding_map reads W_E), so run hands it
the model: DRAWS_MODEL."""

from __future__ import annotations

from pathlib import Path

from qkv.lessons.embedding.result import Result
from qkv.presentation.i18n import translator
from qkv.presentation.plot_embedding import embedding_map

DRAWS_MODEL = True


def title(lang: str) -> str:
    return translator(lang, "lessons.embedding")("title")


def _fields(n: Result, lang: str) -> dict:
    say = translator(lang, "lessons.embedding")
    words, a = n.words, n.fruits[0]
    tok = n.id_difference_token
    nn = {w: ", ".join(f"{t} {c:.3f}" for t, c in pairs) for w, pairs in n.neighbours.items()}
    return {
        **n.to_numbers(),
        "w0": words[0],
        "w1": words[1],
        "a": a,
        "nn_word": n.neighbours[a][0][0],
        "nn_cosine": n.neighbours[a][0][1],
        "nn_a": nn[a],
        "nn_other": nn[n.other],
        "id_list": ", ".join(f"{w} = {i}" for w, i in zip(words, n.ids)),
        "arrow": say("arrow", tok=tok) if tok else say("no_token"),
        "pairs": ", ".join(f"{x}-{y} {c:.3f}" for x, y, c in n.cosines),
        "counts": ", ".join(f"{k} {v}" for k, v in n.corpus_counts.items()),
        "source": (
            say("source_builtin", corpus_lines=n.corpus_lines)
            if n.corpus_source == "builtin"
            else say("source_bundled", corpus_lines=n.corpus_lines)
        ),
    }


def headline(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.embedding")
    return say("headline", **_fields(n, lang), verdict=say("holds" if n.claim_holds else "fails"))


def text(n: Result, lang: str) -> str:
    say = translator(lang, "lessons.embedding")
    fields = _fields(n, lang)
    verdict = say("text_holds") if n.claim_holds else say("text_fails", other=n.other)
    return say("text", **fields, verdict=verdict) + "\n\n" + say("caveat", **fields)


def figures(n: Result, out: Path, lang: str, model=None, tokenizer=None) -> list[Path]:
    return [embedding_map(model, tokenizer, out / "embedding_map.png", tokens=n.map_tokens, lang=lang)]
