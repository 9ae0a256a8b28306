"""The training loop every task shares: AdamW with warmup + cosine decay, clipping, periodic
evaluation, atomic checkpoints, a stop on a non-finite loss, and Ctrl-C (or SIGTERM) keeping what
was trained.

What a run trains on is a `Data`, this module's one interface: the loop asks it for the loss of a
step, the tokens that step scored and an evaluation, and never which task it serves. Its two
implementations are lm.LMData (next-token prediction: a GPT on a text) and
translate.PairData (sentence pairs: an encoder-decoder). A `Run` is everything the loop
needs, built complete by run.run_task (resume, refusals, lock, device, processes).
"""

from __future__ import annotations

import json
import math
import signal
import sys
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import torch

from qkv.core.io.refusal import phrase, said
from qkv.core.io.shown import Shown
from qkv.core.machine import device as devices
from qkv.core.machine import processes as distributed
from qkv.core.machine import threads
from qkv.core.machine.device import Precision, model_device
from qkv.core.machine.processes import ALONE, World
from qkv.core.spec.config import TrainConfig
from qkv.core.text.tokenizers import Tokenizer
from qkv.core.train import checkpoint
from qkv.core.train.compiled import compiled, said_in_one_line
from qkv.core.train.muon import AnyOptimizer, Paired, make_paired
from qkv.core.train.resume import load_optimizer

if TYPE_CHECKING:
    from qkv.core.model.gpt import GPT
    from qkv.core.model.seq2seq import Seq2Seq

FLOAT32 = Precision("cpu", "float32")


class TrainingStopped(RuntimeError):
    """Training could not go on (a non-finite loss); the last good checkpoint is kept."""


@dataclass(repr=False)
class TrainResult(Shown):
    """What a training run ended with; in a notebook a small table (qkv.apps.displays)."""

    out: Path
    step: int
    train_loss: float | None
    val_loss: float | None
    tokens_per_s: float
    seconds: float
    shown_as = "training"  # a notebook's display; not a field

    def brief(self) -> str:
        return f"out={str(self.out)!r}, step={self.step}, train_loss={self.train_loss}, val_loss={self.val_loss}"


class Data(Protocol):
    """What run_loop trains on and evaluates with (lm.LMData, translate.PairData).

    The batch of a step depends on (seed, step) only, so the step number is the whole data position:
    a resumed run draws what an uninterrupted run draws. With several processes every rank holds the
    same Data; `world` says which rows of each global batch this rank trains on."""

    world: World  # the processes that share each batch (distributed.ALONE: this one alone)

    def step(self, model: torch.nn.Module, optimizer: AnyOptimizer, step: int) -> float:
        """Train on the batch of `step` (`model` may be DDP's wrapper); the loss of the whole batch.
        A non-finite loss is returned with the weights untouched (`optimize` does both)."""
        ...

    def tokens(self, step: int) -> int:
        """The tokens the batch of `step` scored, for the tokens/s figure (asked after `step`)."""
        ...

    def evaluate(self, model: torch.nn.Module) -> tuple[float, float | None]:
        """(train loss, val loss or None), over the same batches every time; every rank takes part."""
        ...


@dataclass(frozen=True)
class Start:
    """Where a run starts: a new model at step 0, or a checkpoint checked for a resume."""

    model: GPT | Seq2Seq  # the model families that train (family.trains)
    tokenizer: Tokenizer
    tc: TrainConfig
    step: int = 0  # steps already done
    optimizer_state: dict | None = None  # a resume's AdamW state, checked against the model when loaded
    optimizer_file: Path | None = None  # the file it was read from, for messages
    log_lines: tuple[str, ...] = ()  # the log of the steps done, which a resume keeps

    @property
    def resumed(self) -> bool:
        return self.optimizer_state is not None


@dataclass(frozen=True)
class Run:
    """One run, complete, before its loop."""

    start: Start
    data: Data
    last: int  # the step to stop after
    device: torch.device  # where it trains (the checkpoint is the same anywhere)
    record: dict  # what config.json records besides the model and its settings: "data" (its origin), "task"
    compile: bool = False  # run the steps through torch.compile (compiled.py)
    precision: Precision = FLOAT32  # how its steps compute (the first line says what --precision auto chose)


