"""One way from a request to a running loop, for every training task.

    run_task(task, request)
      processes, device, precision   torchrun's environment (qkv.core.machine.processes), the device of
                                     this rank, the float type; a task that trains on one process
                                     only is refused under several
      refuse                         a directory that is not qkv's; a checkpoint without --resume or
                                     --force; with --resume: a new run's settings it would ignore,
                                     another task's checkpoint
      read                           the task's data, and where it came from (its origin, sha256)
      start                          a new model from a preset and --set, or a trained one to fine-tune
                                     (--init: init.py), or (under the lock) the checkpoint checked file
                                     by file and against the data
      lock                           one writer per directory for the whole loop (rank 0 holds it)
      loop.run_loop                  the loop itself: every step, evaluation and checkpoint

A `Task` supplies only what differs between tasks: how it reads its data, the tokenizer of a new
run, its batches (a loop.Data), its own resume facts (the translation direction), and whether its
data can be shared out among several processes. Its two implementations are lm.LMTask and
translate.TranslateTask.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

import torch

from qkv.core.hub.size import check_fits
from qkv.core.io.refusal import Phrase, Refusal, family_title, phrase, said
from qkv.core.machine import device as devices
from qkv.core.machine import processes as distributed
from qkv.core.machine.device import Precision
from qkv.core.machine.processes import World
from qkv.core.model import make_model
from qkv.core.spec.config import PRESETS, ModelConfig, TrainConfig, apply_overrides
from qkv.core.spec.family import FAMILIES, Family, family_of
from qkv.core.text.tokenizers import Tokenizer
from qkv.core.train import checkpoint, lock, rundir
from qkv.core.train.init import FINETUNE, check_same_tokenizer, fit_window, init_settings, load_init
from qkv.core.train.loop import Data, Run, Start, TrainResult, run_loop
from qkv.core.train.resume import read_log, recorded_origin

D = TypeVar("D")  # what a task reads: its text, its sentence pairs


@dataclass(frozen=True)
class Request:
    """What every training task is asked: where, a new run or a resume, how far, on which device."""

    out: Path
    preset: str | None = None  # a new run's shape (None: the task's default)
    overrides: tuple[str, ...] = ()  # "key=value" for ModelConfig / TrainConfig fields
    resume: bool = False  # continue the checkpoint in `out`
    force: bool = False  # replace the checkpoint in `out` (kept until the new run's first)
    until: int | None = None  # stop after this step (the schedule still spans all steps)
    progress: bool = True
    device: str = "auto"
    precision: str = "auto"
    init: str | None = None  # a new run starts from this model (train/init.py: a qkv run, a pretrained model)
    compile: bool = False  # torch.compile the model (qkv.core.train.compiled)


class Task(ABC, Generic[D]):
    """What one training task supplies to run_task; D is what it reads."""

    kind: ClassVar[str]  # config.json's task kind, and the `trains` of the model family it trains
    default_preset: ClassVar[str]
    parallel: ClassVar[bool]  # whether its Data shares each global batch out among several processes
    what: ClassVar[Phrase]  # what its data is called in messages ("text", "set of sentence pairs")

    def new_run_settings(self) -> dict[str, object]:
        """Its settings that shape a new run only, by option name: --resume refuses those given."""
        return {}

    def recall(self, config: dict, out: Path) -> Task:
        """On --resume: this task with what was not given again as the checkpoint's config records it."""
        return self

    @abstractmethod
    def read(self, tc: TrainConfig) -> tuple[D, dict]:
        """Its data, and its origin: config.json's "data" ({"kind", "path"?, "sha256", ...})."""

    def check_resume(self, data: D, config: dict, out: Path) -> None:
        """A one-line ValueError when the checkpoint in `out` cannot continue on `data` (besides its sha256)."""

    @abstractmethod
    def new_tokenizer(self, data: D) -> Tokenizer:
        """The tokenizer of a new run."""

    def has_tokenizer(self, data: D) -> bool:
        """Whether `data` comes with its own tokenizer (token ids written by qkv tokenize), which a
        fine-tune's init must share."""
        return False

    @abstractmethod
    def batches(self, data: D, origin: dict, start: Start, world: World, precision: Precision) -> tuple[Data, dict]:
        """What run_loop trains on, and what config.json records besides the model and its settings."""


