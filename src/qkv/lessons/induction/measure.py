"""Lesson: induction heads — a two-layer model suddenly learns to copy, a one-layer model never does.

Olsson et al. (2022, "In-context learning and induction heads") found that during training a
Transformer of two or more layers goes through a short phase change: an *induction head* forms (on
"A B … A" it looks from the second A at the token after the first A, and predicts B), and at the same
moment the loss on the later tokens of a context drops well below the loss on the early ones. A
one-layer model forms no such head: finding "the token after the earlier A" needs a head of an
earlier layer to have written "my previous token was A" into each position first (a previous-token
head), which the induction head's keys then read (K-composition).

The experiment, at CPU scale. Two attention-only models (mlp="none": x = x + Attn(LN1(x)) per block),
one of 1 layer and one of 2, are trained character by character on the same text, with the same
seed, batches, steps and learning rate. The text is tiny Shakespeare where it is found, else Python's
own documentation (training_text). Natural text repeats itself too rarely for induction heads to
pay off within a CPU minute (on it they form after many millions of tokens), so in every training
window one stretch of REPEAT characters from its first half is written a second time at a random
later place (`with_repeat`); the model is never told where. Every PROBE_EVERY steps both models are
measured on repeated random tokens [f, r_1 .. r_n, r_1 .. r_n] (qkv.analysis.head_scores):

    induction score of a head   TransformerLens's head detector: the weight A[i, j] it puts on the
                                token after an earlier copy of token i, over all its weight (all
                                queries; a perfect induction head scores about n / T ~ 0.5)
    first-half loss             mean cross-entropy of r_2 .. r_n where they first appear
    second-half loss            mean cross-entropy of the same r_2 .. r_n where they come again
    in-context gap              second-half loss - first-half loss (negative: the context helped)

(Olsson's "in-context learning score" is the loss at token 500 of a natural text minus the loss at
token 50; the gap here asks the same on random tokens, which nothing but the context can predict.)
After training, each head of the two-layer model is switched off in turn (qkv.heads_off: z_h = 0) and
the two half losses are measured again.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

import torch
import torch.nn.functional as F

from qkv.analysis.ablate import heads_off
from qkv.analysis.head_scores import detection_patterns, head_scores, repeated_tokens, score, uniform_pattern
from qkv.core.machine import threads
from qkv.core.model import evaluating
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.text import corpus
from qkv.core.text.tokenizers import train_tokenizer
from qkv.lessons.common.training import fit
from qkv.lessons.induction.result import Ablation, Best, Model, Probe, Result, Rise

NEEDS_MODEL = False
READS = ()  # it reads no model: it trains its own
# tiny Shakespeare (karpathy/char-rnn), where a checkout keeps it beside the repository (shared/data);
# a package installed elsewhere has no copy and trains on Python's documentation instead (training_text)
SHAKESPEARE = Path(__file__).resolve().parents[5] / "shared" / "data" / "tinyshakespeare.txt"
SOURCES = ("shakespeare", "python_docs", "corpus")  # the texts it may train on, in the order it looks for them
N_SENTENCES = 20000  # of the built-in English corpus, the last resort
MODEL = {"n_ctx": 64, "d_model": 64, "n_heads": 2, "mlp": "none"}
LAYERS = (1, 2)  # the two models: number of layers
VARIANTS = ("one", "two")  # their names in the numbers, in the order of LAYERS
TRAIN = {"steps": 3000, "batch_size": 16, "lr": 2e-3, "min_lr": 2e-4, "warmup_steps": 30}
REPEAT = (24, 32)  # shortest and longest stretch written again in each training window (characters)
ROLES = ("induction", "previous", "other")  # what an ablated head is (_role)
PROBE_EVERY = 100  # steps between measurements (and one before the first step)
N_SEQS, HALF = 16, 24  # repeated random sequences: how many, and n (T = 1 + 2n = 49 <= n_ctx)


def training_text() -> tuple[str, str]:
    """(source, text): tiny Shakespeare if SHAKESPEARE exists; else Python's own documentation, the help
    topics every Python carries (pydoc_data.topics: English prose with code in it); else, on a Python
    without them, the package's built-in English corpus (SOURCES names the three)."""
    if SHAKESPEARE.is_file():
        return "shakespeare", SHAKESPEARE.read_text(encoding="utf-8")
    try:
        from pydoc_data.topics import topics
    except ImportError:
        return "corpus", corpus.generate(0, N_SENTENCES, "en")
    return "python_docs", "\n\n".join(topics[name] for name in sorted(topics))


