"""The training loop: next-token prediction with AdamW, warmup + cosine decay, clipping,
periodic evaluation, atomic checkpoints and an exact resume.

Every step draws its batch and its dropout masks from generators seeded by (seed, step), so a
run that is stopped and resumed sees exactly the numbers an uninterrupted run sees: the same
batches always, and the same sums bit for bit at a fixed thread count (--threads or QKV_THREADS;
otherwise `qkv train` follows the machine's load, and a sum over 1 or 2 threads can differ in
its last bit).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from . import checkpoint, device as devices, distributed, lock, rundir, threads
from .resume import load_optimizer, read_log, recorded_source
from .config import PRESETS, ModelConfig, TrainConfig, apply_overrides
from .data import get_batch, read_text, split_ids
from .device import Precision, model_device
from .distributed import World
from .models.gpt import GPT, lm_loss
from .tokenizers import Tokenizer, UnknownTokenError, train_tokenizer


class TrainingStopped(RuntimeError):
    """Training could not go on (a non-finite loss); the last good checkpoint is kept."""


@dataclass
class TrainResult:
    out: Path
    step: int
    train_loss: float | None
    val_loss: float | None
    tokens_per_s: float
    seconds: float


def lr_at(step: int, tc: TrainConfig) -> float:
    """Linear warmup from 0 to lr over warmup_steps, then cosine decay to min_lr at the last step."""
    if step < tc.warmup_steps:
        return tc.lr * (step + 1) / tc.warmup_steps
    progress = (step - tc.warmup_steps) / max(
        1, tc.steps - 1 - tc.warmup_steps
    )  # step is 0-based: steps - 1 is the last
    return tc.min_lr + 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress))) * (tc.lr - tc.min_lr)


def make_optimizer(model: GPT, tc: TrainConfig) -> torch.optim.AdamW:
    """AdamW; weight decay on matrices and embeddings only, not on biases or LayerNorm scales.
    The fused kernel (one kernel for every parameter) where the model's device has it."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": tc.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    fused = devices.fused_adamw(model_device(model))
    return torch.optim.AdamW(groups, lr=tc.lr, betas=(tc.beta1, tc.beta2), fused=fused)


def step_seed(seed: int, step: int) -> int:
    """The seed of the generators of one step: a resumed run draws what an uninterrupted one draws."""
    return (seed * 1_000_003 + step) % (2**63)


FLOAT32 = Precision("cpu", "float32")


@torch.inference_mode()
def evaluate(
    model: GPT, ids: torch.Tensor, tc: TrainConfig, world: World = World(), precision: Precision = FLOAT32
) -> float:
    """Mean loss over eval_steps batches, always the same batches (a generator seeded by `seed`).
    With several processes, each scores its rows of every batch (as in training), and a batch's loss
    is the mean of the ranks' losses."""
    was_training = model.training
    model.eval()
    g, device, total = torch.Generator().manual_seed(tc.seed), model_device(model), 0.0
    for _ in range(tc.eval_steps):
        x, y = get_batch(ids, tc.batch_size, model.cfg.n_ctx, g)  # each (B, n_ctx)
        x, y = world.shard(x).to(device), world.shard(y).to(device)  # each (B/N, n_ctx)
        with precision.autocast():
            total += lm_loss(model(x), y).item()
    model.train(was_training)
    return world.total(total) / (world.size * tc.eval_steps)


