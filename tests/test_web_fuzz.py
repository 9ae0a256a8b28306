"""Fuzz the explorer's API: whatever a client sends, the answer is never a 500.

Hypothesis sends well-formed requests built from the model's own vocabulary, the same with one
field replaced by an arbitrary JSON value, arbitrary JSON, raw bytes, and requests to arbitrary
paths with arbitrary methods. Every error must be a JSON {"error", "status"} with a 4xx status.

More examples and a table of status codes:
    QKV_FUZZ_EXAMPLES=3000 python -m pytest tests/test_web_fuzz.py -s
"""

from __future__ import annotations

import json
import os
from collections import Counter
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qkv import load
from qkv.apps.web.server import create_app
from qkv.core.hub.bundled import default_ckpt

EXAMPLES = int(os.environ.get("QKV_FUZZ_EXAMPLES", "250"))
SEEN: Counter = Counter()
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

_model, _tokenizer = load(default_ckpt())
CLIENT = TestClient(
    create_app(_model, _tokenizer, "bundled"), base_url="http://127.0.0.1:8000", raise_server_exceptions=False
)
WORDS = [w for w in _tokenizer.tokens if w.strip()]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
known_text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=40).map(" ".join)
any_text = known_text | st.text(max_size=80) | st.sampled_from(["", " ", "\x00", "\ud800", "苹果" * 2000])
small_int = st.integers(min_value=-70, max_value=70) | st.integers()
tiny = st.sampled_from([0.0, 5e-324, 1e-320, 1e-45, 1e-38, 1e-6, 1.0, 100.0])  # where float32 underflows
opt = lambda s: st.none() | s

BODIES = {
    "/api/view": st.fixed_dictionaries({}, optional={"text": any_text, "ids": st.lists(small_int, max_size=80)}),
    "/api/explain": st.fixed_dictionaries(
        {"text": any_text},
        optional={
            "layer": opt(small_int),
            "head": opt(small_int),
            "token": opt(small_int),
            "top": small_int,
            "lang": st.sampled_from(["zh", "en", "fr", ""]),
        },
    ),
    "/api/generate": st.fixed_dictionaries(
        {"text": any_text},
        optional={
            "max_new_tokens": small_int,
            "temperature": st.floats(-1, 200) | tiny | st.just(float("nan")),
            "top_k": opt(small_int),
            "top_p": opt(st.floats(-1, 2) | tiny),
            "seed": opt(st.integers()),
        },
    ),
    "/api/compare": st.fixed_dictionaries({"a": any_text, "b": any_text, "word": any_text | st.sampled_from(WORDS)}),
}


@st.composite
def requests(draw):
    path = draw(st.sampled_from(sorted(BODIES)))
    kind = draw(st.sampled_from(["valid", "valid", "mutated", "json", "bytes", "path"]))
    if kind == "path":
        method = draw(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]))
        tail = quote(draw(st.text(max_size=30)), safe="/.%~")  # any text, percent-encoded into a valid URL
        prefix = draw(st.sampled_from(["/", "/api/", "/assets/", "/assets/..%2F"]))
        return method, prefix + tail, None
    if kind == "bytes":
        return "POST", path, draw(st.binary(max_size=200))
    body = draw(BODIES[path]) if kind != "json" else draw(json_values)
    if kind == "mutated" and isinstance(body, dict):
        body[draw(st.sampled_from(sorted(body) + ["extra"]))] = draw(json_values)
    return "POST", path, json.dumps(body, allow_nan=True).encode()


@SETTINGS
@given(requests())
def fuzz_once(request):
    method, path, body = request
    headers = {"content-type": "application/json"} if body is not None else {}
    r = CLIENT.request(method, path, content=body, headers=headers)
    SEEN[r.status_code] += 1
    assert r.status_code < 500, (method, path, body, r.text)
    if r.status_code >= 400 and method != "HEAD":
        doc = r.json()
        assert doc["status"] == r.status_code and doc["error"] and "\n" not in doc["error"], doc


@pytest.mark.slow
def test_no_request_gets_a_500():
    SEEN.clear()
    fuzz_once()  # hypothesis runs EXAMPLES requests
    print(f"\nfuzzed {sum(SEEN.values())} requests: " + ", ".join(f"{code}: {n}" for code, n in sorted(SEEN.items())))
    # the generator is not only producing errors: successes and each kind of refusal occur
    assert SEEN[200] > 0 and SEEN[400] > 0 and SEEN[422] > 0 and SEEN[404] > 0, SEEN
