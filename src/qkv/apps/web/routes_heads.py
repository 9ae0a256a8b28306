"""The explorer's endpoints for the heads panels (added to the app by server.create_app).

    GET  /api/heads    each head's label from the lesson "heads" (its favourite kind of key and the mean
                       weight it puts there: "previous 0.88"), measured once per server; labels null
                       (and "why") for a model the lesson cannot read
    POST /api/origin   {text | ids, layer, head, token} -> the "origin" document (qkv.analysis.origin):
                       x, q = x W_Q + b_Q, every visible k and v, the products q_i[c] k_j[c] and their sums
    POST /api/ablate   {text | ids, heads: [[layer, head], ...], token?, top?} -> the "ablate" document
                       (qkv.analysis.ablate): next-token probabilities and later patterns, before and after

Bad input is a TextError (400, one line) or a validation error (422), as for the server's own routes.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from qkv.analysis.ablate import TOP, ablate
from qkv.analysis.origin import origin
from qkv.analysis.view import TextError
from qkv.apps.lessons import heads as heads_lesson
from qkv.core.refusal import Refusal
from qkv.presentation.i18n import LANGS
from qkv.presentation.lessons import heads as heads_view

from .requests import MAX_CHARS, MAX_IDS, FiniteJSON, Strict


class _TextOrIds(Strict):
    text: str | None = Field(None, max_length=MAX_CHARS)
    ids: list[int] | None = Field(None, max_length=MAX_IDS)  # the page sends the ids it shows: no re-tokenizing

    @model_validator(mode="after")
    def one_of(self):
        if (self.text is None) == (self.ids is None):
            raise Refusal.of("requests.text_or_ids")
        return self


class OriginIn(_TextOrIds):
    layer: int
    head: int
    token: int


class AblateIn(_TextOrIds):
    heads: list[Annotated[list[int], Field(min_length=2, max_length=2)]] = Field(max_length=4096)
    token: int | None = None
    top: int = Field(TOP, ge=1, le=100)


# the work the labels may cost, in parameters x sentences: every probe for the bundled model (1.8 M
# parameters), 16 for Qwen2.5-0.5B (494 M), whose forward over all ~1,000 took 98 s with the model busy
LABEL_WORK = 2 * 10**9
MIN_SENTENCES = 16


def head_labels(model, tokenizer) -> dict:
    """Each head's label from the lesson "heads": the category (cue, previous, start, self) it puts the
    most mean weight on, and that weight, with the lesson's own names for the categories in each language;
    measured on at most LABEL_WORK / parameters sentences (at least MIN_SENTENCES; the document says how many)."""
    if model.family.design not in heads_lesson.READS:
        return {"kind": "head-labels", "labels": None, "why": "the lesson heads measures a GPT's heads"}
    try:
        limit = max(MIN_SENTENCES, LABEL_WORK // sum(p.numel() for p in model.parameters()))
        n = heads_lesson.measure(model, tokenizer, limit=limit)
    except ValueError as e:  # no probe sentence fits this tokenizer, or a model that is not causal
        return {"kind": "head-labels", "labels": None, "why": str(e).splitlines()[0] if str(e) else "unavailable"}
    cats = n["categories"]
    L, H = len(n["mass"][cats[0]]), len(n["mass"][cats[0]][0])
    labels = []
    for layer in range(L):
        row = []
        for head in range(H):
            masses = {c: n["mass"][c][layer][head] for c in cats}
            best = max(cats, key=lambda c: masses[c])
            row.append({"category": best, "mass": masses[best], "masses": masses})
        labels.append(row)
    names = {}
    for lang in LANGS:
        short, label = heads_view.shorts(lang), heads_view.labels(lang)
        names[lang] = {c: {"short": short[c], "label": label[c]} for c in cats}
    return {
        "kind": "head-labels",
        "labels": labels,
        "names": names,
        "baseline": n["baseline"],
        "n_sentences": n["n_sentences"],
        "categories": cats,
    }


def add_routes(app, model, tokenizer, lock) -> None:
    """Add this module's routes to `app` (FastAPI); `lock` serialises forward passes."""
    cached: dict = {}

    @app.get("/api/heads")
    def get_heads():
        with lock:
            if "labels" not in cached:  # measured once per server, at the first request
                cached["labels"] = head_labels(model, tokenizer)
        return FiniteJSON(cached["labels"])

    @app.post("/api/origin")
    def post_origin(body: OriginIn):
        with lock:
            doc = origin(model, tokenizer, body.text, layer=body.layer, head=body.head, token=body.token, ids=body.ids)
        return FiniteJSON(doc)

    @app.post("/api/ablate")
    def post_ablate(body: AblateIn):
        if len(body.heads) > model.cfg.n_layers * model.cfg.n_heads:  # the list, before its duplicates are dropped
            raise TextError.of(
                "errors.ablate_too_many", n=len(body.heads), heads=model.cfg.n_layers * model.cfg.n_heads
            )
        with lock:
            doc = ablate(model, tokenizer, body.text, heads=body.heads, token=body.token, ids=body.ids, top=body.top)
        return FiniteJSON(doc)
