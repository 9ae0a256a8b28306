"""What every request and answer of the explorer's API shares (server.py and the routes_* modules).

Bodies are strict pydantic models: no unknown field, no "1" for 1, no true for 1; a text longer than
MAX_CHARS is refused before it is tokenized (n_ctx is far smaller anyway).

A body is refused (413) before it is read when it is longer than its endpoint needs, so that parsing
and validating it on the event loop stays short (BodyLimit). What a body needs:
    a text field   MAX_CHARS characters, each up to 12 bytes in JSON ("\\ud83d\\ude00" is one emoji): 48,000
    a list field   MAX_IDS ids of up to 8 bytes ("123456, "): 32,768; or 4,096 [layer, head] pairs: ~40,000
    anything else  numbers, flags, a vocabulary query of 200 characters (2,400 bytes)
so FIELD_BYTES for each text or list field, and SMALL_BYTES for the rest: body_limit(fields). The
largest, /api/compare's three texts, is 196 KiB, small enough to parse and validate on the event loop
even when every one of its fields is an error.

Every refusal is said in the language of the request (`lang_of`: the first of its Accept-Language
languages that qkv speaks; the page sends its own, static/api.js), from the message catalogue
(areas "errors" and "requests"): a refusal of qkv.core.io.refusal, or pydantic's complaint about a body
made into one (`invalid_body`). Without the header, English.
"""

from __future__ import annotations

from http import HTTPStatus

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from qkv.core.io.finite import dumps as finite_dumps
from qkv.core.io.refusal import Refusal, phrase
from qkv.presentation.i18n import DEFAULT_LANG, LANGS, catalogue, say_error

MAX_CHARS = 4000
MAX_IDS = 4096
FIELD_BYTES = 64 * 1024
SMALL_BYTES = 4 * 1024


def body_limit(fields: int = 0) -> int:
    """The most bytes of a body with `fields` text or list fields (see the module docstring)."""
    return SMALL_BYTES + fields * FIELD_BYTES


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class TextOrIds(Strict):
    """A body that names one sequence: a text, or the token ids the page shows (no re-tokenizing), not both."""

    text: str | None = Field(None, max_length=MAX_CHARS)
    ids: list[int] | None = Field(None, max_length=MAX_IDS)

    @model_validator(mode="after")
    def one_of(self):
        if (self.text is None) == (self.ids is None):
            raise Refusal.of("requests.text_or_ids")
        return self


class FiniteJSON(JSONResponse):
    """Every JSON answer: a NaN or an infinity is written as null, and the document says so (core.finite).

    An endpoint returns FiniteJSON(doc), not doc: made in the endpoint's worker thread, it is rendered
    there. A dict returned to FastAPI is encoded (jsonable_encoder) and rendered on the event loop,
    where a large document (origin's is 400 kB at n_ctx = 64) holds up every other request."""

    def render(self, content) -> bytes:
        return finite_dumps(content, separators=(",", ":")).encode("utf-8")  # compact, as FastAPI's own


