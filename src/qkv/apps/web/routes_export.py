"""The explorer's "Export this view" (added to the app by server.create_app).

    POST /api/export  {text, layer, head, token, lang, part, panel, inputs} -> the page as one HTML file

The answer is the single-file page `qkv explain --html` writes (export.page_data, export.page_html), opening
on the view the page shows: its text, layer, head, query token, language, a translation model's part, the
open panel and the panels' inputs (static/address.js keeps the same in the page's address). It is sent as
an attachment; the page saves it (a Blob and <a download>). The text is bounded as /api/view's, the panels'
inputs by export.MAX_INPUTS values of export.MAX_INPUT_CHARS characters, and the passes it runs reserve
their memory from the server's budget (budget.py) as every route's do.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import FastAPI
from fastapi.responses import Response
from pydantic import Field

from qkv.apps.web.export import MAX_INPUT_CHARS, page_data, page_html
from qkv.apps.web.inputs import MAX_CHARS, Strict, body_limit
from qkv.core.io.refusal import Refusal
from qkv.core.machine.memory import Busy, TooLarge
from qkv.core.see.indices import TextError

_Value = Annotated[str, Field(max_length=MAX_INPUT_CHARS)]
_Fields = Annotated[dict[Annotated[str, Field(max_length=16)], _Value], Field(max_length=8)]

# the text, and the inputs (at most 16 values of 400 characters, each up to 12 bytes in JSON: ~77 KB)
BODY_LIMITS = {"/api/export": body_limit(3)}
FILE_NAME = "qkv-view.html"


class ExportIn(Strict):
    text: str = Field(min_length=1, max_length=MAX_CHARS)
    layer: int | None = None
    head: int | None = None
    token: int | None = None
    lang: str | None = Field(None, pattern="^(zh|en)$")
    part: str | None = Field(None, max_length=16)
    panel: str | None = Field(None, max_length=16)
    inputs: Annotated[dict[Annotated[str, Field(max_length=16)], _Fields], Field(max_length=10)] | None = None


def add_routes(app: FastAPI, model, tokenizer, lock, name: str = "") -> None:
    """POST /api/export. A refusal (a bad index, part or panel) is a 400 in one line, as /api/view's are."""

    @app.post("/api/export")
    def post_export(body: ExportIn):
        try:
            with lock:  # each traced pass reserves its estimate from the server's budget (budget.py)
                data = page_data(
                    model,
                    tokenizer,
                    body.text,
                    name,
                    body.layer,
                    body.head,
                    body.token,
                    body.lang,
                    body.part,
                    body.panel,
                    body.inputs,
                )
        except (TextError, TooLarge, Busy):  # answered by the app's handlers (400, 400, 503)
            raise
        except Refusal as e:  # page_data's own checks: what the user gave cannot be shown
            raise TextError.recast(e) from None
        return Response(
            page_html(data),
            media_type="text/html; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{FILE_NAME}"'},
        )
