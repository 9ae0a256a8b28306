"""How well a model predicts a text: mean loss in nats per token, perplexity and bits per byte.

    ev = evaluate_text(model, tokenizer, text)            # windows of min(n_ctx, 1024) tokens
    ev = evaluate_text(model, tokenizer, text, stride=256)  # sliding windows, 256 new tokens each

The text's ids x_0 .. x_{N-1} (as the tokenizer encodes the whole text: with the BOS it adds, if any)
are scored once each from x_1 on: x_0 has nothing before it and is never scored. A window holds at
most ctx + 1 ids x_b .. x_e: the model reads x_b .. x_{e-1} (at most ctx tokens) and predicts
x_{b+1} .. x_e.

- Windows (the default): b = 0, ctx, 2 ctx, ...; consecutive windows share one id (the last read
  of one is the first of the next), so every x_i with i >= 1 is predicted exactly once, after the
  (i - b) ids of its window. ceil((N - 1) / ctx) windows.
- Stride S (1 <= S <= ctx): b = 0, S, 2 S, ... until a window reaches x_{N-1}; each window scores
  only the ids no window before it scored, so after the first window the first ctx - S predictions
  of each are context only and every x_i is predicted after at least ctx - S ids (Hugging Face's
  "perplexity of fixed-length models" does the same). S = ctx is the default.

loss = (sum over scored i of -ln p(x_i | the ids before it in its window)) / tokens, in nats;
perplexity = e^loss; bits_per_byte = total nats / (ln 2 * bytes), where bytes counts the UTF-8
bytes of the text less those its first token writes (tokenizer.decode([x_0])), or less nothing when
x_0 is a BOS the tokenizer put in front. For a tokenizer that writes the text back unchanged (one
token per character, byte-level BPE, SentencePiece) that is exactly the bytes of the scored tokens,
so a character tokenizer and a byte-level BPE count the same bytes of the same text except for their
first tokens ("T" against "The"); for one that does not (the bundled word tokenizer folds case and
drops spaces) it is still the text's bytes, so models with different tokenizers are divided by the
same bytes.

Memory: ids are a tensor of int64 (8 bytes a token); batch is cut so that batch x window x d_vocab
is at most LOGITS_BUDGET floats (never below one window). The forward pass stops before the
unembedding; the logits of the scored positions alone are made from its output, at most
LOGITS_BUDGET floats at a time (and the cross-entropy's log-softmax of them), and the loss is a
float32 cross-entropy summed slice by slice. (A model whose logits are soft-capped, Gemma 2, makes
its batch's logits whole: batch x window x d_vocab, as bounded.)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from qkv.core.io.files import MB
from qkv.core.io.refusal import Refusal
from qkv.core.io.shown import Shown
from qkv.core.machine.device import model_device
from qkv.core.model import evaluating

DEFAULT_CTX = 1024  # the window when none is given: the model's n_ctx, at most this
LOGITS_BUDGET = 64 * 2**20  # floats of logits made at once: batch x window x d_vocab (256 MiB in float32)
MAX_BATCH = 16  # windows run at once when --batch is not given (fewer where the budget says so)
MAX_TEXT_BYTES = 64 * MB  # a text read whole and encoded at once: its ids are held as a list, then a tensor
IGNORE = -100  # a target that is read but not scored


@dataclass(repr=False)
class Evaluation(Shown):
    """What evaluate_text measured (see the module docstring for each figure)."""

    loss: float  # mean nats per scored token
    perplexity: float  # e^loss
    bits_per_byte: float  # total nats / (ln 2 * bytes)
    tokens: int  # tokens scored (the text's ids less the first)
    bytes: int  # UTF-8 bytes of the scored tokens
    windows: int
    ctx: int  # tokens a window reads, at most
    stride: int | None  # new tokens per window; None: windows that do not overlap
    shown_as = "evaluation"  # a notebook's display; not a field

    def brief(self) -> str:
        return f"loss={self.loss:.4f}, perplexity={self.perplexity:.3f}, bits_per_byte={self.bits_per_byte:.4f}"

    def to_json(self) -> dict:
        keys = ("loss", "perplexity", "bits_per_byte", "tokens", "bytes", "windows", "ctx", "stride")
        return {k: getattr(self, k) for k in keys}


def check_evaluates(model) -> None:
    """Refuse a model that does not predict the next token of a text: an encoder (BERT: no unembedding)
    or a translation model (it predicts a translation of a source, not the text's next token)."""
    family = model.family
    if not family.next_token:
        raise Refusal.of("evaluate.no_next_token")
    if family.translates:
        raise Refusal.of("evaluate.translates")


def window_ctx(model, ctx: int | None) -> int:
    """The tokens a window reads: `ctx` (1 .. n_ctx), or min(n_ctx, DEFAULT_CTX)."""
    n_ctx = model.cfg.n_ctx
    if ctx is None:
        return min(n_ctx, DEFAULT_CTX)
    if not 1 <= ctx <= n_ctx:
        raise Refusal.of("evaluate.ctx_range", got=ctx, n_ctx=n_ctx)
    return ctx


def windows(n: int, ctx: int, stride: int | None = None) -> Iterator[tuple[int, int, int]]:
    """(b, e, s) for each window over ids x_0 .. x_{n-1}: it reads x_b .. x_{e-1}, predicts
    x_{b+1} .. x_e (e - b <= ctx) and scores x_s .. x_e (the ones no window before scored)."""
    step = ctx if stride is None else stride
    b, scored_to = 0, 0  # x_1 .. x_scored_to are scored
    while scored_to < n - 1:
        e = min(b + ctx, n - 1)
        yield b, e, scored_to + 1
        b, scored_to = b + step, e


def count_windows(n: int, ctx: int, stride: int | None = None) -> int:
    """len(list(windows(n, ctx, stride))), without making them: the first window with b + ctx >= n - 1 is the last."""
    step = ctx if stride is None else stride
    return 0 if n < 2 else max(0, -(-(n - 1 - ctx) // step)) + 1


def scored_bytes(tokenizer, text: str, ids: list[int]) -> int:
    """UTF-8 bytes of `text` less those its first token x_0 writes (tokenizer.decode([x_0])): nothing for a
    special token the tokenizer puts in front (a BOS) that the text does not itself start with."""
    first = ids[0]
    if first in getattr(tokenizer, "special", ()) and not text.startswith(tokenizer.decode([first])):
        return len(text.encode("utf-8"))
    written = tokenizer.decode([first]).encode("utf-8")
    if b"\xef\xbf\xbd" in written and b"\xef\xbf\xbd" not in tokenizer.token_bytes(first):
        written = tokenizer.token_bytes(first)  # a piece of a character: its own bytes, not U+FFFD's three
    return max(0, len(text.encode("utf-8")) - len(written))


def encode_text(tokenizer, text: str) -> list[int]:
    """The ids of `text` (at most MAX_TEXT_BYTES of UTF-8), refused when there is no token to score."""
    size = len(text.encode("utf-8"))
    if size > MAX_TEXT_BYTES:
        raise Refusal.of("evaluate.text_too_long", bytes=size, most=MAX_TEXT_BYTES)
    if not text.strip():
        raise Refusal.of("evaluate.text_empty")
    ids = tokenizer.encode(text)
    if len(ids) < 2:
        raise Refusal.of("evaluate.text_too_short", n=len(ids))
    return ids


def batch_rows(ctx: int, d_vocab: int, batch: int | None) -> int:
    """Windows run at once: `batch` (or MAX_BATCH), at most LOGITS_BUDGET // (ctx * d_vocab), at least 1."""
    if batch is not None and batch < 1:
        raise Refusal.of("evaluate.batch_range", got=batch)
    fits = max(1, LOGITS_BUDGET // (ctx * d_vocab))
    return min(MAX_BATCH if batch is None else batch, fits)


@torch.inference_mode()
def _batch_nats(model, ids: torch.Tensor, group: list[tuple[int, int, int]]) -> float:
    """Summed -ln p of the scored targets of windows of one length: float32 cross-entropy, reduction sum."""
    device = model_device(model)
    rows = torch.stack([ids[b:e] for b, e, _ in group]).to(device)  # (B, T): what each window reads
    targets = torch.stack([ids[b + 1 : e + 1] for b, e, _ in group]).clone()  # (B, T): x_{b+1} .. x_e
    for row, (b, _, s) in enumerate(group):
        targets[row, : s - b - 1] = IGNORE  # predictions an earlier window made: context only
    targets = targets.to(device)
    head = getattr(model, "unembed", None)
    if model.cfg.output_logits_soft_cap is not None or not isinstance(head, torch.nn.Linear):
        logits = model(rows).flatten(0, 1).float()  # (B*T, d_vocab)
        return F.cross_entropy(logits, targets.flatten(), reduction="sum", ignore_index=IGNORE).item()
    scored = targets.flatten() != IGNORE  # (B*T,)
    h = _final_residual(model, rows).flatten(0, 1)[scored]  # (n scored, d_model)
    y = targets.flatten()[scored]  # (n scored,)
    step = max(1, LOGITS_BUDGET // model.cfg.d_vocab)  # positions whose logits are made at once
    total = 0.0
    for i in range(0, len(y), step):
        logits = head(h[i : i + step]).float()  # (step, d_vocab): h W_out + b
        total += F.cross_entropy(logits, y[i : i + step], reduction="sum").item()
    return total


def _final_residual(model, rows: torch.Tensor) -> torch.Tensor:
    """The normalised residual the unembedding reads, (B, T, d_model): the forward pass with the
    unembedding left out for its length (put back after), so that only the scored positions' logits
    are made, a slice at a time."""
    head = model.unembed
    model.unembed = torch.nn.Identity()
    try:
        return model(rows)  # (B, T, d_model)
    finally:
        model.unembed = head


def _groups(n: int, ctx: int, stride: int | None, rows: int) -> Iterator[list[tuple[int, int, int]]]:
    """The windows, `rows` at a time, each group of one length (only the last window may be shorter)."""
    group: list[tuple[int, int, int]] = []
    for w in windows(n, ctx, stride):
        if group and (len(group) == rows or w[1] - w[0] != group[0][1] - group[0][0]):
            yield group
            group = []
        group.append(w)
    if group:
        yield group


def evaluate_ids(model, x: torch.Tensor, ctx: int, stride: int | None, rows: int, progress=None) -> float:
    """Total nats of x_1 .. x_{N-1} (x: the ids, (N,)) over the windows; `progress` (a tqdm, or None) is
    told each window."""
    total = 0.0
    with evaluating(model):
        for group in _groups(len(x), ctx, stride, rows):
            total += _batch_nats(model, x, group)
            if progress is not None:
                progress.update(len(group))
    return total


def evaluate_text(
    model,
    tokenizer,
    text: str,
    stride: int | None = None,
    ctx: int | None = None,
    batch: int | None = None,
    progress: bool = False,
) -> Evaluation:
    """Score `text` with `model` (see the module docstring): loss (nats/token), perplexity, bits per byte."""
    check_evaluates(model)
    ctx = window_ctx(model, ctx)
    if stride is not None and not 1 <= stride <= ctx:
        raise Refusal.of("evaluate.stride_range", got=stride, ctx=ctx)
    ids = encode_text(tokenizer, text)
    n_bytes = scored_bytes(tokenizer, text, ids)
    x = torch.tensor(ids, dtype=torch.long)  # (N,): 8 bytes a token, the list let go
    del ids
    n_windows = count_windows(len(x), ctx, stride)
    rows = batch_rows(ctx, model.cfg.d_vocab, batch)
    bar = _progress(n_windows) if progress else None
    try:
        nats = evaluate_ids(model, x, ctx, stride, rows, bar)
    finally:
        if bar is not None:
            bar.close()
    tokens = len(x) - 1
    loss = nats / tokens
    bpb = nats / (math.log(2) * n_bytes) if n_bytes else math.inf
    return Evaluation(loss, math.exp(min(loss, 700.0)), bpb, tokens, n_bytes, n_windows, ctx, stride)


def _progress(total: int):
    import sys

    from tqdm import tqdm

    from qkv.core.io.refusal import phrase, said

    unit = said(phrase("evaluate.unit"))
    return tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True, mininterval=0.25)
