"""What every JSON document of qkv starts with: its format, its version and its kind.

    {"format": "qkv-explain", "version": 1, "kind": "view", ...}

docs/trace-format.md describes every kind, and qkv.analysis.schema checks them.
"""

from __future__ import annotations

FORMAT, VERSION = "qkv-explain", 1


def header(kind: str) -> dict:
    """The first three fields of a document of this kind."""
    return {"format": FORMAT, "version": VERSION, "kind": kind}