def lr_at(step: int, tc: TrainConfig) -> float:
    """Linear warmup from 0 to lr over warmup_steps, then cosine decay to min_lr at the last step."""
    if step < tc.warmup_steps:
        return tc.lr * (step + 1) / tc.warmup_steps
    progress = (step - tc.warmup_steps) / max(1, tc.steps - 1 - tc.warmup_steps)  # step is 0-based
    return tc.min_lr + 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress))) * (tc.lr - tc.min_lr)


def make_optimizer(model: torch.nn.Module, tc: TrainConfig) -> torch.optim.AdamW | Paired:
    """AdamW; weight decay on matrices and embeddings only, not on biases or LayerNorm scales.
    The fused kernel (one kernel for every parameter) where the model's device has it.
    tc.optimizer="muon": Muon for the blocks' matrices and AdamW for the rest, as one (train/muon.py)."""
    if tc.optimizer == "muon":
        return make_paired(model, tc, devices.fused_adamw(model_device(model)))
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": tc.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    fused = devices.fused_adamw(model_device(model))
    return torch.optim.AdamW(groups, lr=tc.lr, betas=(tc.beta1, tc.beta2), fused=fused)


def step_seed(seed: int, step: int) -> int:
    """The seed of the generators of one step: a resumed run draws what an uninterrupted one draws."""
    return (seed * 1_000_003 + step) % (2**63)