def with_repeat(window: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """window (B, n_ctx + 1) of token ids -> a copy in which each row repeats one stretch of itself:
    m ~ U{REPEAT} tokens starting at s in the first half are written again at d >= s + m,

        out[b, d : d + m] = window[b, s : s + m]      (s, m, d drawn from g, row by row)."""
    out = window.clone()
    W = window.shape[1]
    for row in out:
        m = int(torch.randint(REPEAT[0], REPEAT[1] + 1, (), generator=g))
        s = int(torch.randint(0, W // 2 - m + 1, (), generator=g))
        d = int(torch.randint(s + m, W - m + 1, (), generator=g))
        row[d : d + m] = row[s : s + m].clone()
    return out


@torch.no_grad()
def half_losses(model, tokens: torch.Tensor) -> tuple[float, float]:
    """(first, second): mean cross-entropy of r_2 .. r_n at their first and their second appearance in
    tokens (B, 1 + 2n) = [f, r_1 .. r_n, r_1 .. r_n]. Token t is predicted from the logits at t - 1."""
    n = (tokens.shape[1] - 1) // 2
    logp = F.log_softmax(model(tokens).double(), -1)  # (B, T, d_vocab)
    nll = -logp[:, :-1].gather(-1, tokens[:, 1:, None])[..., 0]  # (B, T - 1): nll[:, t - 1] is token t's
    first = nll[:, 1:n]  # tokens 2 .. n: r_2 .. r_n
    second = nll[:, n + 1 : 2 * n]  # tokens n + 2 .. 2n: r_2 .. r_n again
    return float(first.mean()), float(second.mean())


def probe(model, tokens: torch.Tensor, step: int = 0) -> Probe:
    """One measurement (after `step` steps): every head's induction and previous-token score, and the
    two half losses."""
    with evaluating(model):
        scores = head_scores(model, tokens=tokens)
        first, second = half_losses(model, tokens)
    return Probe(
        step=step,
        induction=scores.induction.tolist(),  # (n_layers, n_heads)
        previous=scores.previous.tolist(),
        first=first,
        second=second,
        gap=second - first,
    )


def train(ids: torch.Tensor, cfg: ModelConfig, tc: TrainConfig, tokens: torch.Tensor, seed: int) -> tuple:
    """(model, per-step losses, probes): the lessons' own training (training.fit), on windows that each
    repeat one stretch (with_repeat), measured by `probe` on `tokens` before the first step and after
    every PROBE_EVERY steps."""
    probes = []

    def repeated(x, y, g):
        window = with_repeat(torch.cat([x, y[:, -1:]], 1), g)  # (B, n_ctx + 1)
        return window[:, :-1], window[:, 1:]

    def measured(step, model):
        probes.append(probe(model, tokens, step))

    done = fit(ids, cfg, tc, seed, windows=repeated, watch=measured, watch_every=PROBE_EVERY)
    return done.model, done.losses, probes


def rise(steps: list[int], values: list[float]) -> Rise:
    """Where a curve makes its rise: the first steps at which it has covered 10%, 50% and 90% of the
    way from its first value to its largest one (values in the order of steps)."""
    low, high = values[0], max(values)
    at = lambda share: next(s for s, v in zip(steps, values) if v - low >= share * (high - low))
    return Rise(from_=low, to=high, start=at(0.1), middle=at(0.5), end=at(0.9))


def baseline(tokens: torch.Tensor) -> float:
    """The induction score of a head that spreads its weight evenly over the keys it sees, on `tokens`."""
    U = uniform_pattern(tokens.shape[1], causal=True)
    return float(sum(score(U, detection_patterns(row)["induction"]) for row in tokens) / len(tokens))


def ablations(model, tokens: torch.Tensor) -> list[tuple[int, int, float, float]]:
    """For each head of the model, in order: (layer, head, first, second), the half losses with that head
    switched off."""
    out = []
    for layer in range(model.cfg.n_layers):
        for head in range(model.cfg.n_heads):
            with heads_off(model, [(layer, head)]):
                first, second = half_losses(model, tokens)
            out.append((layer, head, first, second))
    return out


@lru_cache(maxsize=2)
def measure(seed: int = 0) -> Result:
    """Train the two models and measure them (cached: the numbers do not depend on the language): for
    each variant of VARIANTS its losses and probes; the two-layer model's best induction head of layer
    1 at the end and best previous-token head of layer 0, the rise of its best induction score and the
    fall of its in-context gap, and what switching each of its heads off keeps of that gap."""
    start = time.perf_counter()
    with threads.fixed(1):
        source, text = training_text()
        tok = train_tokenizer("char", text)
        ids = torch.tensor(tok.encode(text), dtype=torch.long)
        tc = TrainConfig(**TRAIN, seed=seed)
        vocab = SimpleNamespace(cfg=ModelConfig(**MODEL, n_layers=1, d_vocab=tok.vocab_size))  # all it reads: d_vocab
        tokens = repeated_tokens(vocab, tok, N_SEQS, HALF, seed)  # (N_SEQS, 1 + 2 * HALF): every probe's
        models, trained = {}, {}
        for name, layers in zip(VARIANTS, LAYERS):
            t0 = time.perf_counter()
            cfg = ModelConfig(**MODEL, n_layers=layers, d_vocab=tok.vocab_size)
            model, losses, probes = train(ids, cfg, tc, tokens, seed)
            trained[name] = model
            models[name] = Model(
                n_layers=layers,
                losses=losses,
                probes=probes,
                best=[max(max(row) for row in p.induction) for p in probes],
                seconds=time.perf_counter() - t0,
            )
        found = _found(models["two"], trained["two"], tokens)
        return Result(
            seed=seed,
            source=source,
            characters=len(text),
            vocab=tok.vocab_size,
            uniform_loss=math.log(tok.vocab_size),
            **MODEL,
            **TRAIN,
            repeat_min=REPEAT[0],
            repeat_max=REPEAT[1],
            probe_every=PROBE_EVERY,
            n_seqs=N_SEQS,
            half=HALF,
            variants=list(VARIANTS),
            models=models,
            baseline=baseline(tokens),
            **found,
            seconds=time.perf_counter() - start,
        )


def _found(two: Model, model, tokens: torch.Tensor) -> dict:
    """What the two-layer model's probes and ablations show, under the names of Result's fields:
    induction_head, previous_head, probe_steps, rise, gap_rise, ablation, kept, kept_previous, kept_other."""
    last = two.probes[-1]
    induction = _best(last.induction, layers=range(1, 2))  # it reads what layer 0 wrote
    previous = _best(last.previous, layers=range(0, 1))  # the layer-0 head it may read
    steps = [p.step for p in two.probes]
    ablation = [
        Ablation(
            layer=layer,
            head=head,
            first=first,
            second=second,
            gap=second - first,
            kept=(second - first) / last.gap,  # the share of the in-context gap left with this head off
            role=_role(layer, head, induction, previous),
        )
        for layer, head, first, second in ablations(model, tokens)
    ]
    kept = {role: [a.kept for a in ablation if a.role == role] for role in ROLES}
    return {
        "induction_head": induction,
        "previous_head": previous,
        "probe_steps": steps,
        "rise": rise(steps, two.best),
        "gap_rise": rise(steps, [-p.gap for p in two.probes]),  # the gap's fall, as a rise of -gap
        "ablation": ablation,
        "kept": kept["induction"][0],
        "kept_previous": kept["previous"][0],
        "kept_other": min(kept["other"]),  # the other head whose loss hurts the gap most
    }


def _role(layer: int, head: int, induction: Best, previous: Best) -> str:
    """What an ablated head is in the two-layer model: the induction head, the previous-token head of
    layer 0 it reads from, or another head."""
    for role, best in (("induction", induction), ("previous", previous)):
        if (layer, head) == (best.layer, best.head):
            return role
    return "other"


def _best(table: list[list[float]], layers: range) -> Best:
    """The largest entry of a (layers, heads) table, among the given layers."""
    pairs = [(L, h) for L in layers for h in range(len(table[L]))]
    layer, head = max(pairs, key=lambda p: table[p[0]][p[1]])
    return Best(layer=layer, head=head, score=table[layer][head])
