"""The explorer's endpoints for the guided tour (static/tour.js; added to the app by server.create_app).

    POST /api/tour/view       {text, positions: false} -> the "view" document of `text` read by the
                              model with its positions taken out (qkv.analysis.no_positions.without_positions:
                              no position vector added, no rotation of q and k), "positions": "off" in it;
                              positions true: the ordinary view, "positions": "on"
    POST /api/tour/order      {a, b} -> the "order-pair" document (qkv.analysis.no_positions.order_pair): the
                              last token's attention rows of two sentences with positions on and off, and how
                              far the rows without positions are from a permutation of each other, per layer
    POST /api/tour/translate  {text} -> the "translation" document (qkv.analysis.cross_attention) of the
                              bundled translation model (assets/translate), loaded at the first request and
                              kept: the tour shows cross-attention whatever model the page serves

Bad input is a TextError (400, one line) or a validation error (422), as for the server's own routes.
"""

from __future__ import annotations

import threading

from pydantic import Field

from qkv.analysis.cross_attention import explain_translation
from qkv.analysis.no_positions import order_pair, without_positions
from qkv.apps.web.inputs import MAX_CHARS, FiniteJSON, Strict, body_limit
from qkv.apps.web.view import view
from qkv.core.see.indices import TextError

BODY_LIMITS = {"/api/tour/view": body_limit(1), "/api/tour/order": body_limit(2), "/api/tour/translate": body_limit(1)}


class TourViewIn(Strict):
    text: str = Field(max_length=MAX_CHARS)
    positions: bool = True


class OrderIn(Strict):
    a: str = Field(max_length=MAX_CHARS)
    b: str = Field(max_length=MAX_CHARS)


class TranslateIn(Strict):
    text: str = Field(max_length=MAX_CHARS)


def translator(app):
    """The bundled translation model and its tokenizer, loaded once (app.state.translator), or a TextError
    naming why it cannot be."""
    with app.state.translator_lock:
        if app.state.translator is None:
            from qkv.core.hub.bundled import default_translate_ckpt
            from qkv.core.train.checkpoint import load

            try:
                app.state.translator = load(default_translate_ckpt())
            except (OSError, ValueError) as e:  # not installed, or unreadable: say so in one line
                raise TextError.of("tour.no_translator", error=str(e).splitlines()[0]) from None
        return app.state.translator


def add_routes(app, model, tokenizer, lock) -> None:
    """Add this module's routes to `app` (FastAPI); `lock` bounds the forward passes in flight (server.PASSES)."""
    app.state.translator, app.state.translator_lock = None, threading.Lock()
    decoder = model.family.design == "decoder"

    def refuse_unless_decoder():
        if not decoder:
            raise TextError.of("tour.positions_decoder")

    @app.post("/api/tour/view")
    def post_tour_view(body: TourViewIn):
        refuse_unless_decoder()
        reader = model if body.positions else without_positions(model)
        with lock:
            doc = view(reader, tokenizer, body.text)
        doc["positions"] = "on" if body.positions else "off"
        return FiniteJSON(doc)

    @app.post("/api/tour/order")
    def post_tour_order(body: OrderIn):
        refuse_unless_decoder()
        with lock:
            doc = order_pair(model, tokenizer, body.a, body.b)
        return FiniteJSON(doc)

    @app.post("/api/tour/translate")
    def post_tour_translate(body: TranslateIn):
        tr_model, tr_tokenizer = model, tokenizer
        if not model.family.translates:
            tr_model, tr_tokenizer = translator(app)
        with lock:
            doc = explain_translation(tr_model, tr_tokenizer, body.text)
        return FiniteJSON(doc)
