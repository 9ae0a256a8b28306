"""The explorer's web server: the page, its assets, and a JSON API over qkv.analysis.

    app = create_app(model, tokenizer, name="bundled")      # an ASGI app (FastAPI)
    listen.serve(ckpt=None, host="127.0.0.1", port=8000)    # what `qkv serve` runs (uvicorn; listen.py)

Routes (all answer JSON but the page, its assets and /api/view's binary answer; the OpenAPI schema: /openapi.json):
    GET  /                 the page (static/index.html)
    GET  /assets/NAME      the scripts and stylesheets in ASSETS, nothing else
    GET  /api/model        (offer.py) the model's shape (and whether spaces, or any whitespace, are tokens), example
                           sentences, a default comparison
    POST /api/view         {text} or {ids} -> the "view" document (qkv.apps.web.view); asked with
                           Accept: application/octet-stream (the page does), one binary body (packing.binary)
    POST /api/explain      {text, layer, head, token, top, lang} -> the "explain" document
    POST /api/generate     {text, max_new_tokens, temperature, top_k, top_p, seed} (400 for an encoder);
                           it stops at n_ctx tokens (what a page can show) and says so: "stopped"
    POST /api/compare      {a, b, word} -> the "compare" document (qkv.analysis.word_similarity)
  the panels' own (routes_heads, routes_interventions, routes_words, routes_transform):
    GET  /api/heads        each head's label from the head detector (qkv.analysis.head_scores)
    POST /api/origin       {text|ids, layer, head, token} -> x, x·W_Q = q, x·W_K = k, x·W_V = v (qkv.analysis.origin)
    POST /api/ablate       {text|ids, heads, token?, top} -> next-token probabilities and later patterns
                           with those heads switched off (qkv.analysis.ablate)
    POST /api/lens         {text|ids, token, top} -> the top next tokens after each layer (qkv.analysis.lens)
    POST /api/attribution  {text|ids, token, target?} -> each part's direct share of one logit
                           (qkv.analysis.attribution)
    GET|POST /api/patch    the patching panel's default pair | {clean, corrupt, answer, wrong, site} -> the
                           "patching" document (qkv.analysis.patch)
    POST /api/side         {a, b, top} -> two sentences' next-token probabilities (qkv.analysis.prediction_diff)
    GET|POST /api/vocab    the vocabulary with counts in the training text (qkv.analysis.vocab)
    POST /api/transform    {layer, head} -> what W_Q, W_K, W_V, W_O do to space (qkv.analysis.transform)
    POST /api/export       {text, layer, head, token, lang, part, panel, inputs} -> the page as one HTML file,
                           opening on that view (routes_export: "Export this view")
    POST /api/tour/view, /api/tour/order, /api/tour/translate   the guided tour's (routes_tour): a view with the
                           positions taken out, 我打你 / 你打我 with positions on and off, the bundled translator's
                           cross-attention

A translation model (an encoder-decoder) is shown the same way: /api/view takes its source text and
answers the "translation-view" document (qkv.apps.web.translation_view), /api/explain the
"translation" document (qkv.analysis.cross_attention; layer and head a decoder layer's cross-attention head,
token a target step), /api/model offers corpus sentences in its source language (translate.py);
generating and comparing are 400s (it translates instead of continuing a text).

The server is a thin shell: each endpoint calls one function of the Python API. What the user got
wrong is a 4xx answer {"error": one line, "status": code}: 422 for a malformed request, 400 for a
text that cannot be shown (qkv.core.see.indices.TextError); anything else is a 500, a bug in qkv.
The line is in the request's language (Accept-Language, which the page sets to its own; English
without it), from the message catalogue: requests.py says how.
Requests whose Host header is not the address the server listens on are refused (a web page
elsewhere cannot reach a local server through DNS rebinding), and the page may load nothing from
elsewhere (Content-Security-Policy). listen.py closes a connection that has not sent a whole
request within IDLE_TIMEOUT seconds, so idle or half-sent ones cannot use up the descriptors.

No request holds up another: a body longer than its endpoint needs is a 413 before any of it is read
(requests.BodyLimit over BODY_LIMITS; requests.py says why those sizes), so what FastAPI parses and validates
on the event loop takes milliseconds; the endpoints that compute are plain functions, run in worker
threads, and render their answers there (requests.FiniteJSON); /api/model, the page and its assets
answer on the event loop, whatever the workers are doing.

Memory: every traced pass reserves its estimate (core/see/footprint.py) before it runs, from one budget shared
by the requests in flight (budget.py: QKV_MEMORY_BUDGET, else 3/4 of the memory available at start); a request
larger than the whole budget is a 400, one that finds it held by others a 503 (Retry-After), each in one line
naming the estimate and the limit; a request that fails keeps nothing (budget.forget).

What requests fill, and its bound (the bundled model's server: ~350 MB, flat once warm):
    WordTokenizer._cuts      the cuts of pieces outside the vocabulary: MAX_CACHED characters and ids,
                             ~10 MB per tokenizer, then it starts again (core/text/tokenizers/words.py)
    numbers._form            the exact forms of 4,096 numbers, ~0.6 MB (analysis/numbers.py)
    position_mean._CACHE     the means /api/compare subtracts: one set per model, n_stages·n_ctx·d_model
                             float64s (0.4 MB here); the corpus lines they read, ~1 MB (analysis/position_mean.py)
    cross_attention._corpus_index  one index of the corpus's pairs, ~60 MB, for a translation model
    vocab._COUNTS            the training text's count of each id, per tokenizer (analysis/vocab.py)
    the routes' own          /api/heads' labels, /api/vocab's training text, /api/transform's random twin
                             (as large as the model): once per app
    Linear W^T               a model that has generated keeps each Linear's W^T (core/model/nn/linear.py): its
                             weights once more, made again only when they change
    malloc                   two heaps keep what the threads free, and their free memory goes back to
                             the system every TRIM_EVERY second (malloc_trim; listen.settle_memory)
"""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import Field
from starlette.exceptions import HTTPException