def run_task(task: Task, req: Request) -> TrainResult:
    """Train `task` as `req` asks. Started by torchrun (or `qkv train --nproc N`), every process runs
    this: each trains on its share of the global batch, and only rank 0 writes to `req.out`."""
    world = distributed.current()
    if world.size > 1 and not task.parallel:
        raise Refusal.of("errors.train_processes_gpt")
    device = distributed.gpu_for(world, devices.resolve(req.device))
    precision = Precision(device, req.precision)  # a bad precision is an error before anything starts
    joined_here = world.size > 1 and not torch.distributed.is_initialized()
    out = req.out
    try:  # the ranks meet in run_loop, once each has checked what it was given
        task, model_fields, tc = _settings(task, req, world)
        data, origin = task.read(tc)
        if not req.resume:  # built before the lock: a mistake in the data or the settings writes nothing
            assert model_fields is not None  # _settings gives a new run's model fields
            start, began = _new_start(task, data, model_fields, tc, req)
            run = _run(task, data, origin, start, req, world, precision, began)
        with lock.locked(out) if world.main else nullcontext():
            if req.resume:
                config = checkpoint.read_config(out)
                task.check_resume(data, config, out)
                start = _resumed_start(out, origin, req.overrides, task.what)
                began = {"init": config["init"]} if "init" in config else {}  # a fine-tune stays one
                run = _run(task, data, origin, start, req, world, precision, began)
            elif world.main:
                refuse_to_replace(rundir.inspect(out), out, req.force)  # another run may have saved there meanwhile
            if req.progress and world.main and run.precision.why != "asked":  # the run's first line: what auto chose
                print(said(precision_line(run.precision)), file=sys.stderr)
            return run_loop(out, run, req.progress and world.main)
    finally:
        if joined_here:
            distributed.leave()


def precision_line(precision: Precision) -> Phrase:
    """What --precision auto chose and why, the run's first line:
    "precision: bfloat16 autocast, float32 weights (this CPU has AVX-512 BF16)"."""
    return phrase(
        "accum.precision", name=phrase(f"accum.name_{precision.name}"), why=phrase(f"accum.why_{precision.why}")
    )


def _settings(task: Task, req: Request, world: World) -> tuple[Task, dict | None, TrainConfig]:
    """The task (on --resume, with what the checkpoint recalls), a new run's model fields (None on
    --resume) and the TrainConfig; first the refusals: a directory in use or not qkv's, a checkpoint
    without --resume or --force, a resume given a new run's settings or another task's checkpoint."""
    out = req.out
    found = rundir.inspect(out)
    if world.main:  # the other ranks never write, and rank 0 may hold the lock already
        lock.check_free(out)
    if not req.resume:
        if world.main:
            refuse_to_replace(found, out, req.force)
        return task, *_new_settings(task, req)
    refuse_on_resume(out, force=req.force, preset=req.preset, init=req.init, **task.new_run_settings())
    if found != "checkpoint":
        checkpoint.load_checkpoint(out)  # raises the reason: no directory, no config.json, no state.json
    config = checkpoint.read_config(out)
    refuse_other_task(config, out, task.kind)
    return task.recall(config, out), None, _resumed_settings(_saved_settings(config, out), req.overrides)


