"""The explorer's endpoints for the words panels (added to the app by server.create_app)."""

from __future__ import annotations


def add_routes(app, model, tokenizer, lock) -> None:
    """Add this module's routes to `app` (FastAPI); `lock` serialises forward passes."""
