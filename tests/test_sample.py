"""Tests for qkv.sample: pick() honours temperature/top-k/top-p, generation is exact and reproducible."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from qkv.core.decode.sample import check_sampling, generate, generate_ids, pick
from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig
from qkv.core.text.tokenizers import CharTokenizer

V = 12


@pytest.fixture(scope="module")
def model() -> GPT:
    torch.manual_seed(0)
    # a large init_std makes the logits far from uniform, so greedy choices are clear-cut
    m = GPT(ModelConfig(d_vocab=V, n_ctx=8, d_model=16, n_heads=2, n_layers=2, init_std=0.5))
    return m.eval()


def gen(g=None):
    return torch.Generator().manual_seed(g) if g is not None else None


# ---------------------------------------------------------------------------- pick


def test_temperature_zero_is_argmax():
    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        logits = torch.randn(50, generator=g)
        assert pick(logits, temperature=0) == int(logits.argmax())
        assert pick(logits, temperature=0, top_k=5, top_p=0.5) == int(logits.argmax())


def test_top_k_1_is_argmax():
    g = torch.Generator().manual_seed(1)
    for _ in range(50):
        logits = torch.randn(30, generator=g)
        assert pick(logits, temperature=5.0, top_k=1, generator=g) == int(logits.argmax())


def test_tiny_top_p_keeps_only_the_most_likely():
    g = torch.Generator().manual_seed(2)
    for _ in range(50):
        logits = torch.randn(30, generator=g) * 0.1  # nearly uniform: without top_p anything goes
        assert pick(logits, temperature=1.0, top_p=1e-6, generator=g) == int(logits.argmax())


def test_seeded_sampling_is_reproducible():
    logits = torch.zeros(100)
    a = [pick(logits, generator=g) for g in [torch.Generator().manual_seed(3)] for _ in range(30)]
    b = [pick(logits, generator=g) for g in [torch.Generator().manual_seed(3)] for _ in range(30)]
    c = [pick(logits, generator=g) for g in [torch.Generator().manual_seed(4)] for _ in range(30)]
    assert a == b
    assert a != c


def test_top_k_2_never_leaves_the_top_2():
    logits = torch.zeros(10)
    logits[3], logits[7] = 0.5, 0.4  # the others together would get ~70% of the mass without top_k
    g = torch.Generator().manual_seed(5)
    counts = Counter(pick(logits, top_k=2, generator=g) for _ in range(2000))
    assert set(counts) == {3, 7}
    # the renormalised probabilities: e^0.5 / (e^0.5 + e^0.4) ~ 0.525
    assert 0.47 < counts[3] / 2000 < 0.58
    counts = Counter(pick(logits, generator=g) for _ in range(2000))
    assert len(counts) == 10  # without top_k every token shows up (the test above can fail)


def test_top_p_keeps_the_smallest_sufficient_set():
    probs = torch.tensor([0.05, 0.5, 0.3, 0.15])
    logits = probs.log()
    g = torch.Generator().manual_seed(6)
    counts = Counter(pick(logits, top_p=0.7, generator=g) for _ in range(2000))
    assert set(counts) == {1, 2}  # 0.5 < 0.7 <= 0.5 + 0.3
    assert 0.55 < counts[1] / 2000 < 0.70  # 0.5 / 0.8 = 0.625
    counts = Counter(pick(logits, top_p=0.45, generator=g) for _ in range(200))
    assert set(counts) == {1}  # 0.5 alone is enough
    counts = Counter(pick(logits, top_p=1.0, generator=g) for _ in range(2000))
    assert set(counts) == {0, 1, 2, 3}


def test_temperature_sharpens_and_flattens():
    logits = torch.tensor([1.0, 0.0, 0.0, 0.0])
    g = torch.Generator().manual_seed(7)
    cold = Counter(pick(logits, temperature=0.1, generator=g) for _ in range(500))
    hot = Counter(pick(logits, temperature=10.0, generator=g) for _ in range(2000))
    assert cold[0] == 500
    assert 0.25 < hot[0] / 2000 < 0.35  # e^0.1 / (e^0.1 + 3) ~ 0.27


def test_tiny_temperature_is_greedy_not_nan():
    g = torch.Generator().manual_seed(8)
    for _ in range(20):
        logits = torch.randn(40, generator=g) * 30
        assert pick(logits, temperature=1e-30, generator=g) == int(logits.argmax())
        assert pick(logits, temperature=1e-30, top_k=3, top_p=0.9, generator=g) == int(logits.argmax())


def test_sampling_follows_the_models_probabilities():
    """pick draws from GPT.next_token_probs (what a trace's probs hold), at its temperature."""
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    g = torch.Generator().manual_seed(9)
    for temperature in (0.5, 1.0, 3.0):
        want = GPT.next_token_probs(logits, temperature)
        counts = Counter(pick(logits, temperature, generator=g) for _ in range(4000))
        got = torch.tensor([counts[i] / 4000 for i in range(4)])
        assert (got - want).abs().max() < 0.03, (temperature, got, want)  # about 4 standard errors


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(temperature=-1.0), "temperature"),
        (dict(temperature=float("nan")), "temperature"),
        (dict(temperature=1000.0), "temperature"),
        (dict(top_k=0), "top_k"),
        (dict(top_k=-3), "top_k"),
        (dict(top_p=0.0), "top_p"),
        (dict(top_p=1.5), "top_p"),
        (dict(top_p=float("nan")), "top_p"),
    ],
)
def test_invalid_sampling_settings(model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        list(generate_ids(model, [1, 2], 3, **kwargs))
    with pytest.raises(ValueError, match=match):
        pick(torch.zeros(V), **kwargs)
    with pytest.raises(ValueError, match=match):
        check_sampling(kwargs.get("temperature", 1.0), kwargs.get("top_k"), kwargs.get("top_p"), 10)


def test_invalid_generation_arguments(model):
    with pytest.raises(ValueError, match="max_new_tokens"):
        list(generate_ids(model, [1], -1))
    with pytest.raises(ValueError, match="empty"):
        list(generate_ids(model, [], 3))


# ---------------------------------------------------------------------------- generation


@pytest.mark.parametrize("n", [0, 1, 5, 7, 8, 9, 30])
def test_generate_ids_yields_exactly_max_new_tokens(model, n):
    ids = list(generate_ids(model, [1, 2, 3], n, seed=0))
    assert len(ids) == n
    assert all(isinstance(i, int) and 0 <= i < V for i in ids)


def test_seeded_generation_is_reproducible(model):
    a = list(generate_ids(model, [1, 2, 3], 20, temperature=1.5, seed=11))
    b = list(generate_ids(model, [1, 2, 3], 20, temperature=1.5, seed=11))
    c = list(generate_ids(model, [1, 2, 3], 20, temperature=1.5, seed=12))
    assert a == b
    assert a != c


@pytest.mark.parametrize("kwargs", [dict(temperature=0), dict(temperature=1.0, seed=3), dict(top_k=3, seed=4)])
def test_long_prompt_is_cropped_from_the_left(model, kwargs):
    long = [i % V for i in range(3, 23)]  # 20 tokens, n_ctx = 8
    assert list(generate_ids(model, long, 12, **kwargs)) == list(generate_ids(model, long[-8:], 12, **kwargs))
    # and the cropped part really is ignored: a different beginning gives the same tokens
    other = [0] * 12 + long[-8:]
    assert list(generate_ids(model, other, 12, **kwargs)) == list(generate_ids(model, long, 12, **kwargs))


def test_cache_gives_the_same_tokens_as_no_cache(model):
    """Past the window (n_ctx = 8) the cached path must recompute exactly what the plain path does."""
    for prompt in ([5], [1, 2, 3, 4, 5, 6, 7], list(range(V))):
        a = list(generate_ids(model, prompt, 25, temperature=0, use_cache=True))
        b = list(generate_ids(model, prompt, 25, temperature=0, use_cache=False))
        assert a == b
        a = list(generate_ids(model, prompt, 25, temperature=1.0, seed=9, use_cache=True))
        b = list(generate_ids(model, prompt, 25, temperature=1.0, seed=9, use_cache=False))
        assert a == b


def test_greedy_generation_follows_the_model(model):
    """Each greedy token is the argmax of a plain forward pass over the (cropped) context."""
    context = [3, 1, 4]
    out = list(generate_ids(model, context, 12, temperature=0))
    for token in out:
        with torch.no_grad():
            expected = int(model(torch.tensor([context[-8:]]))[0, -1].argmax())
        assert token == expected
        context.append(token)


def test_generate_returns_the_decoded_continuation(model):
    tok = CharTokenizer([chr(ord("a") + i) for i in range(V)])
    text = generate(model, tok, "abc", 10, temperature=0)
    ids = list(generate_ids(model, tok.encode("abc"), 10, temperature=0))
    assert text == tok.decode(ids)
    assert len(text) == 10
