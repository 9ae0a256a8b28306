"""Head detector: four scores per head, measured on repeated random tokens, as TransformerLens defines them.

Each sequence is a first token, then n random tokens, then the same n again:  [f, r_1 .. r_n, r_1 .. r_n].
For a kind of head, a detection pattern D (T, T) marks the keys such a head would look at from each
query (TransformerLens's head_detector: its patterns, its "mul" score, its defaults: nothing excluded):

    previous    D[i, i-1] = 1                           the token just before
    duplicate   D[i, j] = 1 for j < i, tok_j = tok_i    an earlier copy of the query's own token
    induction   D[i, j] = 1 for j <= i, tok_{j-1} = tok_i, j >= 1
                                                        the token after an earlier copy ("A B ... A -> B")
    first       D[i, 0] = 1                             position 0 (qkv's own kind, the same score)

    score = sum_ij A[i, j] D[i, j] / sum_ij A[i, j]     per sequence, then the mean over sequences

A is the head's pattern; its rows sum to 1, so the score is the head's weight on the marked keys, averaged
over all T queries (those with no marked key give 0: a perfect induction or duplicate head scores about
n / T ~ 0.5, a perfect previous-token head (T - 1) / T, a perfect first-token head 1). `baselines[kind]`
is the score of a head that spreads its weight evenly over the keys it can see, on the same tokens.

    s = head_scores(model, tokenizer)      # s.previous, s.duplicate, s.induction, s.first: (n_layers, n_heads)
    s.best("induction")                    # (layer, head, score)
    s.to_json()                            # kind "head-scores"

The random tokens come from the model's vocabulary, without the tokenizer's special tokens and the
embedding's padding rows; the first token is the one the tokenizer starts every text with, if it adds
one (Llama's <|begin_of_text|>), else one more random token. Deterministic for a seed. The work is
bounded (SCORE_WORK parameters x tokens) so that a 500M-parameter model is measured in a few seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from qkv.analysis.inputs import check_gpt, check_ids_dtype
from qkv.core.io.document import header
from qkv.core.io.shown import Shown
from qkv.core.machine.device import model_device
from qkv.core.model import evaluating
from qkv.core.see.indices import TextError

KINDS = ("previous", "duplicate", "induction", "first")
N_SEQS = 8  # sequences per measurement, at most
HALF = 24  # random tokens before the repeat: T = 1 + 2 * HALF = 49 (less where n_ctx is shorter)
MIN_HALF = 2  # the shortest repeat an induction score means anything on
# parameters x tokens one measurement may cost: Qwen2.5-0.5B (494 M parameters) gets 4 sequences of 49 tokens
# (0.8 s for its forward on two idle CPU cores, 3 to 15 s while others share them; ~40% of it is the
# unembedding, which the detector does not read); a 1B model 2 of them; a larger one 1
SCORE_WORK = 10**11


def detection_patterns(tokens: torch.Tensor) -> dict[str, torch.Tensor]:
    """The four detection patterns of one sequence `tokens` (T,): kind -> D (T, T) of 0s and 1s (float64)."""
    T = tokens.shape[0]
    same = tokens[:, None] == tokens[None, :]  # (T, T): token i is token j
    duplicate = torch.tril(same, diagonal=-1).double()  # earlier copies only: the query itself is not one
    induction = torch.zeros(T, T, dtype=torch.float64)
    induction[:, 1:] = duplicate[:, :-1]  # one key to the right of each earlier copy
    first = torch.zeros(T, T, dtype=torch.float64)
    first[:, 0] = 1.0
    previous = torch.diag(torch.ones(T - 1, dtype=torch.float64), diagonal=-1)
    return {"previous": previous, "duplicate": duplicate, "induction": torch.tril(induction), "first": first}


def score(patterns: torch.Tensor, D: torch.Tensor) -> torch.Tensor:
    """sum_ij A[i, j] D[i, j] / sum_ij A[i, j] for every head: patterns (..., T, T), D (T, T) -> (...)."""
    A = patterns.double()
    return (A * D).sum((-1, -2)) / A.sum((-1, -2))


def uniform_pattern(T: int, causal: bool) -> torch.Tensor:
    """The pattern of a head that spreads its weight evenly over the keys it can see (T, T)."""
    if not causal:
        return torch.full((T, T), 1.0 / T, dtype=torch.float64)
    seen = torch.tril(torch.ones(T, T, dtype=torch.float64))
    return seen / seen.sum(-1, keepdim=True)


def usable_ids(model, tokenizer) -> torch.Tensor:
    """The ids random tokens are drawn from: the model's vocabulary (the tokenizer's part of it, if the
    embedding has padding rows beyond it), without the tokenizer's special tokens."""
    n = model.cfg.d_vocab if tokenizer is None else min(model.cfg.d_vocab, tokenizer.vocab_size)
    special = set(getattr(tokenizer, "special", ()) or ())
    return torch.tensor([i for i in range(n) if i not in special], dtype=torch.long)


def start_token(tokenizer) -> int | None:
    """The token the tokenizer puts before every text (its encoding of ""), or None if it adds none."""
    if tokenizer is None:
        return None
    try:
        ids = tokenizer.encode("")
    except ValueError:
        return None
    return ids[0] if len(ids) == 1 else None


