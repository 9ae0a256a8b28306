"""What every request and answer of the explorer's API shares (server.py and the routes_* modules).

Bodies are strict pydantic models: no unknown field, no "1" for 1, no true for 1; a text longer than
MAX_CHARS is refused before it is tokenized (n_ctx is far smaller anyway).

A body is refused (413) before it is read when it is longer than its endpoint needs, so that parsing
and validating it on the event loop stays short (BodyLimit). What a body needs:
    a text field   MAX_CHARS characters, each up to 12 bytes in JSON ("\\ud83d\\ude00" is one emoji): 48,000
    a list field   MAX_IDS ids of up to 8 bytes ("123456, "): 32,768; or 4,096 [layer, head] pairs: ~40,000
    anything else  numbers, flags, a vocabulary query of 200 characters (2,400 bytes)
so FIELD_BYTES for each text or list field, and SMALL_BYTES for the rest: body_limit(fields). The
largest, /api/compare's three texts, is 196 KiB; the slowest body that size to parse and validate
(16,000 unknown fields, each an error) takes ~30 ms on the event loop, most bodies 2 ms.
"""

from __future__ import annotations

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from qkv.core.finite import dumps as finite_dumps

MAX_CHARS = 4000
MAX_IDS = 4096
FIELD_BYTES = 64 * 1024
SMALL_BYTES = 4 * 1024


def body_limit(fields: int = 0) -> int:
    """The most bytes of a body with `fields` text or list fields (see the module docstring)."""
    return SMALL_BYTES + fields * FIELD_BYTES


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


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
        length = dict(scope["headers"]).get(b"content-length", b"")
        if length.isdigit() and int(length) > limit:
            return await _too_large(limit)(scope, receive, send)
        chunks, size, more, gone = [], 0, True, None
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: the app hears so, as without this
                gone = message
                break
            chunks.append(message.get("body", b""))
            size, more = size + len(chunks[-1]), message.get("more_body", False)
            if size > limit:
                return await _too_large(limit)(scope, receive, send)
        whole = [gone or {"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replay():
            return whole.pop() if whole else await receive()

        await self.app(scope, replay, send)


def _too_large(limit: int) -> JSONResponse:
    return error_answer(413, f"the request body is larger than the {limit:,} bytes this endpoint takes")


def error_answer(status: int, message: str) -> JSONResponse:
    """What every refusal is: {"error": one line, "status": status}."""
    line = (message.strip().splitlines() or [""])[0] or "bad request"
    return JSONResponse({"error": line, "status": status}, status_code=status)
