"""What lesson "induction" measures: a one-layer and a two-layer model trained alike on text whose
windows repeat a stretch, how their induction and previous-token scores and their in-context gain grow,
and what switching each head off does (qkv.lessons.induction.measure returns a Result)."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers


@dataclass(frozen=True)
class Probe(Numbers):
    """One measurement on the repeated random sequences (measure.probe)."""

    step: int
    induction: list[list[float]]  # (n_layers, n_heads) every head's induction score
    previous: list[list[float]]  # (n_layers, n_heads) its previous-token score
    first: float  # the mean loss of the repeated tokens at their first appearance
    second: float  # ... and at their second
    gap: float  # second - first


@dataclass(frozen=True)
class Model(Numbers):
    n_layers: int
    losses: list[float]  # per step
    probes: list[Probe]
    best: list[float]  # the largest induction score of any head, per probe
    seconds: float


@dataclass(frozen=True)
class Best(Numbers):
    """The head with the largest score of a (layers, heads) table (measure._best)."""

    layer: int
    head: int
    score: float


@dataclass(frozen=True)
class Rise(Numbers):
    """Where a curve makes its rise (measure.rise): its first and largest value, and the first steps at
    which it has covered 10%, 50% and 90% of the way. Its numbers call the first value "from"."""

    from_: float
    to: float
    start: int
    middle: int
    end: int

    def to_numbers(self) -> dict:
        numbers = super().to_numbers()
        return {"from": numbers.pop("from_"), **numbers}

    @classmethod
    def from_numbers(cls, numbers: dict):
        rest = {key: value for key, value in numbers.items() if key != "from"}
        return super().from_numbers({"from_": numbers["from"], **rest})


@dataclass(frozen=True)
class Ablation(Numbers):
    """The two-layer model with one head switched off."""

    layer: int
    head: int
    first: float
    second: float
    gap: float
    kept: float  # the share of the in-context gap left with this head off
    role: str  # of measure.ROLES


@dataclass(frozen=True)
class Result(Numbers):
    seed: int
    source: str  # of measure.SOURCES
    characters: int
    vocab: int
    uniform_loss: float
    n_ctx: int  # the models' shape (measure.MODEL)
    d_model: int
    n_heads: int
    mlp: str
    steps: int  # their training (measure.TRAIN)
    batch_size: int
    lr: float
    min_lr: float
    warmup_steps: int
    repeat_min: int
    repeat_max: int
    probe_every: int
    n_seqs: int
    half: int
    variants: list[str]  # measure.VARIANTS
    models: dict[str, Model]  # variant -> its numbers
    baseline: float  # the induction score of a uniform head
    induction_head: Best  # the two-layer model's best induction head of layer 1, at the end
    previous_head: Best  # its best previous-token head of layer 0
    probe_steps: list[int]
    rise: Rise  # of its best induction score
    gap_rise: Rise  # of its in-context gap's fall (of -gap)
    ablation: list[Ablation]  # each head of the two-layer model, in order
    kept: float  # the share of the gap kept without the induction head
    kept_previous: float  # ... without the previous-token head
    kept_other: float  # the smallest share without any other head
    seconds: float

    def to_numbers(self) -> dict:
        numbers = super().to_numbers()
        return {**numbers, "rise": self.rise.to_numbers(), "gap_rise": self.gap_rise.to_numbers()}
