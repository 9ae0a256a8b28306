"""The server runs forward passes side by side: each request's trace and hooks are its own (nn/tap.py)."""

from __future__ import annotations

import threading
import time

import pytest
from fastapi.testclient import TestClient

from qkv.apps.web import server as server_module
from qkv.apps.web.server import create_app
from qkv.core.hub.bundled import default_ckpt
from qkv.core.train.checkpoint import load

SENTENCE = "我 昨天 吃了 苹果 ，"


@pytest.fixture(scope="module")
def app():
    model, tok = load(default_ckpt())
    passes = []  # (start, end) of every forward pass, from any thread
    forward = model.forward

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return forward(*args, **kwargs)
        finally:
            passes.append((start, time.perf_counter()))

    model.forward = timed
    return TestClient(create_app(model, tok, "bundled"), base_url="http://127.0.0.1:8000"), model, passes


def requests_for(model):
    H = model.cfg.n_heads
    out = [("/api/view", {"text": SENTENCE})]
    out += [
        ("/api/ablate", {"text": SENTENCE, "heads": [[L, h]]}) for L in range(model.cfg.n_layers) for h in (0, H - 1)
    ]
    out += [("/api/explain", {"text": SENTENCE, "layer": 1, "head": 0, "token": 3})]
    return out


def test_requests_at_once_answer_as_alone_and_their_passes_overlap(app):
    client, model, passes = app
    todo = requests_for(model)
    alone = [client.post(path, json=body).json() for path, body in todo]
    passes.clear()
    answers: dict[int, list] = {i: [] for i in range(len(todo))}
    errors = []

    def worker(k):
        try:
            for i in range(len(todo)):
                j = (i + k) % len(todo)  # each thread in its own order: ablations of different heads meet
                r = client.post(todo[j][0], json=todo[j][1])
                answers[j].append((r.status_code, r.json()))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, (path, _) in enumerate(todo):
        for status, doc in answers[i]:
            assert status == 200, (path, doc)
            assert doc == alone[i], path  # another request's ablation (a hook) never leaked into this one
    ordered = sorted(passes)
    overlaps = sum(1 for a, b in zip(ordered, ordered[1:]) if b[0] < a[1])
    assert overlaps > 0, "no two forward passes ever ran at once: requests still take turns"


def test_the_bound_on_passes_in_flight_holds(app):
    client, model, passes = app
    assert server_module.PASSES >= 2
    passes.clear()
    threads = [
        threading.Thread(target=client.post, args=("/api/view",), kwargs={"json": {"text": SENTENCE}})
        for _ in range(3 * server_module.PASSES)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = sorted([(s, 1) for s, _ in passes] + [(e, -1) for _, e in passes])
    most, now = 0, 0
    for _, step in events:
        now += step
        most = max(most, now)
    assert 1 <= most <= server_module.PASSES