from qkv.analysis.inputs import encode_text, read_text
from qkv.analysis.packing import binary, dumps
from qkv.analysis.word_similarity import compare
from qkv.apps.web import (
    bundle,
    routes_export,
    routes_heads,
    routes_interventions,
    routes_tour,
    routes_transform,
    routes_words,
)
from qkv.apps.web.assets import STYLES, asset
from qkv.apps.web.budget import Passes, server_budget
from qkv.apps.web.inputs import (
    MAX_CHARS,
    BodyLimit,
    FiniteJSON,
    Strict,
    TextOrIds,
    body_limit,
    error_answer,
    http_refusal,
    invalid_body,
    request_lang,
)
from qkv.apps.web.model_doc import model_doc
from qkv.apps.web.panics import PanicAnswer
from qkv.apps.web.translation_view import translation_view
from qkv.apps.web.view import view
from qkv.core.decode.sample import check_generates, generate_ids
from qkv.core.io.document import header
from qkv.core.io.finite import NonFiniteError
from qkv.core.io.refusal import Refusal
from qkv.core.machine.memory import Budget, Busy, TooLarge
from qkv.core.see.indices import TextError, check_layer_head, check_token
from qkv.presentation.explanation import explain

MAX_NEW = 256
BINARY = "application/octet-stream"  # /api/view's binary answer (qkv.analysis.packing.binary), when accepted
# each forward pass records and hooks in its own state (core/see/tap.py: per thread), so requests run side by
# side; at most PASSES at once, and together within the memory budget (budget.py: each traced pass reserves its
# estimate before it runs; a request that fails keeps nothing)
PASSES = 4
SCRIPTS = bundle.order()  # the ES modules static/index.html's main.js imports, each after its imports
ASSETS = {  # what /assets/NAME serves, with its content type (a module script must be JavaScript)
    **{name: "text/javascript; charset=utf-8" for name in SCRIPTS},
    **{name: "text/css; charset=utf-8" for name in STYLES},
}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


class TextIn(Strict):
    text: str = Field(max_length=MAX_CHARS)


class ViewIn(TextOrIds):
    ids: list[int] | None = Field(None, max_length=MAX_CHARS)  # what /api/generate returns: no re-tokenizing


class ExplainIn(TextIn):
    layer: int | None = None
    head: int | None = None
    token: int | None = None
    top: int = Field(5, ge=1, le=100)
    lang: str = Field("en", pattern="^(zh|en)$")


class GenerateIn(TextIn):
    max_new_tokens: int = Field(20, ge=1, le=MAX_NEW)
    temperature: float = Field(0.8, ge=0, le=100, allow_inf_nan=False)
    top_k: int | None = Field(None, ge=1)
    top_p: float | None = Field(None, gt=0, le=1, allow_inf_nan=False)
    seed: int | None = Field(None, ge=0, lt=2**63)


class CompareIn(Strict):
    a: str = Field(max_length=MAX_CHARS)
    b: str = Field(max_length=MAX_CHARS)
    word: str = Field(max_length=MAX_CHARS)
    # groups of sense words the prediction is read for (qkv.analysis.sense_prediction); None: the corpus's
    senses: list[Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=8)]] | None = Field(
        None, max_length=4
    )


