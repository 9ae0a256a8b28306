"""What every request body of the explorer's API shares (server.py and the routes_* modules).

Bodies are strict pydantic models: no unknown field, no "1" for 1, no true for 1; a text longer than
MAX_CHARS is refused before it is tokenized (n_ctx is far smaller anyway)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

MAX_CHARS = 4000


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