def optimize(
    model, optimizer, loss: torch.Tensor, grad_clip: float, world: World = ALONE, precision: Precision = FLOAT32
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


def optimize_accumulated(
    model, optimizer, losses, n: int, grad_clip: float, world: World = ALONE, precision: Precision = FLOAT32
) -> float:
    """One step of gradient descent on a batch computed in `n` micro-batches (gradient accumulation).

    `losses(i)` computes micro-batch i's mean loss L_i (forward, as a tensor); each is backpropagated
    as L_i / n right away (its activations freed), so the gradients add up to those of
    L = (L_0 + ... + L_{n-1}) / n, the whole batch's mean loss when every micro-batch scores as many
    tokens; then one clip and one optimizer step. Under DDP the ranks average their gradients once,
    in the last micro-batch's backward (DDP's no_sync() around the others). Returns L (over ranks:
    their mean); a non-finite L leaves the weights untouched."""
    optimizer.zero_grad(set_to_none=True)
    total = torch.zeros((), dtype=torch.float64)
    for i in range(n):
        with _no_sync(model) if i < n - 1 else nullcontext():  # DDP syncs in the last backward only
            loss = losses(i)
            precision.backward(loss / n)
        total += loss.detach().double().cpu()
    value = world.mean(total / n)
    if math.isfinite(value):
        precision.step(optimizer, model.parameters(), grad_clip)
    return value


def _no_sync(model):
    """DDP's no_sync(): a backward inside it keeps this rank's gradients without averaging them over
    the ranks (the next backward outside it averages the sums). A model on one process has none."""
    no_sync = getattr(model, "no_sync", None)
    return no_sync() if no_sync is not None else nullcontext()


def train_steps(optimizer, tc: TrainConfig, steps: range, step, stepped, evaluate=None, every: int = 0, end=None):
    """The bare training loop, the one every caller drives (run_loop in a run directory, the lessons'
    fit in memory): for each step of `steps` (0-based) it sets the schedule's learning rate
    (lr_at), trains (`step(s)`: batch, forward, backward, clip, AdamW; returns the loss), then calls
    `stepped(done, loss, lr)` (done = s + 1, the steps finished), `evaluate(done)` every `every` steps
    and after the last (every = 0: never), and `end(done)` last of all. What a caller keeps (logs,
    checkpoints, curves) and when it stops (a callback raises) are its own."""
    for s in steps:
        lr = lr_at(s, tc)
        for group in optimizer.param_groups:  # Muon's groups: lr_scale = muon_lr / lr (train/muon.py)
            group["lr"] = lr * group.get("lr_scale", 1.0)
        loss = step(s)
        done = s + 1
        stepped(done, loss, lr)
        if evaluate is not None and every and (done % every == 0 or done == steps.stop):
            evaluate(done)
        if end is not None:
            end(done)


def run_loop(out: Path, run: Run, progress: bool) -> TrainResult:
    """Train `run` in `out`, whose lock the caller holds; only rank 0 writes there.

    Every step sets the schedule's learning rate, trains on the step's batch (run.data.step: forward,
    backward, clip, AdamW), stops on a non-finite loss and logs; every eval_interval steps, and at the
    last, it evaluates and saves a checkpoint. Ctrl-C or SIGTERM ends the step first and keeps it."""
    start, data, world = run.start, run.data, run.data.world
    model, tc, last = start.model, start.tc, run.last
    optimizer = _on_device(run)
    writer = _writer(out, run)
    bar = None
    t0, tally = time.perf_counter(), _Tally(done=start.step, saved=start.step)
    stop = _StopRequest()
    stop.install()
    try:  # from here on every way out closes the writer and ends the bar's line (an error starts on its own)
        model.train()
        trained = world.wrap(model)  # DDP averages the gradients over the ranks (the model itself on one process)
        trained = compiled(trained) if run.compile else trained  # checkpoints save `model`: no _orig_mod. prefix
        step = said_in_one_line(partial(data.step, trained, optimizer))  # a compiler's failure: one line
        governor = threads.governor() if world.size == 1 else None  # follows programs that start or stop meanwhile
        bar = _progress(progress, tc.steps, start.step, run.compile)

        def stepped(done: int, loss: float, lr: float) -> None:  # stop on a non-finite loss, else log the step
            if not math.isfinite(loss):
                raise TrainingStopped(
                    f"the loss became {loss} at step {done}; training stopped and {writer.kept}; try a smaller lr"
                )
            tally.done, tally.tokens = done, tally.tokens + data.tokens(done - 1)
            if governor:
                governor.tick()
            tok_s = tally.tokens / max(time.perf_counter() - t0, 1e-9)
            _log_step(writer, bar, done, loss, lr, tok_s, tally.val_loss)

        def evaluated(done: int) -> None:
            tally.train_loss, tally.val_loss = _evaluate_and_save(model, optimizer, data, writer, bar, done)
            tally.saved = done

        def end(done: int) -> None:  # a Ctrl-C or SIGTERM during this step: it is whole, logged, and saved below
            stop.check(world)

        train_steps(optimizer, tc, range(start.step, last), step, stepped, evaluated, tc.eval_interval, end)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM: keep what was trained so far, unless that would replace a checkpoint
        if tally.done > tally.saved and not writer.staged:  # of another run before this one's first evaluation
            writer.save(model, tally.done, optimizer, {"world_size": world.size})
        raise
    except (RuntimeError, OSError) as e:
        told = _told(e, out, tally.done, writer.kept, world)
        if told is None:
            raise
        raise told from None
    finally:
        try:
            writer.close()
            if bar:
                bar.close()
        finally:  # whatever happens above, Ctrl-C and SIGTERM are as they were before training
            stop.remove()
    seconds = time.perf_counter() - t0
    return TrainResult(out, last, tally.train_loss, tally.val_loss, tally.tokens / max(seconds, 1e-9), seconds)


@dataclass
class _Tally:
    """What run_loop has done so far: steps finished, steps in the checkpoint, tokens trained on,
    the last evaluation's losses."""

    done: int
    saved: int
    tokens: int = 0
    train_loss: float | None = None
    val_loss: float | None = None


def _on_device(run: Run) -> AnyOptimizer:
    """Every rank joined and on its device, the model moved there, its AdamW made (a resume's state loaded)."""
    distributed.join(run.device)
    distributed.barrier(run.data.world)  # every rank has read what it needs from `out` before rank 0 writes there
    devices.prepare(run.device)
    run.start.model.to(run.device)
    optimizer = make_optimizer(run.start.model, run.start.tc)
    if run.start.optimizer_state is not None:  # resumed
        load_optimizer(optimizer, run.start.optimizer_state, run.start.optimizer_file, run.start.step)
    return optimizer


def _writer(out: Path, run: Run):
    """Rank 0's checkpoint.Writer in `out` (the other ranks write nothing)."""
    start = run.start
    if not run.data.world.main:
        return _NoWriter()
    try:
        return checkpoint.Writer(
            out,
            start.model.cfg,
            start.tc,
            start.tokenizer,
            run.record,
            resume=start.resumed,
            log_lines=list(start.log_lines),
        )
    except OSError as e:
        raise OSError(
            f"could not write to {out} ({e.strerror or e}); the checkpoint in it, if any, is unchanged"
        ) from None


def _log_step(writer, bar, done: int, loss: float, lr: float, tok_s: float, val_loss: float | None) -> None:
    """The step's line of log.jsonl, and the progress bar's figures."""
    writer.write_log(json.dumps({"step": done, "loss": round(loss, 6), "lr": lr, "tokens_per_s": round(tok_s)}))
    if bar:
        bar.update(1)
        val = phrase("train.progress_val", val_loss=f"{val_loss:.3f}") if val_loss else ""
        bar.set_postfix_str(
            said(phrase("train.progress", loss=f"{loss:.3f}", val=val, rate=f"{tok_s:,.0f}")), refresh=False
        )


def _evaluate_and_save(model, optimizer, data: Data, writer, bar, done: int) -> tuple[float, float | None]:
    """Evaluate after step `done`, log it and save the checkpoint; (train loss, val loss)."""
    train_loss, val_loss = data.evaluate(model)
    evaluation = {"step": done, "train_loss": round(train_loss, 6), "val_loss": val_loss and round(val_loss, 6)}
    writer.write_log(json.dumps(evaluation))
    writer.save(model, done, optimizer, {"train_loss": train_loss, "val_loss": val_loss, "world_size": data.world.size})
    if bar:
        val = phrase("train.evaluated_val", val_loss=f"{val_loss:.4f}") if val_loss is not None else ""
        bar.write(said(phrase("train.evaluated", step=done, train_loss=f"{train_loss:.4f}", val=val)), file=sys.stderr)
    return train_loss, val_loss


def _told(e: RuntimeError | OSError, out: Path, done: int, kept: str, world: World) -> Exception | None:
    """What a run stopped by `e` says (what is kept of it), or None to raise `e` itself."""
    if isinstance(e, distributed.PeerLost):
        return distributed.PeerLost(f"{e}; {kept}")
    if isinstance(e, RuntimeError):  # inside DDP's forward or backward, where it talks to the other ranks
        return (
            distributed.PeerLost(f"{distributed.lost(e)}; {kept}")
            if world.size > 1 and distributed.from_peers(e)
            else None
        )
    return OSError(f"could not write to {out} ({e.strerror or e}) after step {done}; {kept}")  # e.g. the disk is full


class _StopRequest:
    """Ctrl-C or SIGTERM while training: the run stops at the end of the step it is in, so what is
    saved is a whole step, logged (an interrupt inside the optimizer's update, or between a step and
    its log line, would save weights, step and log that disagree). A second Ctrl-C stops at once, as
    Ctrl-C always did; a second SIGTERM (the process group's, then the launcher's) asks the same again.
    SIGTERM (`kill`, a scheduler, `qkv train --nproc` passing its own on) matters because Ctrl-C may
    never arrive: a job that a shell script starts with `&` ignores SIGINT, and so does every process
    it starts (Python then leaves it ignored, and so does this). Signals reach the main thread only."""

    def __init__(self):
        self.asked, self.before = False, {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        self.before[signal.SIGTERM] = signal.signal(signal.SIGTERM, self._ask)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.before[signal.SIGINT] = signal.signal(signal.SIGINT, self._ask_or_stop)

    def remove(self) -> None:
        for signum, handler in self.before.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)

    def _ask(self, signum, frame) -> None:
        self.asked = True

    def _ask_or_stop(self, signum, frame) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True

    def check(self, world: World) -> None:
        """At the end of a step: stop here if asked to (the KeyboardInterrupt that Ctrl-C raises).
        The ranks agree first: a Ctrl-C reaches each of them at its own moment, and a rank that
        stopped one step before another would leave that one waiting on it in the next step."""
        if world.total(float(self.asked)) > 0:
            self.asked = True
            raise KeyboardInterrupt


class _NoWriter:
    """What ranks other than 0 write: nothing (rank 0 keeps the checkpoint and the log)."""

    kept, staged = "rank 0 keeps the checkpoint", False

    def write_log(self, line: str) -> None:
        pass

    def save(self, *args, **kwargs) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(enabled: bool, total: int, initial: int, compiling: bool = False):
    """The progress bar of the steps (None: none); with `compiling`, first a line that the compiler runs first."""
    if not enabled:
        return None
    from tqdm import tqdm

    unit = said(phrase("train.unit"))
    bar = tqdm(total=total, initial=initial, unit=unit, file=sys.stderr, dynamic_ncols=True, mininterval=0.25)
    if compiling:  # the first step waits for the compiler: say so before it
        bar.write(said(phrase("accum.compiling")), file=sys.stderr)
    return bar
