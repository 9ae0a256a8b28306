"""The explorer's endpoints for the intervention panels (added to the app by server.create_app).

    POST /api/lens         {text | ids, token?, top?} -> the "logit-lens" document (qkv.analysis.lens.lens_top):
                           the top next tokens after each layer at position `token` (default: the last)
    POST /api/attribution  {text | ids, token?, target?} -> the "logit-attribution" document
                           (qkv.analysis.attribution): each head's, each MLP's and the embeddings' direct
                           share of the logit of `target` (a one-token word, or an id as a JSON number: a
                           string is always a word, so the page sends what its field holds as digits alone,
                           173 or #173, as the number; default: the model's own top prediction) after
                           position `token`; the shares sum to that logit
    GET  /api/patch        the pair the patching panel opens on, when this model's tokenizer reads one of
                           PATCH_PAIRS (two texts of one length, the answer and the wrong word one token
                           each), else null; and the sites this model has
    POST /api/patch        {clean, corrupt, answer, wrong, site, position?} -> the "patching" document
                           (qkv.analysis.patch.patch_text): the metric logit(answer) - logit(wrong) of the
                           corrupted run with each piece of `site` patched in from the clean run

Bounds: the texts and ids as every endpoint's (requests.MAX_CHARS, MAX_IDS, then n_ctx); patching runs one
forward pass per piece (n_layers x T pieces, or n_layers x n_heads for z), each of T tokens, so its work,
pieces x T x parameters, is held under PATCH_WORK (the bundled model's longest text, 64 tokens at every
site, is 3e10; 1e12 is ~9 tokens of a 0.5B-parameter model): a longer pair is
refused in one line that says how many tokens fit. The analysis refuses what it cannot do (an encoder or a
translation model has no next-token logit to read; a post-norm model no direct path to it) in one line,
answered 400 in the request's language, as every TextError.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field

from qkv.analysis.attribution import logit_attribution
from qkv.analysis.inputs import read_text, token_id
from qkv.analysis.lens import lens_top
from qkv.analysis.patch import SITES, check_model, patch_text
from qkv.apps.web.inputs import MAX_CHARS, FiniteJSON, Strict, TextOrIds, body_limit
from qkv.core.io.document import header
from qkv.core.io.refusal import Refusal
from qkv.core.see.indices import TextError

PATCH_WORK = 10**12  # parameters x tokens that one patching request may run (see the module docstring)
MAX_TOP = 50
# what the patching panel opens on: clean text, corrupted text, answer, wrong word (the first this model reads).
# 吃了 (ate) makes 苹果 the fruit, 投资了 (invested in) the company: 味道 (taste) or 股价 (share price) next
PATCH_PAIRS = [
    ("我 昨天 吃了 苹果 ，", "我 上周 投资了 苹果 ，", "味道", "股价"),
    ("i ate apple ,", "i joined apple ,", "it", "its"),
    (
        "When Mary and John went to the store, John gave a drink to",
        "When Mary and John went to the store, Mary gave a drink to",
        " Mary",
        " John",
    ),
]
BODY_LIMITS = {  # server.BODY_LIMITS takes these in: body_limit(its text and list fields), requests.py
    "/api/lens": body_limit(1),  # text or ids
    "/api/attribution": body_limit(2),  # text or ids, target
    "/api/patch": body_limit(4),  # clean, corrupt, answer, wrong
}


class _AtToken(TextOrIds):
    token: int = -1  # the position whose next token is read (negative: from the end)


class LensIn(_AtToken):
    top: int = Field(5, ge=1, le=MAX_TOP)


class AttributionIn(_AtToken):
    target: Annotated[str, Field(max_length=MAX_CHARS)] | int | None = None  # a word, an id; None: the top prediction


class PatchIn(Strict):
    clean: str = Field(max_length=MAX_CHARS)
    corrupt: str = Field(max_length=MAX_CHARS)
    answer: str = Field(max_length=MAX_CHARS)
    wrong: str = Field(max_length=MAX_CHARS)
    site: Literal[SITES] = "resid_pre"  # type: ignore[valid-type]
    position: int = -1


def sites_of(model) -> list[str]:
    """The sites this model can be patched at (none for a model patching refuses; no mlp_out without MLPs)."""
    out = []
    for site in SITES:
        try:
            check_model(model, site)
        except Refusal:
            continue
        out.append(site)
    return out


def patch_pieces(model, site: str, T: int) -> int:
    """How many patched runs patching `site` takes for texts of T tokens."""
    return model.cfg.n_layers * (model.cfg.n_heads if site == "z" else T)


def check_patch_work(model, site: str, T: int) -> None:
    """Refuse (400, one line) a patching whose work, pieces x T x parameters, exceeds PATCH_WORK; the line
    says the most tokens that fit: T_max^2 x n_layers x parameters <= PATCH_WORK at a site patched per
    position, T_max x n_layers x n_heads x parameters <= PATCH_WORK for z."""
    most, params = PATCH_WORK, model.num_params()
    pieces = patch_pieces(model, site, T)
    work = pieces * T * params
    if work <= most:
        return
    per = most // params  # pieces x T allowed
    if site == "z":
        t_max = per // patch_pieces(model, site, 1)
    else:
        t_max = math.isqrt(per // model.cfg.n_layers)
    if t_max < 1:
        raise TextError.of("web_interventions.patch_too_large", site=site, pieces=pieces, params=params, most=most)
    raise TextError.of(
        "web_interventions.patch_work", site=site, pieces=pieces, T=T, params=params, work=work, most=most, T_max=t_max
    )


def patch_example(model, tokenizer) -> dict | None:
    """The first of PATCH_PAIRS this model's tokenizer reads as two texts of one length (within n_ctx and
    PATCH_WORK at every site) with the answer and the wrong word one token each; None if none is."""
    sites = sites_of(model)
    if not sites:
        return None
    pairs = PATCH_PAIRS[::-1] if model.loaded_from is not None else PATCH_PAIRS  # a pretrained LLM: English first
    for clean, corrupt, answer, wrong in pairs:
        try:
            a, ids_a = read_text(tokenizer, clean, model.cfg.n_ctx)
            b, ids_b = read_text(tokenizer, corrupt, model.cfg.n_ctx)
            token_id(tokenizer, answer), token_id(tokenizer, wrong)
            if len(ids_a) != len(ids_b):
                continue
            for site in sites:
                check_patch_work(model, site, len(ids_a))
        except ValueError:  # a word it does not know, a pair too long for it
            continue
        return {"clean": a, "corrupt": b, "answer": answer, "wrong": wrong}
    return None


def add_routes(app, model, tokenizer, lock) -> None:
    """Add this module's routes to `app` (FastAPI); `lock` bounds the forward passes in flight."""
    n_ctx = model.cfg.n_ctx

    def ids_of(body: TextOrIds) -> list[int]:
        return read_text(tokenizer, body.text, n_ctx)[1] if body.text is not None else body.ids

    @app.post("/api/lens")
    def post_lens(body: LensIn):
        ids = ids_of(body)
        with lock:
            doc = lens_top(model, ids, position=body.token, k=body.top, tokenizer=tokenizer)
        return FiniteJSON(doc)

    @app.post("/api/attribution")
    def post_attribution(body: AttributionIn):
        ids = ids_of(body)
        with lock:
            doc = logit_attribution(model, ids, position=body.token, token=body.target, tokenizer=tokenizer).to_json()
        return FiniteJSON(doc)

    example: dict = {}

    @app.get("/api/patch")
    def get_patch():
        if "doc" not in example:  # the tokenizer reads the pairs once per server
            example["doc"] = {
                **header("patch-example"),
                "example": patch_example(model, tokenizer),
                "sites": sites_of(model),
            }
        return FiniteJSON(example["doc"])

    @app.post("/api/patch")
    def post_patch(body: PatchIn):
        check_model(model, body.site)  # an encoder, a translation model, mlp_out without MLPs: before the texts
        _, ids = read_text(tokenizer, body.clean, n_ctx)
        check_patch_work(model, body.site, len(ids))
        with lock:
            result = patch_text(
                model, tokenizer, body.clean, body.corrupt, body.answer, body.wrong, body.site, body.position
            )
        return FiniteJSON(result.to_json(tokenizer))
