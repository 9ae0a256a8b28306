"""What every request and answer of the explorer's API shares (server.py and the routes_* modules).

Bodies are strict pydantic models: no unknown field, no "1" for 1, no true for 1; a text longer than
MAX_CHARS is refused before it is tokenized (n_ctx is far smaller anyway).

A body is refused (413) before it is read when it is longer than its endpoint needs, so that parsing
and validating it on the event loop stays short (server.BodyLimit). What a body needs:
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
