"""The explorer's endpoints for the heads panels (added to the app by server.create_app).

    GET  /api/heads    each head's label from the head detector (qkv.analysis.head_scores: previous,
                       duplicate, induction or first token, and its score there: "previous 0.88"), measured
                       once per server; labels null (and "why") for a model it cannot measure
    POST /api/origin   {text | ids, layer, head, token} -> the "origin" document (qkv.analysis.origin):
                       x, q = x W_Q + b_Q, every visible k and v, the products q_i[c] k_j[c] and their sums
    POST /api/ablate   {text | ids, heads: [[layer, head], ...], token?, top?} -> the "ablate" document
                       (qkv.analysis.ablate): next-token probabilities and later patterns, before and after

Bad input is a TextError (400, one line) or a validation error (422), as for the server's own routes.
"""

from __future__ import annotations

import threading
from typing import Annotated

from pydantic import Field

from qkv.analysis.ablate import TOP, ablate
from qkv.analysis.head_scores import KINDS, head_scores
from qkv.analysis.origin import origin
from qkv.apps.web.head_roles import head_roles, mark_shown, rule
from qkv.apps.web.inputs import FiniteJSON, TextOrIds
from qkv.core.see.indices import TextError
from qkv.presentation.i18n import LANGS, say_error, translator


class OriginIn(TextOrIds):
    layer: int
    head: int
    token: int


class AblateIn(TextOrIds):
    heads: list[Annotated[list[int], Field(min_length=2, max_length=2)]] = Field(max_length=4096)
    token: int | None = None
    top: int = Field(TOP, ge=1, le=100)


def head_labels(model, tokenizer) -> dict:
    """Each head's label from the head detector (qkv.analysis.head_scores, on repeated random tokens, its
    work bounded by SCORE_WORK): the kind (previous, duplicate, induction, first) whose score stands highest
    above a head that spreads its weight evenly (score / baselines[kind]), that score as "mass" and every
    kind's in "masses", with the catalogue's names for the kinds in each language. n_sentences (and
    n_sequences) is how many sequences were measured; baseline is an even head's weight on one key (its
    first-token score), baselines each kind's even score. A model the detector cannot measure (an encoder,
    an encoder-decoder, too short an n_ctx): labels null and why, in English and per language (why_lang).
    Each label says whether the head stands out ("shown", head_roles.stands_out: the rule in "stand_out"),
    and "roles" holds the heads' measured roles on the sense sentences (head_roles.head_roles)."""
    try:
        s = head_scores(model, tokenizer)
    except ValueError as e:  # a Refusal: not a GPT, n_ctx too short, no ordinary tokens to draw
        why = str(e).splitlines()[0] if str(e) else "unavailable"
        return {
            "kind": "head-labels",
            "labels": None,
            "why": why,
            "why_lang": {lang: say_error(e, lang).splitlines()[0] if str(e) else why for lang in LANGS},
            "roles": head_roles(model, tokenizer),
        }
    cats = list(KINDS)
    labels = []
    for layer in range(model.cfg.n_layers):
        row = []
        for head in range(model.cfg.n_heads):
            masses = {c: float(s[c][layer, head]) for c in cats}
            best = max(cats, key=lambda c: masses[c] / s.baselines[c] if s.baselines[c] > 0 else 0.0)
            row.append({"category": best, "mass": masses[best], "masses": masses})
        labels.append(row)
    mark_shown(labels, s.baselines)
    names = {}
    for lang in LANGS:
        say = translator(lang, "interpret")
        names[lang] = {c: {"short": say(f"short_{c}"), "label": say(f"label_{c}")} for c in cats}
    B, T = s.tokens.shape
    return {
        "kind": "head-labels",
        "measure": "head-detector",
        "labels": labels,
        "names": names,
        "baseline": s.baselines["first"],
        "baselines": s.baselines,
        "n_sentences": B,
        "n_sequences": B,
        "seq_len": T,
        "seed": s.seed,
        "categories": cats,
        "stand_out": rule(),
        "roles": head_roles(model, tokenizer),
    }


def add_routes(app, model, tokenizer, lock) -> None:
    """Add this module's routes to `app` (FastAPI); `lock` bounds the forward passes in flight (server.PASSES)."""
    cached: dict = {}
    once = threading.Lock()  # the labels are measured by one request; those beside it wait for its answer

    @app.get("/api/heads")
    def get_heads():
        with lock, once:
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
