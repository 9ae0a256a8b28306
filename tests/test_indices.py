"""One rule for every layer, head and token a user gives (core.indices): -n <= i < n, a negative one
counting from the end. Every entry point answers -1 as it answers n - 1, and refuses -n - 1 and n
with the same one-line message."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from qkv import GPT, ModelConfig
from qkv.analysis.ablate import ablate
from qkv.analysis.explain import explain
from qkv.analysis.origin import origin
from qkv.analysis.transform import head_matrices
from qkv.apps.web.server import create_app
from qkv.core.see.indices import TextError, check_heads, check_index, check_layer_head, check_token
from qkv.core.text.tokenizers import CharTokenizer

TEXT = "abcab"


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    tok = CharTokenizer.train("abc")
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=8, d_model=16, n_heads=2, n_layers=3, init_std=0.3)).eval()
    return model, tok


def test_the_rule():
    assert [check_index(i, 4, "layer", "") for i in (0, 3, -1, -4)] == [0, 3, 3, 0]
    for bad in (4, -5):
        with pytest.raises(TextError, match=rf"layer {bad} is out of range: four \(use 0\.\.3 or -4\.\.-1\)"):
            check_index(bad, 4, "layer", "four")
    assert check_index(np.int64(-1), 4, "layer", "") == 3 and check_index(torch.tensor(2), 4, "layer", "") == 2
    for bad in (True, 1.0, "1", None, torch.tensor(1.5)):
        with pytest.raises(TextError, match="layer must be an integer"):
            check_index(bad, 4, "layer", "four")
    assert issubclass(TextError, ValueError)  # the CLI's one-line errors catch it as before


def test_layers_count_the_blocks_of_the_stack_asked_for():
    cfg = ModelConfig(arch="seq2seq", n_layers=2, n_encoder_layers=5, d_model=16, n_heads=2)
    assert check_layer_head(cfg, -1, -1) == (1, 1)  # the decoder (the last stack) by default
    assert check_layer_head(cfg, -1, None, "encoder") == (4, None)
    with pytest.raises(TextError, match="the decoder has 2 layers"):
        check_layer_head(cfg, 2, 0)
    with pytest.raises(KeyError, match="no stack 'middle'"):
        check_layer_head(cfg, 0, 0, "middle")
    assert check_heads(ModelConfig(n_layers=3, n_heads=2), [[-1, -1], (2, 1), [0, 0]]) == [(0, 0), (2, 1)]
    for half in ([None, 0], (1, None)):  # a pair names a layer and a head, never one of them alone
        with pytest.raises(TextError, match="pair"):
            check_heads(ModelConfig(n_layers=3, n_heads=2), [half])
    assert check_token(-1, 5) == 4


def test_every_analysis_reads_minus_one_as_the_last(tiny):
    model, tok = tiny
    L, H, T = model.cfg.n_layers, model.cfg.n_heads, len(TEXT)
    assert explain(model, tok, TEXT, layer=-1, head=-1, token=-1) == explain(model, tok, TEXT, L - 1, H - 1, T - 1)
    assert origin(model, tok, TEXT, -1, -1, -1) == origin(model, tok, TEXT, L - 1, H - 1, T - 1)
    assert ablate(model, tok, TEXT, [[-1, -1]], token=-1) == ablate(model, tok, TEXT, [[L - 1, H - 1]], token=T - 1)
    last = head_matrices(model, L - 1, H - 1)
    assert all(torch.equal(m, last[k]) for k, m in head_matrices(model, -1, -1).items())
    _, trace = model.run_with_trace(torch.tensor([tok.encode(TEXT)]))
    assert torch.equal(trace["pattern", -1], trace["pattern", L - 1])
    assert torch.equal(trace["pattern", np.int64(1)], trace["pattern", 1])  # a numpy index, as an argmax gives
    for call in (
        lambda: explain(model, tok, TEXT, layer=-L - 1, head=0),
        lambda: origin(model, tok, TEXT, -L - 1, 0, 0),
        lambda: ablate(model, tok, TEXT, [[-L - 1, 0]]),
        lambda: head_matrices(model, -L - 1, 0),
    ):
        with pytest.raises(TextError, match=f"layer {-L - 1} is out of range: the model has {L} layers"):
            call()
    with pytest.raises(KeyError, match=f"layer {L} is out of range"):
        trace["pattern", L]


def test_every_endpoint_reads_minus_one_as_the_last(tiny):
    model, tok = tiny
    client = TestClient(create_app(model, tok), base_url="http://127.0.0.1:8000")
    L, H, T = model.cfg.n_layers, model.cfg.n_heads, len(TEXT)
    for path, body, last in (
        (
            "/api/explain",
            {"text": TEXT, "layer": -1, "head": -1, "token": -1},
            {"layer": L - 1, "head": H - 1, "token": T - 1},
        ),
        (
            "/api/origin",
            {"text": TEXT, "layer": -1, "head": -1, "token": -1},
            {"layer": L - 1, "head": H - 1, "token": T - 1},
        ),
        ("/api/ablate", {"text": TEXT, "heads": [[-1, -1]], "token": -1}, {"heads": [[L - 1, H - 1]], "token": T - 1}),
    ):
        got, want = client.post(path, json=body), client.post(path, json={**body, **last})
        assert got.status_code == want.status_code == 200, (path, got.text)
        assert got.json() == want.json(), path
        bad = client.post(path, json={**body, "token": T})
        assert bad.status_code == 400 and f"token {T} is out of range" in bad.json()["error"], path
