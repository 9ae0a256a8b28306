"""The explorer's endpoints for the transform panels (added to the app by server.create_app).

POST /api/transform   {layer, head} -> the stretch of one head's W_Q, W_K, W_V, W_O (and of a random
                      model of the same shape), and the word cloud before and after x W_Q, x W_K, x W_V
"""

from __future__ import annotations

import threading

from fastapi import Request

from qkv.analysis.transform import MATRICES, head_spectra, random_twin
from qkv.analysis.transform_cloud import word_cloud
from qkv.apps.web.inputs import FiniteJSON, Strict, request_lang
from qkv.core.io.document import header
from qkv.core.io.refusal import family_title
from qkv.core.see.indices import TextError, check_layer_head
from qkv.presentation.i18n import DEFAULT_LANG, say_error


class TransformIn(Strict):
    layer: int
    head: int


def transform_doc(model, tokenizer, twin, layer: int, head: int, lang: str = DEFAULT_LANG) -> dict:
    """The document of POST /api/transform (kind "transform"): plain numbers for the page (and, when
    the word cloud cannot be drawn, why, in `lang`)."""
    layer, head = check_layer_head(model.cfg, layer, head)
    trained = head_spectra(model, layer, head)
    random = head_spectra(twin, layer, head)
    try:
        cloud, why = word_cloud(model, tokenizer, layer, head), None
    except ValueError as e:  # a vocabulary without the cloud's words: the spectra still stand
        cloud, why = None, say_error(e, lang)
    return {
        **header("transform"),
        "layer": layer,
        "head": head,
        "d_model": model.cfg.d_model,
        "d_head": model.cfg.d_head,
        "matrices": list(MATRICES),
        "trained": trained,
        "random": random,
        "cloud": cloud,
        "cloud_error": why,
    }


def add_routes(app, model, tokenizer, lock) -> None:
    """Add this module's routes to `app` (FastAPI); `lock` bounds the forward passes in flight (server.PASSES)."""
    twins = []  # the random model of the same shape, made on the first request
    once = threading.Lock()  # by one request: those beside it wait for that one (memory for one twin, seed 0)

    @app.post("/api/transform")
    def post_transform(body: TransformIn, request: Request):
        if not model.family.one_stack:
            raise TextError.of("errors.transform_panel_family", title=family_title(model.family))
        with lock:
            with once:
                if not twins:
                    try:
                        twins.append(random_twin(model, 0))
                    except ValueError as e:  # a second model of this size does not fit beside the first
                        raise TextError.recast(e) from None
            doc = transform_doc(model, tokenizer, twins[0], body.layer, body.head, request_lang(request))
        return FiniteJSON(doc)
