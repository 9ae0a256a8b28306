"""Memory bounded before it is taken (issue 32, D and E): the estimate of a traced pass (core/see/footprint.py)
against the tensors a trace really holds, the logit lens refused before it asks for 30 GB and computed in
pieces equal to one piece, the server's shared budget (400 for a request larger than it, 503 while others
hold it), and a failed request that keeps nothing (a weakref to a tensor made inside the failing analysis)."""

from __future__ import annotations

import gc
import re
import weakref

import pytest
import torch
from fastapi.testclient import TestClient

from qkv import GPT, Encoder, ModelConfig, load
from qkv.analysis import lens
from qkv.analysis.lens import logit_lens, stream_names, unembed_stream
from qkv.apps.web.budget import forget, parse_size, server_budget
from qkv.apps.web.server import create_app
from qkv.core.hub.bundled import default_ckpt
from qkv.core.machine import memory
from qkv.core.machine.memory import Budget, Busy, TooLarge, reserve
from qkv.core.see.footprint import pass_bytes, trace_bytes
from qkv.core.see.trace import trace_names

GB = 10**9
# Qwen2.5-0.5B's widths (config.json): the sizes of the round that found D
QWEN = dict(
    d_vocab=151936, n_ctx=32768, d_model=896, n_heads=14, n_kv_heads=2, n_layers=24, d_mlp=4864, mlp="gated",
    pos="rope", norm="rms", rope_layout="halves", bias=False, qkv_bias=True, unembed_bias=False, tie_embeddings=True,
)  # fmt: skip
SMALL = dict(d_vocab=50, n_ctx=16, d_model=32, n_heads=4, n_layers=2)
VARIANTS = [
    ModelConfig(**SMALL),
    ModelConfig(**{**SMALL, "n_kv_heads": 2, "mlp": "gated", "pos": "rope", "norm": "rms", "qk_norm": True}),
    ModelConfig(**{**SMALL, "arch": "bert"}),
]


def build(cfg):
    torch.manual_seed(0)
    return (Encoder(cfg) if cfg.arch == "bert" else GPT(cfg)).eval()


@pytest.mark.parametrize("cfg", VARIANTS, ids=["gpt", "llama-like", "bert"])
def test_the_trace_estimate_is_the_bytes_the_trace_holds(cfg):
    model, T = build(cfg), 11
    _, tr = model.run_with_trace(torch.arange(T)[None] % cfg.d_vocab)
    held = sum(v.nbytes for v in tr.activations.values())
    assert trace_bytes(cfg, T, list(tr.activations)) == held
    assert pass_bytes(cfg, T, list(tr.activations)) > held  # and the pass holds more while it runs


def test_a_bfloat16_model_is_counted_as_the_float32_trace_it_gives():
    cfg, T = VARIANTS[1], 7
    model = build(cfg).to(torch.bfloat16)
    _, tr = model.run_with_trace(torch.arange(T)[None])
    assert trace_bytes(cfg, T, list(tr.activations), torch.bfloat16) == sum(v.nbytes for v in tr.activations.values())


def meta_qwen():
    with torch.device("meta"):  # Qwen2.5-0.5B's shapes, no memory: nothing is allocated
        return GPT(ModelConfig(**QWEN))


def test_the_logit_lens_of_2000_tokens_at_qwen_size_is_refused_before_it_is_made(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: 8 * GB)
    with pytest.raises(TooLarge) as e:
        logit_lens(meta_qwen(), list(range(2000)))
    line = str(e.value)
    assert "\n" not in line and "30.4 GB" in line and "8.0 GB" in line, line  # the estimate and the limit


def test_a_trace_too_large_for_the_machine_is_refused_before_the_pass(monkeypatch):
    model = build(VARIANTS[0])
    monkeypatch.setattr(memory, "available_memory", lambda: 1000)
    with pytest.raises(TooLarge, match="traced forward pass of 9 tokens"):
        model.run_with_trace(torch.arange(9)[None])