class BodyLimit:
    """ASGI middleware: a body over its path's limit is answered 413 before the app reads or
    parses any of it: at once when its Content-Length says so, else (a chunked body) as soon as what
    has come in passes the bound. A body within the bound is read here and handed on whole."""

    def __init__(self, app, limits: dict[str, int]):
        self.app, self.limits = app, limits  # path -> bytes; any other path: body_limit(0)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.limits.get(scope["path"], body_limit())
        headers = dict(scope["headers"])
        length = headers.get(b"content-length", b"")
        lang = lang_of(headers.get(b"accept-language", b"").decode("latin-1"))
        if length.isdigit() and int(length) > limit:
            return await _too_large(limit, lang)(scope, receive, send)
        chunks, size, more, gone = [], 0, True, None
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: the app hears so, as without this
                gone = message
                break
            chunks.append(message.get("body", b""))
            size, more = size + len(chunks[-1]), message.get("more_body", False)
            if size > limit:
                return await _too_large(limit, lang)(scope, receive, send)
        whole = [gone or {"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replay():
            return whole.pop() if whole else await receive()

        await self.app(scope, replay, send)


def _too_large(limit: int, lang: str) -> JSONResponse:
    return error_answer(413, Refusal.of("requests.too_large", limit=limit), lang)


def error_answer(status: int, error: BaseException | str, lang: str = DEFAULT_LANG) -> JSONResponse:
    """What every refusal is: {"error": one line, "status": status}, the error said in `lang`."""
    message = say_error(error, lang) if isinstance(error, BaseException) else error
    line = (message.strip().splitlines() or [""])[0] or say_error(Refusal.of("requests.bad_request"), lang)
    return JSONResponse({"error": line, "status": status}, status_code=status)


def request_lang(request) -> str:
    """The language a request's refusals are said in: its Accept-Language (lang_of)."""
    return lang_of(request.headers.get("accept-language", ""))


def lang_of(accept_language: str) -> str:
    """The language to answer in: the first language of an Accept-Language header ("zh-CN,zh;q=0.9,en;q=0.8",
    by weight) that qkv speaks, else English."""
    ranked = []
    for n, part in enumerate(accept_language.split(",")):
        tag, _, params = part.strip().partition(";")
        weight = 1.0
        if params.strip().startswith("q="):
            try:
                weight = float(params.strip()[2:])
            except ValueError:
                weight = 0.0
        ranked.append((-weight, n, tag.strip().lower().split("-")[0]))
    return next((lang for w, _, lang in sorted(ranked) if w < 0 and lang in LANGS), DEFAULT_LANG)


def http_refusal(status: int, detail) -> BaseException | str:
    """Starlette's HTTPException as a refusal: its standard words ("Not Found", "Method Not Allowed")
    from the catalogue, any other detail as it is."""
    try:
        standard = HTTPStatus(status).phrase
    except ValueError:
        standard = None
    name = f"http_{status}"
    if str(detail) == standard and name in catalogue("en", "requests"):
        return Refusal.of(f"requests.{name}")
    return str(detail)


# pydantic's error types qkv's bodies can meet, with the fields of their messages (from pydantic's
# context); each is a message of the catalogue's area "requests" named "v_" + the type
_CONTEXT = {
    "string_too_long": ("max_length",),
    "too_long": ("field_type", "max_length", "actual_length"),
    "too_short": ("field_type", "min_length", "actual_length"),
    "greater_than_equal": ("ge",),
    "less_than_equal": ("le",),
    "greater_than": ("gt",),
    "less_than": ("lt",),
    "string_pattern_mismatch": ("pattern",),
    "literal_error": ("expected",),
}
# the json module's complaints that a body can draw, said in the catalogue's words
_JSON = {
    "Expecting value": "json_value",
    "Expecting property name enclosed in double quotes": "json_name",
    "Expecting ',' delimiter": "json_comma",
    "Expecting ':' delimiter": "json_colon",
    "Extra data": "json_extra",
    "Unterminated string starting at": "json_string",
    "Invalid control character at": "json_control",
}


def invalid_body(errors: list[dict]) -> BaseException | str:
    """pydantic's first complaint about a request (RequestValidationError.errors()), said of the body:
    where it is wrong and how, as a refusal of the catalogue (pydantic's own words when it has none)."""
    first = errors[0] if errors else {}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    kind, msg, ctx = first.get("type", ""), first.get("msg", "invalid request"), first.get("ctx") or {}
    if kind == "json_invalid":  # loc: ("body", the character where the JSON breaks)
        detail = str(ctx.get("error", msg))
        why = phrase(f"requests.{_JSON[detail]}") if detail in _JSON else detail
        return Refusal.of("requests.not_json", at=where, why=why)
    if not where and kind == "missing":
        return Refusal.of("requests.no_body")
    if not where and kind in ("model_attributes_type", "dict_type"):
        return Refusal.of("requests.not_object")
    if kind == "value_error" and getattr(ctx.get("error"), "key", None):  # a model's own check (Refusal)
        said = ctx["error"]
    elif f"v_{kind}" in catalogue("en", "requests"):
        fields = {name: _number(ctx.get(name)) for name in _CONTEXT.get(kind, ())}
        if kind == "literal_error":  # "'a', 'b' or 'c'": a choice, said with the language's "or"
            *rest, last = str(fields["expected"]).rsplit(" or ", 1)
            fields["expected"] = phrase("requests.either", first=rest[0].split(", "), last=last) if rest else last
        said = Refusal.of(f"requests.v_{kind}", **fields)
    else:
        said = msg.removeprefix("Value error, ")
    return Refusal.of("requests.at", where=where, error=said) if where else said


def _number(value):
    """A number of pydantic's context as its messages write it: 1.0 as 1."""
    return int(value) if isinstance(value, float) and value.is_integer() else value