def repeated_tokens(model, tokenizer=None, n_seqs: int = N_SEQS, half: int = HALF, seed: int = 0) -> torch.Tensor:
    """(n_seqs, 1 + 2 * half) token ids: [first, r_1 .. r_half, r_1 .. r_half], the r distinct where the
    vocabulary allows (so that the only repeats are the planned ones), drawn with torch's generator."""
    pool = usable_ids(model, tokenizer)
    if len(pool) < 2:
        raise TextError.of("interpret.scores_vocab", n=len(pool))
    start = start_token(tokenizer)
    g = torch.Generator().manual_seed(seed)
    rows = []
    for _ in range(n_seqs):
        if len(pool) >= half + 1:
            r = pool[torch.randperm(len(pool), generator=g)[: half + 1]]  # (half + 1,) distinct
        else:
            r = pool[torch.randint(len(pool), (half + 1,), generator=g)]
        first = r[:1] if start is None else torch.tensor([start])
        rows.append(torch.cat([first, r[1:], r[1:]]))
    return torch.stack(rows)  # (n_seqs, T)


@dataclass(repr=False)
class HeadScores(Shown):
    """The four (n_layers, n_heads) tables of the head detector (module docstring), float64."""

    previous: torch.Tensor  # weight on the token just before
    duplicate: torch.Tensor  # weight on earlier copies of the query's own token
    induction: torch.Tensor  # weight on the token after an earlier copy of the query's token
    first: torch.Tensor  # weight on position 0
    baselines: dict[str, float]  # each kind's score for a head that spreads its weight evenly
    tokens: torch.Tensor  # (n_sequences, T): what was measured
    seed: int | None = None  # None: tokens given by the caller
    shown_as = "head-scores"  # a notebook's display (qkv.apps.displays); not a field

    def brief(self) -> str:
        best = ", ".join(f"{k}=L{L}H{h}" for k in KINDS for L, h, _ in [self.best(k)])
        return f"heads={tuple(self.previous.shape)}, best: {best}"

    def __getitem__(self, kind: str) -> torch.Tensor:
        if kind not in KINDS:
            raise KeyError(f"no score {kind!r}: one of {', '.join(KINDS)}")
        return getattr(self, kind)

    def best(self, kind: str) -> tuple[int, int, float]:
        """(layer, head, score) of the head with the highest score of this kind."""
        table = self[kind]
        n = int(table.argmax())
        layer, head = divmod(n, table.shape[1])
        return layer, head, float(table[layer, head])

    def to_json(self) -> dict:
        """The kind-"head-scores" document: every table as nested lists (layer, head), with the baselines."""
        B, T = self.tokens.shape
        return {
            **header("head-scores"),
            "kinds": list(KINDS),
            "scores": {k: self[k].tolist() for k in KINDS},
            "baselines": dict(self.baselines),
            "best": {k: dict(zip(("layer", "head", "score"), self.best(k))) for k in KINDS},
            "n_sequences": B,
            "seq_len": T,
            "seed": self.seed,
            "tokens": self.tokens.tolist(),
        }


def bounded_n_seqs(model, T: int, n_seqs: int = N_SEQS, work: int | None = None) -> int:
    """How many sequences of T tokens fit the work bound (parameters x tokens; None: SCORE_WORK), at least 1."""
    params = sum(p.numel() for p in model.parameters())
    return max(1, min(n_seqs, (SCORE_WORK if work is None else work) // (params * T)))


@torch.no_grad()
def head_scores(
    model,
    tokenizer=None,
    *,
    seed: int = 0,
    n_seqs: int | None = None,
    half: int = HALF,
    tokens: torch.Tensor | None = None,
) -> HeadScores:
    """The four head-detector tables of a GPT (module docstring), on `n_seqs` repeated random sequences
    (None: N_SEQS, fewer for a large model: SCORE_WORK) of 1 + 2 * half tokens (fewer where n_ctx is
    shorter), or on the caller's `tokens` (B, T) as they are."""
    check_gpt(model, "interpret.scores_family")
    cfg = model.cfg
    if tokens is None:
        half = min(half, (cfg.n_ctx - 1) // 2)
        if half < MIN_HALF:
            raise TextError.of("interpret.scores_short", need=1 + 2 * MIN_HALF, n_ctx=cfg.n_ctx)
        T = 1 + 2 * half
        n = bounded_n_seqs(model, T) if n_seqs is None else n_seqs
        tokens = repeated_tokens(model, tokenizer, n, half, seed)
    else:
        tokens = torch.as_tensor(tokens)
        check_ids_dtype(tokens)
        if tokens.dim() == 1:
            tokens = tokens[None]  # (1, T)
        bad = tokens.dim() != 2 or tokens.shape[1] < 2 or tokens.shape[1] > cfg.n_ctx
        if bad or tokens.dtype.is_floating_point or int(tokens.min()) < 0 or int(tokens.max()) >= cfg.d_vocab:
            raise TextError.of(
                "interpret.scores_tokens", shape=tuple(tokens.shape), n_ctx=cfg.n_ctx, last=cfg.d_vocab - 1
            )
        seed = None
    B, T = tokens.shape
    names = [f"blocks.{L}.attn.hook_pattern" for L in range(cfg.n_layers)]
    with evaluating(model):
        _, tr = model.run_with_trace(tokens.to(model_device(model)), names=names)
    D = [detection_patterns(row) for row in tokens]  # per sequence: kind -> (T, T)
    tables = {k: torch.zeros(cfg.n_layers, cfg.n_heads, dtype=torch.float64) for k in KINDS}
    for L, name in enumerate(names):
        A = tr[name]  # (B, n_heads, T, T)
        for k in KINDS:
            tables[k][L] = torch.stack([score(A[b], D[b][k]) for b in range(B)]).mean(0)  # (n_heads,)
    U = uniform_pattern(T, cfg.causal)
    baselines = {k: float(torch.stack([score(U, D[b][k]) for b in range(B)]).mean()) for k in KINDS}
    return HeadScores(**tables, baselines=baselines, tokens=tokens.cpu(), seed=seed)