BODY_LIMITS = {  # the most bytes each endpoint's body may have: body_limit(its text and list fields), requests.py
    "/api/view": body_limit(1),  # text or ids
    "/api/explain": body_limit(1),
    "/api/generate": body_limit(1),
    "/api/compare": body_limit(3),  # a, b, word (senses: at most 4 x 8 x 40 characters, within the slack)
    "/api/origin": body_limit(1),  # text or ids
    "/api/ablate": body_limit(2),  # text or ids, heads
    "/api/side": body_limit(2),  # a, b
    **routes_interventions.BODY_LIMITS,  # /api/lens, /api/attribution, /api/patch
    **routes_export.BODY_LIMITS,  # /api/export: the text and the panels' inputs
    **routes_tour.BODY_LIMITS,  # /api/tour/view, /api/tour/order, /api/tour/translate
}  # any other path: body_limit(0), 4 KiB (what /api/vocab and /api/transform take; a GET reads none)


def host_name(header: str) -> str:
    """The host part of a Host header: "127.0.0.1:8000" -> "127.0.0.1", "[::1]:8000" -> "::1"."""
    return header[1 : header.find("]")] if header.startswith("[") else header.rsplit(":", 1)[0]


def create_app(model, tokenizer, name: str = "", host: str = "127.0.0.1", memory: int | None = None) -> FastAPI:
    """The ASGI app serving one model (in eval mode; at most PASSES requests compute at once, within `memory` bytes:
    None, budget.server_budget()). It answers requests addressed to `host` (and this computer's local names when
    `host` is one); "0.0.0.0": any."""
    model.eval()
    lock = Passes(PASSES, Budget(server_budget() if memory is None else memory))  # a bound on passes in flight
    info = model_doc(model, tokenizer, name)

    app = FastAPI(  # no docs pages: they load a CDN
        title="qkv explorer", version="1", docs_url=None, redoc_url=None, default_response_class=FiniteJSON
    )
    _add_guards(app)
    app.state.hosts = allowed_hosts(host)
    app.state.passes = lock  # its budget: what requests hold now (tests read it)
    _add_page(app, info)
    _add_view_routes(app, model, tokenizer, name, lock)
    _add_generate_routes(app, model, tokenizer, lock)
    app.state.model_dir = info["model"]["loaded_from"].get("path")  # where the vocabulary's counts are read from
    if name == "bundled":
        from qkv.core.hub.bundled import BUNDLED

        app.state.model_dir = BUNDLED
    # the panels' own endpoints, and the guided tour's
    for routes in (routes_heads, routes_interventions, routes_words, routes_transform, routes_tour):
        routes.add_routes(app, model, tokenizer, lock)
    routes_export.add_routes(app, model, tokenizer, lock, name)  # "Export this view": the page as one file
    return app


def _add_guards(app: FastAPI) -> None:
    """The size of a body, the Host header and the security headers of every answer; every error as
    {"error", "status"} in the request's language."""
    # added first, so it runs inside guard: Host is checked first, a 413 has its headers
    app.add_middleware(PanicAnswer)  # innermost: a Rust library's panic in a route is a JSON 500 (panics.py)
    app.add_middleware(BodyLimit, limits=BODY_LIMITS)

    @app.middleware("http")
    async def guard(request: Request, call_next):
        if app.state.hosts is not None and host_name(request.headers.get("host", "")) not in app.state.hosts:
            refusal = Refusal.of("requests.wrong_host", hosts=sorted(app.state.hosts))
            return error_answer(400, refusal, request_lang(request))
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(request, exc):
        return error_answer(422, invalid_body(exc.errors()), request_lang(request))

    @app.exception_handler(HTTPException)
    async def httperror_answer(request, exc):
        return error_answer(exc.status_code, http_refusal(exc.status_code, exc.detail), request_lang(request))

    @app.exception_handler(TextError)  # what the user gave cannot be shown: unknown words, too long, out of range
    async def bad_text(request, exc):
        return error_answer(400, exc, request_lang(request))

    @app.exception_handler(NonFiniteError)  # the model's numbers are NaN or infinite where the answer needs them
    async def not_finite(request, exc):
        return error_answer(400, exc, request_lang(request))

    @app.exception_handler(TooLarge)  # its memory estimate exceeds the budget (budget.py): a shorter text fits
    async def too_large(request, exc):
        return error_answer(400, exc, request_lang(request))

    @app.exception_handler(Busy)  # the budget is held by requests in flight: try again
    async def busy(request, exc):
        answer = error_answer(503, exc, request_lang(request))
        answer.headers["Retry-After"] = "1"
        return answer

    @app.exception_handler(Exception)
    async def bug(request, exc):
        return error_answer(
            500, Refusal.of("requests.internal", kind=type(exc).__name__, detail=exc), request_lang(request)
        )


