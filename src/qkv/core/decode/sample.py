"""Generation: pick the next token from softmax(logits / temperature), one token at a time.
The probabilities are the model's own (GPT.next_token_probs, which a trace's `probs` uses too).

The KV cache keeps every layer's keys and values, so each new token costs one position's work.
The model sees at most n_ctx tokens: once the window is full, each step recomputes it over the
last n_ctx tokens (exactly what a model without a cache would do).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import torch

from qkv.core.io.finite import NonFiniteError, not_finite_error
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.machine import rng
from qkv.core.machine.device import model_device
from qkv.core.model.gpt import GPT
from qkv.core.see.tap import hooked


def pick(
    logits: torch.Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> int:
    """One token id from logits (d_vocab,). temperature 0 means greedy (the arg max).

    top_k keeps the k most likely tokens; top_p keeps the smallest set of most likely tokens whose
    probabilities add up to at least p. The rest get probability 0 before sampling.
    """
    check_sampling(temperature, top_k, top_p, 0)
    return _pick(logits, temperature, top_k, top_p, generator)


LOGITS = phrase("errors.logits")  # what holds NaN when there is no distribution to pick from


def _pick(logits, temperature, top_k, top_p, generator) -> int:
    """pick() without checking the settings again (generation checks them once). NaN or infinite
    logits raise NonFiniteError: found at no cost per step, since the arg max of logits holding a NaN
    is the NaN, and multinomial checks its probabilities itself."""
    if temperature == 0:
        best, token = logits.max(-1)
        if not math.isfinite(best):
            raise not_finite_error(LOGITS)
        return int(token)
    wide = logits.float() if logits.device.type == "mps" else logits.double()  # MPS has no float64
    probs = GPT.next_token_probs(wide, temperature)  # softmax(logits / temperature)
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
    try:
        if generator is not None:
            return int(torch.multinomial(probs, 1, generator=generator))
        with rng.GLOBAL:  # the global generator, which another thread may be seeding (machine/rng.py)
            return int(torch.multinomial(probs, 1))
    except RuntimeError:  # "probability tensor contains either inf, nan or element < 0"
        if torch.isfinite(probs).all():
            raise
        raise not_finite_error(LOGITS) from None


def check_sampling(temperature: float, top_k: int | None, top_p: float | None, max_new_tokens: int) -> None:
    if not temperature >= 0 or temperature > 100:
        raise Refusal.of("errors.temperature_range", got=temperature)
    if top_k is not None and top_k < 1:
        raise Refusal.of("errors.top_k_range", got=top_k)
    if top_p is not None and not 0 < top_p <= 1:
        raise Refusal.of("errors.top_p_range", got=top_p)
    if max_new_tokens < 0 or max_new_tokens > 1_000_000:
        raise Refusal.of("errors.max_new_tokens_range", got=max_new_tokens)


def check_generates(model) -> None:
    """A one-line ValueError for a model that does not continue a prompt (an encoder, a translator)."""
    family = model.family
    if not family.next_token:
        raise Refusal.of("errors.no_next_token", title=family.title)
    if family.translates:
        raise Refusal.of("errors.translates_not_generates")
    if not family.generates:
        raise Refusal.of("errors.does_not_generate", title=family.title)


@torch.inference_mode()
def generate_ids(
    model: GPT,
    prompt_ids: list[int],
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    use_cache: bool = True,
    stop_ids=None,
) -> Iterator[int]:
    """Yield max_new_tokens new token ids, one at a time, continuing prompt_ids (cropped to n_ctx).

    A token of stop_ids (None: the model's own, GPT.stop_ids: a pretrained model's end of text) ends
    the text: it is not yielded, and nothing after it. Works wherever the model's weights are: inputs,
    the cache and the seeded generator are made on that device."""
    check_generates(model)
    check_sampling(temperature, top_k, top_p, max_new_tokens)
    if not prompt_ids:
        raise Refusal.of("errors.prompt_empty")
    device = model_device(model)
    generator = torch.Generator(device).manual_seed(seed) if seed is not None else None
    stops = set(model.stop_ids if stop_ids is None else stop_ids)
    for token, _ in _decode(model, prompt_ids, max_new_tokens, temperature, top_k, top_p, generator, use_cache):
        if token in stops:
            return
        yield token


def _decode(model, prompt_ids, max_new_tokens: int, temperature, top_k, top_p, generator, use_cache: bool = True):
    """Yield (token, the logits it was drawn from) for max_new_tokens new tokens after prompt_ids, one at a
    time (generate_ids without its stop ids). The next token is computed only when it is asked for."""
    n_ctx = model.cfg.n_ctx
    device = model_device(model)
    context = list(prompt_ids)[-n_ctx:]
    # room for the prompt and what is generated (at most n_ctx), not for the model's whole context; a
    # non-causal model lets earlier tokens see later ones, so their cached keys would go stale: no cache
    cache = model.new_cache(capacity=len(context) + max_new_tokens) if use_cache and model.cfg.causal else None
    logits = model(torch.tensor([context], device=device), cache)[0, -1]  # (d_vocab,)
    # the stepper applies no dropout and has no taps: in training mode, or while hooks are on (model.hooks,
    # asked at every token: a generator runs wherever it is consumed), each new token runs the model's
    # forward with the cache instead
    step = model.stepper() if cache is not None and not model.training else None
    for i in range(max_new_tokens):
        try:
            token = _pick(logits, temperature, top_k, top_p, generator)
        except NonFiniteError:
            raise not_finite_error(LOGITS, model) from None
        yield token, logits
        if i == max_new_tokens - 1:
            return
        context.append(token)
        if cache is not None and cache.length < cache.capacity:
            if step is not None and not hooked(model):
                logits = step(token, cache)[0]
            else:
                logits = model(torch.tensor([[token]], device=device), cache)[0, -1]
        else:  # no cache, or the window is full: run the last n_ctx tokens again
            if cache is not None:
                cache.length = 0
            logits = model(torch.tensor([context[-n_ctx:]], device=device), cache)[0, -1]


@torch.inference_mode()
def generate_batch(
    model: GPT,
    prompts: list[list[int]],
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    stop_ids=None,
    should_stop: Callable[[int, list[int]], bool] | None = None,
    return_logits: bool = False,
) -> list:
    """New token ids for several prompts at once: one list per prompt, in order.

    Each row continues its prompt exactly as generate_ids would continue it alone (greedy: the
    same tokens), but one forward per step serves all rows. A row stops after max_new_tokens, at
    a token in stop_ids (which ends its list), or when should_stop(row, its new ids) says so;
    finished rows are no longer extended, so the lists have their own lengths.

    stop_ids: ids that end every row ({0} or [0, 7]), or one collection (or None) per prompt; None:
    the model's own (GPT.stop_ids, a pretrained model's end of text).
    Sampling with a seed is reproducible: row i draws from its own generator seeded seed + i, so it
    samples what generate_ids(prompts[i], seed=seed + i) samples, whatever the other rows do.
    return_logits: give (ids, logits (n_new, d_vocab)) per row instead of the ids alone.

    How: one shared KV cache, right-aligned (_batched); while hooks are on (model.hooks) each row is
    decoded on its own, as generate_ids decodes it, so that a hook sees the same positions either way.
    """
    check_generates(model)
    check_sampling(temperature, top_k, top_p, max_new_tokens)
    if not prompts:
        return []
    for i, prompt in enumerate(prompts):
        if not prompt:
            raise ValueError(f"prompt {i} is empty: give at least one token")
    stops = _stop_sets(model.stop_ids if stop_ids is None else stop_ids, len(prompts))
    device = model_device(model)
    generators = [
        torch.Generator(device).manual_seed(seed + i) if seed is not None else None for i in range(len(prompts))
    ]
    if hooked(model):  # hooks see each new position alone, as generate_ids gives it them: each row on its own
        return [_alone(model, prompt, i, max_new_tokens, temperature, top_k, top_p, generators[i], stops[i],
                       should_stop, return_logits) for i, prompt in enumerate(prompts)]  # fmt: skip
    new, scores = _batched(
        model, prompts, max_new_tokens, temperature, top_k, top_p, generators, stops, should_stop, return_logits
    )
    if return_logits:
        return [
            (ids, torch.stack(s) if s else torch.zeros(0, model.cfg.d_vocab, device=device))
            for ids, s in zip(new, scores)
        ]
    return new


def _batched(model, prompts, max_new_tokens, temperature, top_k, top_p, generators, stops, should_stop, keep_logits):
    """generate_batch's rows decoded together: (new ids, their logits if keep_logits) per row.

    Each prompt is run alone through GPT.forward (the prefill), and its keys and values are copied
    into one shared cache, right-aligned: the shorter prompts are padded on the left, and a row's
    attention never reads its padding slots (a key mask) while its positions count from its own
    first token. From then on GPT.stepper's step adds one token per row per step. The cache holds
    the longest prompt and max_new_tokens (at most n_ctx); when it is full, every row is run again
    from its last n_ctx tokens, the window generate_ids slides (so a row that outgrows n_ctx costs
    one full forward per step, as alone)."""
    device, n_ctx = model_device(model), model.cfg.n_ctx
    seqs = [list(prompt) for prompt in prompts]  # each row's tokens so far: prompt, then new tokens
    new: list[list[int]] = [[] for _ in prompts]
    scores: list[list[torch.Tensor]] = [[] for _ in prompts]
    # a non-causal model's earlier keys change with every new token, and dropout in training mode
    # is not what GPT.stepper computes: then every step runs the windows again
    incremental = model.cfg.causal and not model.training
    step = model.stepper() if incremental else None
    rows = list(range(len(prompts))) if max_new_tokens > 0 else []  # the rows still being extended
    room = min(n_ctx, max((len(s) for s in seqs), default=0) + max_new_tokens)  # the cache's capacity
    if not rows:
        return new, scores
    logits, cache, pad = _prefill(model, [seqs[i][-n_ctx:] for i in rows], device, room)
    while rows:
        tokens = _pick_rows(model, logits, rows, temperature, top_k, top_p, generators)
        keep = []
        for j, (i, token) in enumerate(zip(rows, tokens)):
            new[i].append(token)
            seqs[i].append(token)
            if keep_logits:
                scores[i].append(logits[j])
            if not (
                len(new[i]) == max_new_tokens
                or token in stops[i]
                or (should_stop is not None and should_stop(i, new[i]))
            ):
                keep.append(j)
        if len(keep) < len(rows):  # finished rows leave the batch and the cache
            rows = [rows[j] for j in keep]
            if not rows:
                break
            index = torch.tensor(keep, device=device)
            cache.reorder(index)
            pad = pad[index]
        if not incremental or cache.length == cache.capacity:
            logits, cache, pad = _prefill(model, [seqs[i][-n_ctx:] for i in rows], device, room)
        else:
            logits = _step_rows(step, [seqs[i][-1] for i in rows], cache, pad, device)
    return new, scores


def _pick_rows(model, logits: torch.Tensor, rows: list[int], temperature, top_k, top_p, generators) -> list[int]:
    """The next token of each row still extended (logits (B, d_vocab), one row per entry of `rows`)."""
    try:
        if temperature == 0:
            best, picked = logits.max(-1)
            if not all(map(math.isfinite, best.tolist())):
                raise not_finite_error(LOGITS)
            return picked.tolist()
        return [_pick(logits[j], temperature, top_k, top_p, generators[i]) for j, i in enumerate(rows)]
    except NonFiniteError:
        raise not_finite_error(LOGITS, model) from None


def _step_rows(step, last: list[int], cache, pad: torch.Tensor, device) -> torch.Tensor:
    """One token more for each row (its last, `last`) through GPT.stepper's step, read from the shared
    cache right-aligned: row b's positions count from its first real slot pad[b]. (B, d_vocab)."""
    t = cache.length
    key_mask = None
    if bool(pad.any()):  # slot s holds a real token of row b when s >= pad[b]
        key_mask = torch.arange(t + 1, device=device) >= pad[:, None]  # (B, t + 1)
    return step(torch.tensor(last, device=device), cache, positions=t - pad, key_mask=key_mask)  # (B, d_vocab)


