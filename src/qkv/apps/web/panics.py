"""A Rust library's panic inside a request, answered as every other error: JSON, one line, status 500.

tokenizers and safetensors are Rust; a panic there reaches Python as pyo3_runtime.PanicException, a
BaseException. FastAPI's handlers and Starlette's last resort catch Exception only, and the "http"
middleware turns it into "No response returned.", so the client got uvicorn's plain-text 500 and the
log a traceback. `PanicAnswer` sits between the middleware and the routes: a panic that comes out of
a route before its answer has started is answered {"error", "status": 500} in the request's language
(a panic the tokenizer can foresee is already a 400: core/text/tokenizers/safety.py).
"""

from __future__ import annotations

from starlette.requests import Request

from qkv.apps.web.inputs import error_answer, request_lang
from qkv.core.io.refusal import Refusal
from qkv.core.text.tokenizers.safety import is_panic, panic_line


class PanicAnswer:
    """ASGI middleware: a panic in the app below, before its answer started, is a JSON 500."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def sending(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except BaseException as e:  # a panic is a BaseException; anything else goes on as before
            if not is_panic(e) or started:
                raise
            refusal = Refusal.of("tokenizer_safety.library_panic", detail=panic_line(e))
            await error_answer(500, refusal, request_lang(Request(scope)))(scope, receive, send)


__all__ = ["PanicAnswer"]