def _add_page(app: FastAPI, info: dict) -> None:
    """The page, its assets and the model document."""

    # the endpoints that compute are plain functions, run in worker threads; these few answer at once,
    # on the event loop, so that no number of slow requests (each holding a thread) can keep them waiting
    @app.get("/", include_in_schema=False)
    async def page():
        return Response(asset("index.html"), media_type="text/html; charset=utf-8")

    @app.get("/assets/{name}", include_in_schema=False)
    async def static(name: str, request: Request):
        if name not in ASSETS:  # a fixed list: no path the client sends reaches the file system
            return error_answer(404, Refusal.of("requests.no_asset", name=repr(name)), request_lang(request))
        return Response(asset(name), media_type=ASSETS[name])

    info_body = FiniteJSON(info).body  # rendered once: it never changes

    @app.get("/api/model")
    async def get_model():
        return Response(info_body, media_type="application/json")


def _add_view_routes(app: FastAPI, model, tokenizer, name: str, lock) -> None:
    """/api/view (the page's document of a text) and /api/explain (one query's derivation)."""
    n_ctx, translates = model.cfg.n_ctx, model.family.translates

    @app.post("/api/view")
    def post_view(body: ViewIn, request: Request):
        t0 = time.perf_counter()
        raw = not translates and BINARY in request.headers.get("accept", "")  # the page's: one binary body
        if translates and body.ids is not None:
            raise TextError.of("errors.view_translation_ids")
        with lock:
            doc = (
                translation_view(model, tokenizer, body.text, name)
                if translates
                else view(model, tokenizer, body.text, name, ids=body.ids, raw=raw)
            )
        t1 = time.perf_counter()
        content = binary(doc) if raw else dumps(doc)
        timing = f"view;dur={(t1 - t0) * 1e3:.1f}, json;dur={(time.perf_counter() - t1) * 1e3:.1f}"
        return Response(content, media_type=BINARY if raw else "application/json", headers={"Server-Timing": timing})

    @app.post("/api/explain")
    def post_explain(body: ExplainIn):
        # the ranges are checked first, so that a bug inside explain stays a 500; a translation's text is its
        # source and its token a target step, both checked inside
        check_layer_head(model.cfg, body.layer, body.head)
        if not translates:
            T = len(encode_text(tokenizer, body.text, n_ctx))  # the page's rules: no cropping
            if body.token is not None:
                check_token(body.token, T)
        with lock:
            doc = explain(
                model,
                tokenizer,
                body.text,
                layer=body.layer,
                head=body.head,
                token=body.token,
                top=body.top,
                lang=body.lang,
            ).to_json()
        return FiniteJSON(doc)


def _add_generate_routes(app: FastAPI, model, tokenizer, lock) -> None:
    """/api/generate (a continuation of a text) and /api/compare (one word in two sentences)."""
    n_ctx, translates = model.cfg.n_ctx, model.family.translates

    @app.post("/api/generate")
    def post_generate(body: GenerateIn):
        try:
            check_generates(model)  # an encoder has no next-token distribution
        except ValueError as e:
            raise TextError.recast(e) from None
        prompt, ids = read_text(tokenizer, body.text, n_ctx)
        room = n_ctx - len(ids)  # the page shows at most n_ctx tokens: generation stops there, and says so
        if room < 1:
            raise TextError.of("errors.text_fills_context", n_ctx=n_ctx)
        with lock:
            new = list(
                generate_ids(
                    model, ids, min(body.max_new_tokens, room), body.temperature, body.top_k, body.top_p, body.seed
                )
            )
        at_end = len(new) < min(body.max_new_tokens, room)  # the model wrote its end of text (GPT.stop_ids)
        stopped = (
            {"asked": body.max_new_tokens, "made": len(new), "n_ctx": n_ctx, "end": at_end}
            if len(new) < body.max_new_tokens
            else None
        )
        doc = {
            **header("generate"),
            "prompt": prompt,
            "text": tokenizer.decode(ids + new),
            "added": tokenizer.decode(new, prev=ids[-1]),
            "ids": ids + new,
            "stopped": stopped,
        }
        return FiniteJSON(doc)

    @app.post("/api/compare")
    def post_compare(body: CompareIn):
        if translates:
            raise TextError.of("errors.compare_translation")
        with lock:
            doc = compare(model, tokenizer, body.a, body.b, body.word, body.senses)
        return FiniteJSON(doc)


def allowed_hosts(host: str) -> set[str] | None:
    """Host names a browser may use to reach a server bound to `host` (None: any, for 0.0.0.0)."""
    if host in ("0.0.0.0", "::", ""):
        return None
    return set(LOCAL_HOSTS) | {host} if host in LOCAL_HOSTS else {host}