def _alone(model, prompt, row, max_new_tokens, temperature, top_k, top_p, generator, stops, should_stop, logits):
    """One row of generate_batch decoded by itself (_decode, with its KV cache): its ids, or (ids, logits)."""
    new, scores = [], []
    for token, scored in _decode(model, prompt, max_new_tokens, temperature, top_k, top_p, generator):
        new.append(token)
        scores.append(scored)
        if token in stops or (should_stop is not None and should_stop(row, new)):
            break
    if not logits:
        return new
    return new, torch.stack(scores) if scores else torch.zeros(0, model.cfg.d_vocab, device=model_device(model))


def _stop_sets(stop_ids, n: int) -> list[set[int]]:
    """One set of stop ids per row, from None, one collection for all rows, or one per row."""
    if stop_ids is None:
        return [set() for _ in range(n)]
    if isinstance(stop_ids, int):
        return [{stop_ids} for _ in range(n)]
    items = list(stop_ids)
    if all(isinstance(x, int) for x in items):
        return [set(items) for _ in range(n)]
    if len(items) != n:
        raise ValueError(f"stop_ids must be one collection of ids, or one per prompt ({n}); got {len(items)} entries")
    return [set() if x is None else {x} if isinstance(x, int) else set(x) for x in items]


def _prefill(model, windows: list[list[int]], device, capacity: int):
    """Run each window alone and gather the rows' keys and values into one cache, right-aligned.

    Returns (logits (B, d_vocab) of each window's last token, the cache (B rows, room for `capacity`
    tokens or the longest window if longer, length = the longest window), pad (B,): how many slots
    each row leaves empty on the left)."""
    P = max(len(w) for w in windows)
    cache = model.new_cache(len(windows), max(capacity, P))
    logits = []
    for b, window in enumerate(windows):
        one = model.new_cache(capacity=len(window))
        logits.append(model(torch.tensor([window], device=device), one)[0, -1])  # (d_vocab,)
        start = P - len(window)
        for layer in range(len(cache.k)):  # row b's slots start .. P-1 hold its tokens 0 .. len-1
            cache.k[layer][b, :, start:P] = one.k[layer][0, :, : len(window)]
            cache.v[layer][b, :, start:P] = one.v[layer][0, :, : len(window)]
    cache.length = P
    pad = torch.tensor([P - len(w) for w in windows], device=device)
    return torch.stack(logits), cache, pad