def _text_source(text: str | None, text_path) -> tuple[str, dict]:
    if text_path is not None:
        text = read_text(text_path)
        source = {"kind": "file", "path": str(Path(text_path).resolve())}
    elif text is not None:
        if not text.strip():
            raise ValueError("the training text is empty")
        source = {"kind": "string"}
    else:
        from .corpus import default_text

        text = default_text()
        source = {"kind": "builtin"}
    source["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return text, source


@dataclass
class Setup:
    """One run, before its loop: the model, tokenizer and settings, where it starts, and its data."""

    model: GPT
    tokenizer: Tokenizer
    tc: TrainConfig
    start: int  # steps already done
    source: dict  # where the text came from
    optimizer_state: dict | None = None
    log_lines: list[str] | None = None  # the log a resume keeps
    optimizer_file: Path | None = None
    data: object = None  # set by _with_data: what draws the batches and evaluates (LMData, PairData)
    extra: dict | None = None  # what config.json records besides the model and training settings
    last: int = 0  # the step to stop after
    device: torch.device = torch.device("cpu")  # where it trains (the checkpoint is the same anywhere)


def _fresh(text: str, source: dict, tokenizer, vocab_size, preset: str, overrides) -> Setup:
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    model_over, train_over = apply_overrides(PRESETS[preset].model, PRESETS[preset].train, list(overrides))
    if model_over.get("arch", "gpt") != "gpt":
        raise ValueError(
            f"qkv train without --task trains a GPT (arch=gpt); got arch={model_over['arch']} "
            f"(a translation model: --task translate)"
        )
    tok = tokenizer if isinstance(tokenizer, Tokenizer) else train_tokenizer(tokenizer, text, vocab_size)
    if model_over.get("d_vocab", tok.vocab_size) < tok.vocab_size:
        raise ValueError(f"d_vocab={model_over['d_vocab']} is smaller than the tokenizer's {tok.vocab_size} tokens")
    model_over.setdefault("d_vocab", tok.vocab_size)
    mc, tc = ModelConfig(**model_over), TrainConfig(**train_over)
    torch.manual_seed(tc.seed)
    return Setup(GPT(mc), tok, tc, 0, source, log_lines=[])


def resume_setup(out: Path, source: dict, overrides, what: str = "text") -> Setup:
    """The run saved in `out`, checked: its training state, the data (`source`'s sha256), the settings."""
    ckpt = checkpoint.load_checkpoint(out, with_optimizer=True)
    if ckpt.train_config is None or ckpt.optimizer_state is None:
        raise ValueError(f"{out} holds no training state to resume from")
    if recorded_source(ckpt.config, out)["sha256"] != source["sha256"]:
        raise ValueError(f"the {what} differs from the one {out} was trained on; resume with the same {what}")
    model_over, train_over = apply_overrides({}, ckpt.train_config.to_dict(), list(overrides))
    if model_over:
        raise ValueError(f"model settings cannot change on resume: {', '.join(model_over)}")
    tc, start = TrainConfig.from_dict(train_over), ckpt.state["step"]
    if start >= tc.steps:
        raise ValueError(
            f"{out} is already trained to step {start} of steps={tc.steps}; "
            f"add --set steps=N with N > {start} to train further"
        )
    log = read_log(out / (ckpt.state.get("log") or "log.jsonl"), start, ckpt.state)
    return Setup(
        ckpt.model,
        ckpt.tokenizer,
        tc,
        start,
        ckpt.config["data"],
        ckpt.optimizer_state,
        log,
        out / ckpt.state["optimizer"],
    )


def train_step(
    model: GPT,
    optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    grad_clip: float,
    world: World = World(),
    precision: Precision = FLOAT32,
) -> float:
    """One step of gradient descent on the next-token loss; returns the loss (before the step).

    A non-finite loss is returned without touching the weights."""
    with precision.autocast():  # float32 unless the device computes in bf16 / fp16
        loss = lm_loss(model(x), y)
    return optimize(model, optimizer, loss, grad_clip, world, precision)


def optimize(
    model, optimizer, loss: torch.Tensor, grad_clip: float, world: World = World(), precision: Precision = FLOAT32
) -> float:
    """One step of gradient descent on a computed loss (of any model); returns it, and leaves the
    weights alone when it is not finite. With several processes the loss returned is the global
    batch's (the mean over ranks), so every rank takes the same decision."""
    value = world.mean(loss)
    if math.isfinite(value):
        optimizer.zero_grad(set_to_none=True)
        precision.backward(loss)
        precision.step(optimizer, model.parameters(), grad_clip)
    return value


def refuse_on_resume(out: Path, **given) -> None:
    flags = [f"--{name.replace('_', '-')}" for name, value in given.items() if value not in (None, False)]
    if flags:
        raise ValueError(
            f"--resume continues {out} with the settings it was trained with: {', '.join(flags)} "
            "cannot be combined with it (training settings can change with --set)"
        )


def train(
    text: str | None = None,
    *,
    text_path=None,
    out="runs/qkv",
    tokenizer: str | Tokenizer | None = None,
    vocab_size: int | None = None,
    preset: str | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    resume: bool = False,
    force: bool = False,
    until: int | None = None,
    progress: bool = True,
    device: str = "auto",
    precision: str = "auto",
) -> TrainResult:
    """Train a GPT on `text` (or the file `text_path`, or the built-in corpus) into the directory `out`.

    `tokenizer` ("char" by default), `vocab_size` and `preset` ("tiny" by default) shape a new run.
    `overrides` are "key=value" strings for ModelConfig / TrainConfig fields. `resume` continues the
    checkpoint in `out` with its own tokenizer and model; `until` stops after that step (the schedule
    still spans `steps`). `force` replaces a qkv checkpoint in `out` (it stays loadable until the new
    run's first checkpoint); a non-empty directory that is not a qkv checkpoint is never written.

    `device` is auto (CUDA, then MPS, then the CPU), cpu, cuda[:N] or mps; `precision` is auto (bf16
    autocast on CUDA, or fp16 with a gradient scaler where bf16 is missing; float32 elsewhere),
    float32, bfloat16 or float16 (qkv.core.device). Started by torchrun (or `qkv train --nproc N`),
    every process runs this function: each trains on its share of the global batch
    (qkv.core.distributed), and only rank 0 writes to `out`.
    """
    world = distributed.current()
    dev = distributed.gpu_for(world, devices.resolve(device))
    Precision(dev, precision)  # a bad precision is an error before anything starts
    joined_here = world.size > 1 and not torch.distributed.is_initialized()
    try:  # the ranks meet in run_loop, once each has checked what it was given
        return _train(
            world,
            text,
            text_path,
            Path(out),
            tokenizer,
            vocab_size,
            preset,
            overrides,
            resume,
            force,
            until,
            progress,
            (dev, precision),
        )
    finally:
        if joined_here:
            distributed.leave()


def _train(
    world: World,
    text,
    text_path,
    out: Path,
    tokenizer,
    vocab_size,
    preset,
    overrides,
    resume,
    force,
    until,
    progress,
    where,
) -> TrainResult:
    found = rundir.inspect(out)
    if world.main:  # the other ranks never write, and rank 0 may hold the lock already
        lock.check_free(out)
    if resume:
        refuse_on_resume(out, force=force, preset=preset, tokenizer=tokenizer, vocab_size=vocab_size)
        if found != "checkpoint":
            checkpoint.load_checkpoint(out)  # raises the reason: no directory, no config.json, no state.json
        refuse_other_task(out, "lm")
        if text is None and text_path is None:  # the same text as before
            recorded = recorded_source(checkpoint.read_config(out), out)
            if recorded["kind"] == "file":
                text_path = recorded["path"]
            elif recorded["kind"] == "string":
                raise ValueError(f"{out} was trained on a string; pass the same text again to resume")
    elif world.main:
        refuse_to_replace(found, out, force)
    text, source = _text_source(text, text_path)
    run = (
        None
        if resume
        else _with_data(
            _fresh(text, source, tokenizer or "char", vocab_size, preset or "tiny", overrides),
            text,
            until,
            world,
            where,
        )
    )
    with lock.locked(out) if world.main else contextlib.nullcontext():
        if resume:
            run = _with_data(resume_setup(out, source, overrides), text, until, world, where)
        elif world.main:
            refuse_to_replace(rundir.inspect(out), out, force)  # another run may have saved there meanwhile
        return run_loop(out, run, resume, progress and world.main)


def task_of(config: dict) -> str:
    """The task a checkpoint was trained for: "translate" (an encoder-decoder) or "lm" (a GPT)."""
    task = config.get("task")
    return task.get("kind", "lm") if isinstance(task, dict) else "lm"


def refuse_other_task(out: Path, task: str) -> None:
    """A one-line error when the checkpoint in `out` was trained for another task than `task`."""
    found = task_of(checkpoint.read_config(out))
    if found != task:
        how = "--task translate" if found == "translate" else "qkv train without --task translate"
        what = "a translation model" if found == "translate" else "a language model (GPT)"
        raise ValueError(f"{out} holds {what}; resume it with {how}")


def refuse_to_replace(found: str, out: Path, force: bool) -> None:
    if found == "checkpoint" and not force:
        raise ValueError(f"{out} already holds a checkpoint; use --resume to continue it or --force to replace it")


def _with_data(
    run: Setup,
    text: str,
    until: int | None,
    world: World = World(),
    where: tuple[torch.device, str] = (torch.device("cpu"), "auto"),
) -> Setup:
    """The run with its token ids split into train/val, the step to stop after, and where
    (device, precision) it trains."""
    if until is not None and not (run.start < until <= run.tc.steps):
        raise ValueError(f"--until must be between {run.start + 1} and {run.tc.steps}; got {until}")
    world.check_batch(run.tc.batch_size)
    try:
        ids = torch.tensor(run.tokenizer.encode(text), dtype=torch.long)
    except UnknownTokenError as e:  # a word list cut by vocab_size: a word tokenizer has no unknown token
        raise ValueError(
            f"the vocabulary is too small for the text ({run.tokenizer.vocab_size} tokens kept; {e}): "
            "give a larger vocab_size, or none to keep every word"
        ) from None
    train_ids, val_ids = split_ids(ids, run.tc.val_fraction, run.model.cfg.n_ctx)
    run.device = where[0]
    run.data = LMData(train_ids, val_ids, run.tc, run.model.cfg.n_ctx, world, Precision(*where))
    run.extra, run.last = {"data": {**run.source, "tokens": len(ids)}}, until or run.tc.steps
    return run


class LMData:
    """The batches of next-token prediction: windows of n_ctx + 1 tokens from the text's ids.

    The batch of a step depends on (seed, step) only, so the step number is the whole data position:
    a resumed run, or one with another number of processes, draws the same global batches."""

    def __init__(
        self,
        train_ids: torch.Tensor,
        val_ids: torch.Tensor | None,
        tc: TrainConfig,
        n_ctx: int,
        world: World = World(),
        precision: Precision = FLOAT32,
    ):
        self.train_ids, self.val_ids, self.tc, self.n_ctx = train_ids, val_ids, tc, n_ctx
        self.world, self.precision = world, precision

    def tokens(self, step: int) -> int:
        """The tokens the (global) batch of `step` scores, for the tokens/s figure."""
        return self.tc.batch_size * self.n_ctx

    def step(self, model, optimizer, step: int) -> float:
        """Train on this rank's rows of the batch of `step` (drawn by a generator seeded by (seed, step));
        the loss of the whole batch."""
        g = torch.Generator().manual_seed(step_seed(self.tc.seed, step))
        x, y = get_batch(self.train_ids, self.tc.batch_size, self.n_ctx, g)  # each (B, n_ctx)
        device = model_device(model)
        x, y = self.world.shard(x).to(device), self.world.shard(y).to(device)  # each (B/N, n_ctx)
        torch.manual_seed((step_seed(self.tc.seed + 1, step) + self.world.rank) % 2**63)  # dropout masks, per rank
        return train_step(model, optimizer, x, y, self.tc.grad_clip, self.world, self.precision)

    def evaluate(self, model) -> tuple[float, float | None]:
        """(train loss, val loss), each over the same eval_steps batches every time."""
        train_loss = evaluate(model, self.train_ids, self.tc, self.world, self.precision)
        val_loss = (
            evaluate(model, self.val_ids, self.tc, self.world, self.precision) if self.val_ids is not None else None
        )
        return train_loss, val_loss


def run_loop(out: Path, run: Setup, resume: bool, progress: bool) -> TrainResult:
    """The training loop, in a directory whose lock the caller holds; run.data draws and evaluates."""
    model, tc, start, last, data = run.model, run.tc, run.start, run.last, run.data
    world = data.world if isinstance(data, LMData) else distributed.current()
    if world.size > 1 and not isinstance(data, LMData):
        raise ValueError("only a GPT (qkv train without --task translate) trains on several processes")
    distributed.join(run.device)
    distributed.barrier(world)  # every rank has read what it needs from `out` before rank 0 writes there
    devices.prepare(run.device)
    model.to(run.device)
    optimizer = make_optimizer(model, tc)
    if run.optimizer_state is not None:
        load_optimizer(optimizer, run.optimizer_state, run.optimizer_file, start)
    try:
        writer = (
            checkpoint.Writer(out, model.cfg, tc, run.tokenizer, run.extra, resume=resume, log_lines=run.log_lines)
            if world.main
            else _NoWriter()
        )
    except OSError as e:
        raise OSError(
            f"could not write to {out} ({e.strerror or e}); the checkpoint in it, if any, is unchanged"
        ) from None
    bar = _progress(progress, tc.steps, start)
    model.train()
    trained = world.wrap(model)  # DDP averages the gradients over the ranks (the model itself on one process)
    t0, train_loss, val_loss, tokens = time.perf_counter(), None, None, 0
    governor = threads.governor() if world.size == 1 else None  # follows programs that start or stop meanwhile
    done = saved = start  # steps finished; steps in the checkpoint
    try:
        for step in range(start, last):
            lr = lr_at(step, tc)
            for group in optimizer.param_groups:
                group["lr"] = lr
            loss = data.step(trained, optimizer, step)
            if not math.isfinite(loss):
                raise TrainingStopped(
                    f"the loss became {loss} at step {step + 1}; training stopped and {writer.kept}; try a smaller lr"
                )
            done, tokens = step + 1, tokens + data.tokens(step)
            if governor:
                governor.tick()
            tok_s = tokens / max(time.perf_counter() - t0, 1e-9)
            writer.write_log(json.dumps({"step": done, "loss": round(loss, 6), "lr": lr, "tokens_per_s": round(tok_s)}))
            if bar:
                bar.update(1)
                bar.set_postfix_str(
                    f"loss {loss:.3f}" + (f" val {val_loss:.3f}" if val_loss else "") + f" {tok_s:,.0f} tok/s",
                    refresh=False,
                )
            if done % tc.eval_interval == 0 or done == last:
                train_loss, val_loss = data.evaluate(model)
                writer.write_log(
                    json.dumps(
                        {"step": done, "train_loss": round(train_loss, 6), "val_loss": val_loss and round(val_loss, 6)}
                    )
                )
                writer.save(
                    model, done, optimizer, {"train_loss": train_loss, "val_loss": val_loss, "world_size": world.size}
                )
                saved = done
                if bar:
                    val = f", val loss {val_loss:.4f}" if val_loss is not None else ""
                    bar.write(f"step {done}: train loss {train_loss:.4f}{val}", file=sys.stderr)
    except KeyboardInterrupt:  # Ctrl-C: keep what was trained so far, unless that would replace a checkpoint
        if done > saved and not writer.staged:  # of another run before this one's first evaluation
            writer.save(model, done, optimizer, {"world_size": world.size})
        raise
    except distributed.PeerLost as e:
        raise distributed.PeerLost(f"{e}; {writer.kept}") from None
    except RuntimeError as e:  # inside DDP's forward or backward, where it talks to the other ranks
        if world.size > 1 and distributed.from_peers(e):
            raise distributed.PeerLost(f"{distributed.lost(e)}; {writer.kept}") from None
        raise
    except OSError as e:  # e.g. the disk is full
        raise OSError(f"could not write to {out} ({e.strerror or e}) after step {done}; {writer.kept}") from None
    finally:
        writer.close()
        if bar:
            bar.close()
    seconds = time.perf_counter() - t0
    return TrainResult(out, last, train_loss, val_loss, tokens / max(seconds, 1e-9), seconds)


class _NoWriter:
    """What ranks other than 0 write: nothing (rank 0 keeps the checkpoint and the log)."""

    kept, staged = "rank 0 keeps the checkpoint", False

    def write_log(self, line: str) -> None:
        pass

    def save(self, *args, **kwargs) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(enabled: bool, total: int, initial: int):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="step", file=sys.stderr, dynamic_ncols=True, mininterval=0.25)
