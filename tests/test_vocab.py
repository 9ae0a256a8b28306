"""The vocabulary browser's data: qkv.analysis.vocab and GET/POST /api/vocab.

Counts are checked against a count made another way: the corpus's own words (its lines split at
spaces), for every word token of the bundled model's word tokenizer."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest
from fastapi.testclient import TestClient

from qkv.analysis.vocab import MAX_LIMIT, token_kind, training_text, vocab
from qkv.apps.web.server import create_app
from qkv.core.hub.bundled import default_ckpt
from qkv.core.hub.bundled import training_text as bundled_text
from qkv.core.text import corpus
from qkv.core.train.checkpoint import load, read_config


@pytest.fixture(scope="module")
def bundled():
    return load(default_ckpt())


@pytest.fixture(scope="module")
def client(bundled):
    return TestClient(create_app(*bundled, "bundled"), base_url="http://127.0.0.1:8000")


def _all(tok, text, where="", **kw):
    """Every matching row, page by page."""
    rows, offset = [], 0
    while True:
        doc = vocab(tok, text, where, limit=MAX_LIMIT, offset=offset, **kw)
        rows += doc["tokens"]
        offset += MAX_LIMIT
        if offset >= doc["matches"]:
            return doc, rows


def test_the_bundled_models_training_text_is_found_by_its_sha256():
    recorded = read_config(default_ckpt())["data"]["sha256"]
    text, where = training_text(default_ckpt())
    builtin, everyday = corpus.default_text(), bundled_text()
    sha = lambda t: hashlib.sha256(t.encode("utf-8")).hexdigest()
    if sha(builtin) == recorded:
        assert text == builtin and where == "qkv corpus"
    elif sha(everyday) == recorded:  # the built-in corpus with the HSK training sentences
        assert text == everyday and where == "qkv corpus + HSK"
    else:  # a bundled model trained on something else: then it must not claim the corpus
        assert text is None
    assert recorded in (sha(builtin), sha(everyday))  # and the bundled model is one of the two: its text is found


def test_counts_are_the_words_of_the_training_text(bundled):
    model, tok = bundled
    text, where = training_text(default_ckpt())
    if text is None:
        pytest.skip("the bundled model's training text is not qkv's corpus")
    doc, rows = _all(tok, text, where)
    assert doc["counted"] and doc["matches"] == doc["size"] == tok.vocab_size == len(rows)
    ids = tok.encode(text)
    assert Counter({r["id"]: r["count"] for r in rows if r["count"]}) == Counter(ids)
    assert doc["total_count"] == len(ids)
    counts = [r["count"] for r in rows]
    assert counts == sorted(counts, reverse=True)  # most frequent first
    # another way: the corpus is written as words separated by spaces, one sentence a line
    words = Counter(
        w.lower() if getattr(tok, "fold_case", False) else w for line in text.splitlines() for w in line.split(" ")
    )
    checked = 0
    for r in rows:
        if r["kind"] == "word" and r["token"].strip() and "␣" not in r["token"] and "\\" not in r["token"]:
            assert r["count"] == words[r["token"]], r
            checked += 1
    assert checked > 100


def test_filters_are_the_shown_tokens_that_match(bundled):
    model, tok = bundled
    text, where = training_text(default_ckpt())
    shown = {i: tok.display(i) for i in range(tok.vocab_size)}
    for query, match in (("苹", "prefix"), ("了", "substring"), ("a", "prefix"), ("AN", "substring")):
        _, rows = _all(tok, text, where, query=query, match=match)
        q = query.casefold()
        want = {i for i, s in shown.items() if (s.casefold().startswith(q) if match == "prefix" else q in s.casefold())}
        assert {r["id"] for r in rows} == want, (query, match)
    kinds = Counter(token_kind(tok, i) for i in range(tok.vocab_size))
    for kind, n in kinds.items():
        doc, rows = _all(tok, text, where, kind=kind)
        assert doc["matches"] == n == doc["kinds"][kind] and {r["kind"] for r in rows} == {kind}
    for r in _all(tok, text, where, query="苹")[1]:
        assert r["text"] == r["token"]  # a word is typed as it is shown


def test_counts_unknown_when_the_training_text_is_not_found(tmp_path, bundled):
    model, tok = bundled
    assert training_text(None)[0] is None
    (tmp_path / "config.json").write_text(json.dumps({"data": {"kind": "string", "sha256": "0" * 64}}))
    text, why = training_text(tmp_path)
    assert text is None and "unknown" in why
    doc = vocab(tok, text, why, limit=5)
    assert doc["counted"] is False and doc["counted_from"] == why and all(r["count"] is None for r in doc["tokens"])
    assert [r["id"] for r in doc["tokens"]] == [0, 1, 2, 3, 4]  # by id when there are no counts
    mine = tmp_path / "train.txt"
    mine.write_text("b a b\n", encoding="utf-8")
    sha = hashlib.sha256(mine.read_bytes()).hexdigest()
    (tmp_path / "config.json").write_text(json.dumps({"data": {"kind": "file", "path": str(mine), "sha256": sha}}))
    assert training_text(tmp_path) == ("b a b\n", str(mine))
    mine.write_text("b a b a\n", encoding="utf-8")  # changed since: no longer the training text
    assert training_text(tmp_path)[0] is None


def test_vocab_endpoint(bundled, client):
    model, tok = bundled
    text, where = training_text(default_ckpt())
    got = client.get("/api/vocab", params={"query": "苹", "limit": 7}).json()
    assert got == vocab(tok, text, where, "苹", limit=7)
    body = {"query": "了", "match": "substring", "limit": 3, "offset": 2}
    assert client.post("/api/vocab", json=body).json() == vocab(tok, text, where, "了", "substring", limit=3, offset=2)
    assert client.get("/api/vocab").json()["matches"] == tok.vocab_size
    for bad in ({"kind": "nope"}, {"limit": "0"}, {"match": "regex"}, {"offset": "-1"}):
        r = client.get("/api/vocab", params=bad)
        assert r.status_code == 422 and list(r.json()) == ["error", "status"], bad
    assert client.post("/api/vocab", json={"limit": MAX_LIMIT + 1}).status_code == 422
    assert client.post("/api/vocab", json={"query": 3}).status_code == 422