def _run(
    task: Task, data, origin: dict, start: Start, req: Request, world: World, precision: Precision, began: dict
) -> Run:
    """The run, complete: its start, its batches, the step to stop after, where it trains; config.json
    records `began` too (a fine-tune's "init")."""
    if req.until is not None and not (start.step < req.until <= start.tc.steps):
        raise Refusal.of("errors.train_until", low=start.step + 1, high=start.tc.steps, got=req.until)
    world.check_batch(start.tc.batch_size)
    if (start.tc.batch_size // world.size) % start.tc.grad_accum:
        raise Refusal.of(
            "accum.rank_rows", batch_size=start.tc.batch_size, nproc=world.size, n=start.tc.grad_accum,
            multiple=world.size * start.tc.grad_accum,
        )  # fmt: skip
    precision = precision.for_width(start.model.cfg.d_model)  # auto may depend on the model's width
    batches, record = task.batches(data, origin, start, world, precision)
    record = {**record, **began, "precision": precision.record()}  # the float type, why, and the CPU's bf16
    return Run(start, batches, req.until or start.tc.steps, precision.device, record, req.compile, precision)


# ---------------------------------------------------------------------------- a new run


def trained_by(kind: str) -> Family:
    """The model family a task trains (family.trains == kind)."""
    return next(f for f in FAMILIES.values() if f.trains == kind)


_HOW = {"lm": "qkv train", "translate": "qkv train --task translate"}  # the command that trains each task


def _new_settings(task: Task, req: Request) -> tuple[dict, TrainConfig]:
    """The model fields of a new run (d_vocab still open) and its TrainConfig: the preset, then --set.
    With an init, the model is the init's: only the preset's training fields and --set's dropout rates."""
    if req.init is not None:
        return init_settings(task.kind, req.overrides, req.preset, task.new_run_settings())
    preset = req.preset or task.default_preset
    if preset == FINETUNE:
        raise Refusal.of("finetune.preset_needs_init")
    if preset not in PRESETS:
        raise Refusal.of("errors.preset_unknown", preset=repr(preset), choices=list(PRESETS))
    model_fields, train_fields = apply_overrides(PRESETS[preset].model, PRESETS[preset].train, list(req.overrides))
    family = trained_by(task.kind)
    got = family_of(model_fields.setdefault("arch", family.arch))
    if got.trains != task.kind:
        how = phrase("train.trained_by", command=_HOW[got.trains]) if got.trains else phrase("train.not_trained")
        raise Refusal.of(
            "train.arch_task", task=phrase(f"train.task_{task.kind}"), family=family_title(family), arch=family.arch,
            got=got.arch, got_family=family_title(got), how=how,
        )  # fmt: skip
    return model_fields, TrainConfig(**train_fields)


def _new_start(task: Task, data, model_fields: dict, tc: TrainConfig, req: Request) -> tuple[Start, dict]:
    """A new model at step 0, its weights drawn from the run's seed, its d_vocab the tokenizer's; or the
    model and tokenizer of req.init (train/init.py), with the data's tokenizer, if it has one, the init's.
    And what config.json records of it ({"init": ...})."""
    if req.init is not None:
        model, tokenizer, record = load_init(req.init, model_fields, tc)
        check_same_tokenizer(task.new_tokenizer(data) if task.has_tokenizer(data) else None, tokenizer, req.init)
        return Start(model, tokenizer, fit_window(tc, model.cfg.n_ctx, req.overrides)), {"init": record}
    tokenizer = task.new_tokenizer(data)
    d_vocab = model_fields.get("d_vocab", tokenizer.vocab_size)
    if d_vocab < tokenizer.vocab_size:
        raise Refusal.of("errors.train_d_vocab", d_vocab=d_vocab, n=tokenizer.vocab_size)
    cfg = ModelConfig(**{**model_fields, "d_vocab": d_vocab})
    check_fits(cfg, "--set")  # a model that cannot fit is refused before it is built
    torch.manual_seed(tc.seed)
    return Start(make_model(cfg), tokenizer, tc), {}


# ---------------------------------------------------------------------------- a resume


def _saved_settings(config: dict, out: Path) -> dict:
    """The training settings config.json records (checked), before the checkpoint is loaded."""
    saved = config.get("train") or {}
    try:
        TrainConfig.from_dict(saved)
    except ValueError as e:
        raise ValueError(f"{out / 'config.json'}: {e}") from None
    return saved


def _resumed_settings(saved: dict, overrides) -> TrainConfig:
    """The settings a resume trains with: those saved, then --set; the model's cannot change."""
    model_fields, train_fields = apply_overrides({}, saved, list(overrides))
    if model_fields:
        raise Refusal.of("errors.resume_model_settings", names=list(model_fields))
    return TrainConfig.from_dict(train_fields)


def _resumed_start(out: Path, origin: dict, overrides, what: Phrase) -> Start:
    """The run saved in `out`, checked: its training state, the data (origin's sha256), the settings, the log."""
    ckpt = checkpoint.load_checkpoint(out, with_optimizer=True)
    if ckpt.train_config is None or ckpt.optimizer_state is None:
        raise Refusal.of("errors.resume_no_state", out=out)
    if recorded_origin(ckpt.config, out)["sha256"] != origin["sha256"]:
        raise Refusal.of("train.data_differs", what=what, out=out)
    tc, step = _resumed_settings(ckpt.train_config.to_dict(), overrides), ckpt.state["step"]
    if step >= tc.steps:
        raise Refusal.of("errors.resume_done", out=out, step=step, steps=tc.steps)
    log = read_log(out / (ckpt.state.get("log") or "log.jsonl"), step, ckpt.state)
    return Start(ckpt.model, ckpt.tokenizer, tc, step, ckpt.optimizer_state, out / ckpt.state["optimizer"], tuple(log))


# ---------------------------------------------------------------------------- refusals


def task_of(config: dict) -> str:
    """The task a checkpoint was trained for: "translate" (an encoder-decoder) or "lm" (a GPT)."""
    task = config.get("task")
    return task.get("kind", "lm") if isinstance(task, dict) else "lm"


def refuse_other_task(config: dict, out: Path, task: str) -> None:
    """A one-line error when the checkpoint in `out` (its `config`) was trained for another task than `task`."""
    found = task_of(config)
    if found != task:
        raise Refusal.of(
            "errors.resume_other_task",
            out=out,
            title=family_title(trained_by(found)),
            how=phrase(f"errors.train_how_{found}"),
        )


def refuse_on_resume(out: Path, **given) -> None:
    """A one-line error naming the options of a new run that --resume would ignore."""
    flags = [f"--{name.replace('_', '-')}" for name, value in given.items() if value not in (None, False)]
    if flags:
        raise Refusal.of("errors.resume_flags", out=out, flags=flags)


def refuse_to_replace(found: str, out: Path, force: bool) -> None:
    if found == "checkpoint" and not force:
        raise Refusal.of("errors.train_would_replace", out=out)
