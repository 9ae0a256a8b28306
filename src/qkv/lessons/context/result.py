"""What lesson "context" measures: how attention makes 苹果 depend on its neighbours, in the trained model
and an untrained one of its shape, and which heads carry the sense (activation patching)
(qkv.lessons.context.measure returns a Result).

A quantity measured for each sense of measure.SENSES ("fruit", "company") is a dict by those names; one
measured for each stage of the residual stream (qkv.analysis.representations.stages: "embed", "L0", ...)
or each layer ("L0", ...) a dict by the stage's or layer's label."""

from __future__ import annotations

from dataclasses import dataclass

from qkv.lessons.common.result import Numbers

PATCH_SUMMARY = ("patch_cue_head", "patch_best_head", "patch_best_layer", "patch_rest_layers")


@dataclass(frozen=True)
class PatchRun(Numbers):
    """One sentence run with the other's heads patched in (n_layers, n_heads) or whole layers (n_layers,)."""

    cue: list[list[float]]  # each head's weight from the comma on the cue verb
    tv: list[list[float]]  # total variation distance the head's patch moves P
    share: list[list[float]]  # the share of the way to the donor's mass on its words
    layer_tv: list[float]
    layer_share: list[float]


@dataclass(frozen=True)
class Patch(Numbers):
    words: dict[str, list[str]]  # sense -> the first words of its continuations
    mass: dict[str, dict[str, float]]  # run sense -> word sense -> the unpatched run's mass on those words
    clean_tv: float  # between the two unpatched runs
    fruit: PatchRun  # the fruit sentence run, the company one the donor
    company: PatchRun

    def runs(self) -> dict[str, PatchRun]:
        """Each run by the sense of its sentence."""
        return {"fruit": self.fruit, "company": self.company}


@dataclass(frozen=True)
class Head(Numbers):
    layer: int
    head: int
    cue: dict[str, float]  # sense -> its weight on the cue
    share: dict[str, float]
    tv: dict[str, float]


@dataclass(frozen=True)
class Layer(Numbers):
    layer: int
    share: dict[str, float]
    tv: dict[str, float]
    head_sum: dict[str, float]  # its heads' single shares, added up


@dataclass(frozen=True)
class Result(Numbers):
    sentences: dict[str, str]
    position: int  # of 苹果
    embed_cosine: float
    embed_max_abs_diff: float
    cosine: dict[str, float]  # stage -> cosine of the two 苹果 vectors
    untrained_cosine: dict[str, float]
    min_cosine_stage: str
    attn_out_cosine: dict[str, float]  # layer -> cosine of what its attention writes at 苹果
    untrained_attn_out_cosine: dict[str, float]
    cue_weight_fruit: dict[str, float]  # layer -> the largest weight any head gives the cue
    cue_weight_company: dict[str, float]
    cue_layer: str
    untrained_cue_weight_fruit: dict[str, float]
    untrained_cue_weight_company: dict[str, float]
    untrained_max_cue_weight: float
    n_visible: int
    probe_accuracy: dict[str, float]  # stage -> the linear probe's held-out accuracy
    untrained_probe_accuracy: dict[str, float]
    best_probe_stage: str
    best_probe_accuracy: float
    untrained_best_probe_stage: str
    untrained_best_probe_accuracy: float
    n_probe_train: int
    n_probe_test: int
    top: int
    next_fruit: list[list]  # [word, probability] of the likeliest next words
    next_company: list[list]
    untrained_next_fruit: list[list]
    untrained_next_company: list[list]
    d_vocab: int
    uniform_probability: float
    n_continuation_probes: int
    continuation_accuracy: float
    untrained_continuation_accuracy: float
    patch_sentences: dict[str, str]
    patch_lengths: dict[str, int | None]  # None: this tokenizer cannot encode the sentence
    patch: Patch | None  # None: this tokenizer cannot pair the two sentences (measure.can_patch)
    patch_cue_head: Head | None  # the head with the most weight on the cue (the fields of PATCH_SUMMARY:
    patch_best_head: Head | None  # present when `patch` is, absent from to_numbers when it is not)
    patch_best_layer: Layer | None
    patch_rest_layers: float | None  # the largest share of any other layer
    seconds: float

    def to_numbers(self) -> dict:
        numbers = super().to_numbers()
        if self.patch is None:
            numbers = {key: value for key, value in numbers.items() if key not in PATCH_SUMMARY}
        return numbers

    @classmethod
    def from_numbers(cls, numbers: dict):
        return super().from_numbers({**dict.fromkeys(PATCH_SUMMARY), **numbers})
