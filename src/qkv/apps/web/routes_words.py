"""The explorer's endpoints for the words panels (added to the app by server.create_app).

    GET  /api/vocab?query=&match=prefix|substring&kind=&limit=&offset=   the "vocab" document
    POST /api/vocab  {query, match, kind, limit, offset}                   the same
    POST /api/side   {a, b, top}                                           the "side" document

vocab: qkv.analysis.vocab, with the counts of the model's training text when the checkpoint it was
loaded from records one qkv can find (training_text); side: qkv.analysis.prediction_diff. Bad values are 422
(pydantic) or 400 (TextError, ValueError of the analysis) with one line.
"""

from __future__ import annotations

from typing import Literal

from fastapi import Query
from pydantic import Field

from qkv.analysis.prediction_diff import MAX_TOP, side_by_side
from qkv.analysis.vocab import KINDS, MAX_LIMIT, training_text, vocab
from qkv.apps.web.inputs import MAX_CHARS, FiniteJSON, Strict
from qkv.core.see.indices import TextError


class VocabIn(Strict):
    query: str = Field("", max_length=200)
    match: Literal["prefix", "substring"] = "prefix"
    kind: Literal[KINDS] | None = None  # type: ignore[valid-type]
    limit: int = Field(200, ge=1, le=MAX_LIMIT)
    offset: int = Field(0, ge=0)


class SideIn(Strict):
    a: str = Field(max_length=MAX_CHARS)
    b: str = Field(max_length=MAX_CHARS)
    top: int = Field(10, ge=1, le=MAX_TOP)


def _checkpoint_dir(app):
    """The directory the served model was loaded from (server.create_app sets it; None: unknown)."""
    return getattr(app.state, "model_dir", None)


def add_routes(app, model, tokenizer, lock) -> None:
    """Add this module's routes to `app` (FastAPI); `lock` bounds the forward passes in flight (server.PASSES)."""
    known: dict = {}

    def text_of():
        if "text" not in known:  # once: read (and hash) the training text at the first request
            known["text"], known["where"] = training_text(_checkpoint_dir(app))
        return known["text"], known["where"]

    def answer(body: VocabIn) -> FiniteJSON:
        text, where = text_of()
        try:
            doc = vocab(tokenizer, text, where, body.query, body.match, body.kind, body.limit, body.offset)
        except ValueError as e:
            raise TextError.recast(e) from None
        return FiniteJSON(doc)

    @app.get("/api/vocab")
    def get_vocab(
        query: str = Query("", max_length=200),
        match: Literal["prefix", "substring"] = "prefix",
        kind: Literal[KINDS] | None = None,  # type: ignore[valid-type]
        limit: int = Query(200, ge=1, le=MAX_LIMIT),
        offset: int = Query(0, ge=0),
    ):
        return answer(VocabIn(query=query, match=match, kind=kind, limit=limit, offset=offset))

    @app.post("/api/vocab")
    def post_vocab(body: VocabIn):
        return answer(body)

    @app.post("/api/side")
    def post_side(body: SideIn):
        if not model.family.one_stack:
            raise TextError.of("errors.side_translation")
        with lock:
            doc = side_by_side(model, tokenizer, body.a, body.b, body.top)
        return FiniteJSON(doc)