def generate_texts(
    model: GPT, tokenizer, prompts: list[str], max_new_tokens: int = 100, stop=None, **kwargs
) -> list[str]:
    """Continuations of several prompts at once (generate_batch), as text.

    stop: a string that ends every continuation, or one string (or None) per prompt; a row stops
    being extended as soon as its text contains its stop string, and the text is cut before it. A
    row that ends at a stop id (generate_batch's stop_ids) is its text without that token."""
    stops = [stop] * len(prompts) if stop is None or isinstance(stop, str) else list(stop)
    if len(stops) != len(prompts):
        raise ValueError(f"stop must be one string, or one per prompt ({len(prompts)}); got {len(stops)}")
    ids = [tokenizer.encode(p) for p in prompts]
    text = lambda i, new: tokenizer.decode(new, prev=ids[i][-1] if ids[i] else None)
    should_stop = lambda i, new: bool(stops[i]) and stops[i] in text(i, new)
    out = generate_batch(model, ids, max_new_tokens, should_stop=should_stop, **kwargs)
    ended = _stop_sets(model.stop_ids if kwargs.get("stop_ids") is None else kwargs["stop_ids"], len(prompts))
    out = [new[:-1] if new and new[-1] in end else new for new, end in zip(out, ended)]  # the end token: no text
    texts = [text(i, new) for i, new in enumerate(out)]
    return [t.split(s, 1)[0] if s else t for t, s in zip(texts, stops)]


def generate(model: GPT, tokenizer, prompt: str, max_new_tokens: int = 100, **kwargs) -> str:
    """The prompt's continuation as text, so that prompt + continuation reads right (with a word
    tokenizer that writes no spaces, it starts with the space after the prompt's last word); see
    generate_ids for the sampling options."""
    prompt_ids = tokenizer.encode(prompt)
    ids = list(generate_ids(model, prompt_ids, max_new_tokens, **kwargs))
    return tokenizer.decode(ids, prev=prompt_ids[-1] if prompt_ids else None)