def test_the_lens_in_pieces_equals_the_lens_in_one_piece(monkeypatch):
    model = build(VARIANTS[1])
    ids = list(range(13))
    monkeypatch.setattr(lens, "CHUNK_BYTES", 1)  # one position at a time
    P = logit_lens(model, ids)
    _, tr = model.run_with_trace(torch.tensor([ids]), names=stream_names(model.cfg))
    whole = unembed_stream(model, torch.stack([tr[n][0] for n in stream_names(model.cfg)]))
    assert P.shape == whole.shape == (model.cfg.n_layers + 1, 13, model.cfg.d_vocab)
    torch.testing.assert_close(P, whole, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(P[-1], torch.softmax(model(torch.tensor([ids]))[0], -1), rtol=1e-5, atol=1e-6)


def test_a_budget_refuses_what_exceeds_it_and_waits_for_nothing_it_cannot_get():
    budget = Budget(1000, wait=0)
    with pytest.raises(TooLarge, match="1.0 kB"):
        budget.take(1001, "x", 0)
    with budget.scope():
        reserve(600, "a")
        with pytest.raises(TooLarge, match="holds 600 bytes"):
            reserve(600, "b")  # 1,200 > 1,000 with its own 600: no wait would make room, so no 503
        assert budget.held == 600
    assert budget.held == 0  # the scope gave it back
    other = budget.take(600, "another request", 0)
    with budget.scope(), pytest.raises(Busy):
        reserve(600, "b")  # 1,200 > 1,000, but 600 of it is another request's: it may give it back
    other.release()
    assert budget.held == 0


def test_a_scope_gives_everything_back_when_its_request_fails_and_a_ticket_goes_back_once():
    budget = Budget(1000, wait=0)
    with pytest.raises(RuntimeError), budget.scope():
        ticket = reserve(400, "a")
        ticket.release()
        reserve(300, "b")
        raise RuntimeError
    assert budget.held == 0


def test_a_trace_gives_its_reservation_back_when_it_is_gone():
    model, budget = build(VARIANTS[0]), Budget(10 * GB, wait=0)
    with budget.scope():
        _, tr = model.run_with_trace(torch.arange(5)[None])
        assert budget.held == pass_bytes(model.cfg, 5, trace_names(model.cfg))
        del tr, _
        assert budget.held == 0


def test_the_budget_setting():
    assert parse_size("6GB") == 6 * GB and parse_size("512MiB") == 512 * 2**20 and parse_size("2000000") == 2 * 10**6
    for bad in ("lots", "5", "-1GB", "1e9"):
        with pytest.raises(ValueError, match="QKV_MEMORY_BUDGET"):
            parse_size(bad)
    assert server_budget({"QKV_MEMORY_BUDGET": "3GB"}) == 3 * GB
    assert 0 < server_budget({}) <= (memory.available_memory() or 2**62)


@pytest.fixture(scope="module")
def bundled():
    model, tok = load(default_ckpt())
    return model.eval(), tok


def client_of(model, tok, memory_bytes=None):
    app = create_app(model, tok, "bundled", memory=memory_bytes)
    return TestClient(app, base_url="http://127.0.0.1:8000", raise_server_exceptions=False), app


TEXT = "我 昨天 吃了 苹果 ，"


def test_a_request_larger_than_the_budget_is_a_400_in_one_line_naming_both(bundled):
    client, app = client_of(*bundled, memory_bytes=10**5)
    for lang, words in (("en", "traced forward pass"), ("zh", "前向计算")):
        r = client.post("/api/view", json={"text": TEXT}, headers={"accept-language": lang})
        assert r.status_code == 400, r.text
        line = r.json()["error"]
        assert words in line and "100.0 kB" in line and "\n" not in line, line
        assert re.search(r"\d+\.\d (MB|kB)", line)
    assert app.state.passes.budget.held == 0


def test_a_request_that_finds_the_budget_held_is_a_503_and_then_fits(bundled):
    client, app = client_of(*bundled, memory_bytes=GB)
    budget = app.state.passes.budget
    budget.wait = 0  # no waiting: the answer does not depend on timing
    ticket = budget.take(GB - 1000, "another request", 0)
    r = client.post("/api/explain", json={"text": TEXT})
    assert r.status_code == 503 and r.headers["retry-after"] == "1", r.text
    assert "try again" in r.json()["error"]
    ticket.release()
    assert client.post("/api/explain", json={"text": TEXT}).status_code == 200
    assert budget.held == 0


def test_a_failed_request_keeps_nothing(bundled, monkeypatch):
    """A tensor made inside a failing analysis is freed when the request returns, without the cycle collector."""
    client, app = client_of(*bundled)
    made = []

    def failing(model, x):
        big = torch.ones(1000, 1000)
        made.append(weakref.ref(big))
        made.append(weakref.ref(x))  # a slice of the request's trace
        raise RuntimeError("boom")

    monkeypatch.setattr(lens, "unembed_stream", failing)
    gc.collect()
    gc.disable()  # only reference counts may free them: what the fix must make enough
    try:
        r = client.post("/api/lens", json={"text": TEXT})
        assert r.status_code == 500 and "boom" in r.json()["error"]
        assert made and all(ref() is None for ref in made), "a failed request's tensors outlived it"
    finally:
        gc.enable()
    assert app.state.passes.budget.held == 0


def test_forget_clears_the_frames_of_an_error_and_of_the_one_it_was_raised_during():
    refs = []

    def inner():
        t = torch.ones(10)
        refs.append(weakref.ref(t))
        raise KeyError

    def outer():
        try:
            inner()
        except KeyError:
            u = torch.ones(10)
            refs.append(weakref.ref(u))
            raise ValueError from None

    try:
        outer()
    except ValueError as e:
        error = e
    gc.disable()
    try:
        forget(error)
        assert all(r() is None for r in refs)
    finally:
        gc.enable()
