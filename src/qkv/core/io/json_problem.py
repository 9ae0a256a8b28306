"""What is wrong with a file that is not JSON, as a catalogued phrase (qkv.core.io.refusal): the parser's
reason and where it stopped (line, column, character offset), so that each language says it in its own
words; the English is Python's own message, word for word.

    json_problem(json.JSONDecodeError("Expecting value", "[1,]", 3))
    # phrase("errors.json_at", reason=phrase("errors.json_expecting_value"), line=1, column=4, char=3)
"""

from __future__ import annotations

import json

from qkv.core.io.refusal import Phrase, phrase

# the messages of Python's json parser (json.decoder and its C scanner), each a phrase of the catalogue
REASONS = {
    "Expecting value": "json_expecting_value",
    "Expecting property name enclosed in double quotes": "json_expecting_name",
    "Expecting ':' delimiter": "json_expecting_colon",
    "Expecting ',' delimiter": "json_expecting_comma",
    "Unterminated string starting at": "json_unterminated",
    "Invalid control character at": "json_control",
    "Invalid \\escape": "json_escape",
    "Invalid \\uXXXX escape": "json_unicode_escape",
    "Extra data": "json_extra",
    "Illegal trailing comma before end of object": "json_comma_object",
    "Illegal trailing comma before end of array": "json_comma_array",
}


def json_problem(error: BaseException) -> Phrase:
    """Why the bytes did not parse as JSON: a syntax error with its place, text that is not UTF-8 (the
    offending byte's offset), or brackets nested deeper than the parser goes."""
    if isinstance(error, json.JSONDecodeError):
        reason = phrase(f"errors.{REASONS[error.msg]}") if error.msg in REASONS else phrase("errors.json_syntax")
        return phrase("errors.json_at", reason=reason, line=error.lineno, column=error.colno, char=error.pos)
    if isinstance(error, UnicodeDecodeError):
        return phrase("errors.json_not_utf8", byte=error.start)
    return phrase("errors.json_too_deep")
