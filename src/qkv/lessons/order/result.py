"""What lesson "order" measures: models with and without positional information trained alike, whether
they tell "I hit you" from "you hit me", what permuting the input does, and RoPE's shift invariance
(qkv.lessons.order.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Run(Numbers):
    """One trained model on the order probes."""

    acc: float  # the share of probes it scores the right way round
    apart: float  # the share of pairs it scores differently at all
    pair_diff: float
    val_loss: float
    seconds: float


@dataclass(frozen=True)
class Result(Numbers):
    seed: int
    tokens: int
    vocab: int
    steps: int
    batch_size: int
    probes: int
    sinusoidal_embed_scale: float
    n_ctx: int  # the models' shape (measure.MODEL)
    d_model: int
    n_heads: int
    n_layers: int
    runs: list[str]  # the run names of measure.RUNS, in order
    models: dict[str, Run]  # run name -> its numbers
    rope_d: int
    shifts: list[int]
    pairs: int  # the probe pairs
    perm_none: float  # largest change of the output when the input is permuted (and permuted back)
    perm_none_causal: float
    perm_learned: float
    perm_tokens: int
    rope_shift_dev: float  # RoPE: largest change of (R_s q)·(R_t k) under a common shift of s and t
    additive_shift_dev: float  # ... the same for positions added to q and k
    rope_dot_scale: float
