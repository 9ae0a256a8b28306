"""Generation: pick the next token from softmax(logits / temperature), one token at a time.
The probabilities are the model's own (GPT.next_token_probs, which a trace's `probs` uses too).

The KV cache keeps every layer's keys and values, so each new token costs one position's work.
The model sees at most n_ctx tokens: once the window is full, each step recomputes it over the
last n_ctx tokens (exactly what a model without a cache would do).
"""

from __future__ import annotations

from typing import Iterator

import torch

from .models.gpt import GPT
from .nn.decode import Decoder


def pick(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
         generator: torch.Generator | None = None) -> int:
    """One token id from logits (d_vocab,). temperature 0 means greedy (the arg max).

    top_k keeps the k most likely tokens; top_p keeps the smallest set of most likely tokens whose
    probabilities add up to at least p. The rest get probability 0 before sampling.
    """
    check_sampling(temperature, top_k, top_p, 0)
    if temperature == 0:
        return int(logits.argmax())
    probs = GPT.next_token_probs(logits.double(), temperature)  # softmax(logits / temperature)
    if top_k is not None and top_k < probs.numel():
        kth = torch.topk(probs, top_k).values[-1]
        probs = probs.masked_fill(probs < kth, 0.0)
        probs = probs / probs.sum()
    if top_p is not None and top_p < 1.0:
        sorted_probs, order = probs.sort(descending=True)
        before = sorted_probs.cumsum(0) - sorted_probs  # probability mass of the tokens ranked above
        drop = before >= top_p
        drop[0] = False  # the most likely token always stays, however small top_p is
        sorted_probs[drop] = 0.0
        probs = torch.zeros_like(probs).scatter_(0, order, sorted_probs)
    return int(torch.multinomial(probs, 1, generator=generator))


def check_sampling(temperature: float, top_k: int | None, top_p: float | None, max_new_tokens: int) -> None:
    if not temperature >= 0 or temperature > 100:
        raise ValueError(f"temperature must be between 0 and 100; got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be >= 1; got {top_k}")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1]; got {top_p}")
    if max_new_tokens < 0 or max_new_tokens > 1_000_000:
        raise ValueError(f"max_new_tokens must be between 0 and 1000000; got {max_new_tokens}")


def check_generates(model) -> None:
    """A one-line ValueError for a model that has no next-token distribution (an encoder)."""
    if not model.has_lm_head:
        raise ValueError("this model is an encoder: it outputs one vector per token, not a next-token "
                         "distribution, so it cannot generate text (qkv explain and qkv serve show what it computes)")
    if model.cfg.arch == "seq2seq":
        raise ValueError("this model translates: it writes a target sentence for a source sentence rather than "
                         "continuing a prompt (use qkv translate)")


@torch.inference_mode()
def generate_ids(model: GPT, prompt_ids: list[int], max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None, seed: int | None = None,
                 use_cache: bool = True) -> Iterator[int]:
    """Yield max_new_tokens new token ids, one at a time, continuing prompt_ids (cropped to n_ctx)."""
    check_generates(model)
    check_sampling(temperature, top_k, top_p, max_new_tokens)
    if not prompt_ids:
        raise ValueError("the prompt is empty: give at least one token")
    n_ctx = model.cfg.n_ctx
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    context = list(prompt_ids)[-n_ctx:]
    # a non-causal model lets earlier tokens see later ones, so their cached keys would go stale
    cache = model.new_cache() if use_cache and model.cfg.causal else None
    logits = model(torch.tensor([context]), cache)[0, -1]  # (d_vocab,)
    decoder = Decoder(model) if cache is not None and not model.training else None
    for i in range(max_new_tokens):
        token = pick(logits, temperature, top_k, top_p, generator)
        yield token
        if i == max_new_tokens - 1:
            return
        context.append(token)
        if cache is not None and cache.length < n_ctx:
            logits = decoder.step(token, cache) if decoder else model(torch.tensor([[token]]), cache)[0, -1]
        else:  # no cache, or the window is full: run the last n_ctx tokens again
            if cache is not None:
                cache.length = 0
            logits = model(torch.tensor([context[-n_ctx:]]), cache)[0, -1]


def generate(model: GPT, tokenizer, prompt: str, max_new_tokens: int = 100, **kwargs) -> str:
    """The prompt's continuation as text, so that prompt + continuation reads right (with a word
    tokenizer that writes no spaces, it starts with the space after the prompt's last word); see
    generate_ids for the sampling options."""
    prompt_ids = tokenizer.encode(prompt)
    ids = list(generate_ids(model, prompt_ids, max_new_tokens, **kwargs))
    return tokenizer.decode(ids, prev=prompt_ids[-1] if prompt_ids else None)
