"""Training a GPT: next-token prediction on a text (the task "lm").

    train(text_path="book.txt", out="runs/book", preset="baby")     # a new run
    train(out="runs/book", resume=True, overrides=["steps=4000"])   # rereads book.txt, continues exactly

What is shared with every task (resume, refusals, lock, device, processes) is run.py's; the
loop, the schedule and the checkpoints are loop.py's. This module says only what is a GPT's: the
text and where it came from, the tokenizer it trains, and the batches (LMData): windows of n_ctx + 1
tokens (qkv.core.text.batches).

Every step draws its batch and its dropout masks from generators seeded by (seed, step), so a
run that is stopped and resumed sees exactly the numbers an uninterrupted run sees: the same
batches always, and the same sums bit for bit at a fixed thread count (--threads or QKV_THREADS;
otherwise `qkv train` follows the machine's load, and a sum over 1 or 2 threads can differ in
its last bit).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from qkv.core.io.refusal import Refusal, phrase
from qkv.core.machine.device import Precision, model_device
from qkv.core.machine.processes import ALONE, World
from qkv.core.model import evaluating
from qkv.core.model.gpt import GPT, lm_loss
from qkv.core.spec.config import TrainConfig
from qkv.core.text.batches import get_batch, read_text, split_ids
from qkv.core.text.shards import MappedIds, TokenData, open_data
from qkv.core.text.tokenizers import Tokenizer, UnknownTokenError, train_tokenizer
from qkv.core.train.init import block_size
from qkv.core.train.loop import FLOAT32, Start, TrainingStopped, TrainResult, optimize, optimize_accumulated, step_seed
from qkv.core.train.resume import recorded_origin
from qkv.core.train.run import Request, Task, run_task

__all__ = ["LMData", "LMTask", "TrainResult", "TrainingStopped", "evaluate", "text_origin", "train", "train_step"]


@torch.inference_mode()
def evaluate(
    model: GPT, ids: torch.Tensor, tc: TrainConfig, world: World = ALONE, precision: Precision = FLOAT32
) -> float:
    """Mean loss over eval_steps batches of windows of tc.block_size tokens (None: n_ctx), always the same
    batches (a generator seeded by `seed`).
    With several processes, each scores its rows of every batch (as in training), and a batch's loss
    is the mean of the ranks' losses. The rows are scored in grad_accum pieces, as training computes
    them, so an evaluation needs no more memory than a training step (the mean of equal pieces' means)."""
    g, device, total = torch.Generator().manual_seed(tc.seed), model_device(model), 0.0
    with evaluating(model):
        for _ in range(tc.eval_steps):
            x, y = get_batch(ids, tc.batch_size, block_size(tc, model.cfg.n_ctx), g, world)  # each (B/N, T)
            for xs, ys in zip(x.chunk(tc.grad_accum), y.chunk(tc.grad_accum)):  # each (B/N/grad_accum, T)
                with precision.autocast():
                    total += lm_loss(model(xs.to(device)), ys.to(device)).item() / tc.grad_accum
    return world.total(total) / (world.size * tc.eval_steps)


def train_step(
    model: GPT,
    optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    grad_clip: float,
    world: World = ALONE,
    precision: Precision = FLOAT32,
) -> float:
    """One step of gradient descent on the next-token loss; returns the loss (before the step).

    A non-finite loss is returned without touching the weights."""
    with precision.autocast():  # float32 unless the device computes in bf16 / fp16
        loss = lm_loss(model(x), y)
    return optimize(model, optimizer, loss, grad_clip, world, precision)


class LMData:
    """The batches of next-token prediction (a loop.Data): windows of n_ctx + 1 tokens of the text's ids
    (`n_ctx` here is the training window: TrainConfig.block_size where set, at most the model's n_ctx).

    The batch of a step depends on (seed, step) only, so the step number is the whole data position:
    a resumed run, or one with another number of processes, draws the same global batches; each rank
    trains on its rows of them (world.shard)."""

    def __init__(
        self,
        train_ids: torch.Tensor,
        val_ids: torch.Tensor | None,
        tc: TrainConfig,
        n_ctx: int,
        world: World = ALONE,
        precision: Precision = FLOAT32,
    ):
        self.train_ids, self.val_ids, self.tc, self.n_ctx = train_ids, val_ids, tc, n_ctx
        self.world, self.precision = world, precision

    def tokens(self, step: int) -> int:
        """The tokens the (global) batch of `step` scores, for the tokens/s figure."""
        return self.tc.batch_size * self.n_ctx

    def step(self, model, optimizer, step: int) -> float:
        """Train on this rank's rows of the batch of `step` (drawn by a generator seeded by (seed, step)),
        in grad_accum micro-batches (loop.optimize_accumulated) where that is > 1; the loss of the whole batch."""
        g = torch.Generator().manual_seed(step_seed(self.tc.seed, step))
        x, y = get_batch(self.train_ids, self.tc.batch_size, self.n_ctx, g, self.world)  # each (B/N, n_ctx)
        device = model_device(model)
        x, y = x.to(device), y.to(device)
        torch.manual_seed((step_seed(self.tc.seed + 1, step) + self.world.rank) % 2**63)  # dropout masks, per rank
        n = self.tc.grad_accum
        if n == 1:
            return train_step(model, optimizer, x, y, self.tc.grad_clip, self.world, self.precision)
        xs, ys = x.chunk(n), y.chunk(n)  # n micro-batches, each (B/N/n, n_ctx): every one scores as many tokens

        def loss(i: int) -> torch.Tensor:
            with self.precision.autocast():
                return lm_loss(model(xs[i]), ys[i])

        return optimize_accumulated(model, optimizer, loss, n, self.tc.grad_clip, self.world, self.precision)

    def evaluate(self, model) -> tuple[float, float | None]:
        """(train loss, val loss), each over the same eval_steps batches every time."""
        train_loss = evaluate(model, self.train_ids, self.tc, self.world, self.precision)
        val_loss = (
            evaluate(model, self.val_ids, self.tc, self.world, self.precision) if self.val_ids is not None else None
        )
        return train_loss, val_loss


def text_origin(text: str | None, text_path=None) -> tuple[str, dict]:
    """The training text (the file at `text_path`, else `text`, else the built-in corpus) and where it
    came from, as config.json's "data" records it: {"kind": "file" | "string" | "builtin", "path"?, "sha256"}."""
    if text_path is not None:
        text = read_text(text_path)
        origin = {"kind": "file", "path": str(Path(text_path).resolve())}
    elif text is not None:
        if not text.strip():
            raise Refusal.of("errors.train_text_empty")
        origin = {"kind": "string"}
    else:
        from qkv.core.text.corpus import default_text

        text = default_text()
        origin = {"kind": "builtin"}
    origin["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return text, origin


@dataclass(frozen=True)
class LMTask(Task[str | TokenData]):
    """What a GPT's training supplies to run.run_task: its text, tokenizer and batches."""

    kind = "lm"
    default_preset = "tiny"
    parallel = True
    what = phrase("train.data_text")

    text: str | None = None
    text_path: str | Path | None = None
    tokenizer: str | Tokenizer | None = None  # "char" (default), "word", "bpe", or a tokenizer itself
    vocab_size: int | None = None
    data_path: str | Path | None = None  # instead of a text: ids written by `qkv tokenize` (core.text.shards)

    def new_run_settings(self) -> dict[str, object]:
        return {"tokenizer": self.tokenizer, "vocab_size": self.vocab_size}

    def recall(self, config: dict, out: Path) -> LMTask:
        """Without a text: the one the checkpoint was trained on (its file read again, or the corpus)."""
        if self.text is not None or self.text_path is not None or self.data_path is not None:
            return self
        origin = recorded_origin(config, out)
        if origin["kind"] == "string":
            raise Refusal.of("errors.resume_string", out=out)
        if origin["kind"] == "shards":  # trained with --data: the same folder again
            return replace(self, data_path=origin["path"])
        return replace(self, text_path=origin["path"]) if origin["kind"] == "file" else self

    def read(self, tc: TrainConfig) -> tuple[str | TokenData, dict]:
        if self.data_path is not None:  # memory-mapped, nothing read yet; tied to the run by the index's sha256
            data = open_data(self.data_path)
            return data, data.origin()
        return text_origin(self.text, self.text_path)

    def new_tokenizer(self, text: str | TokenData) -> Tokenizer:
        if isinstance(text, TokenData):  # the ids' own
            return text.tokenizer
        if isinstance(self.tokenizer, Tokenizer):
            return self.tokenizer
        return train_tokenizer(self.tokenizer or "char", text, self.vocab_size)

    def has_tokenizer(self, text: str | TokenData) -> bool:
        return isinstance(text, TokenData)

    def batches(self, text: str | TokenData, origin: dict, start: Start, world: World, precision: Precision):
        """LMData over the text's ids, split into train / val; config.json records the origin and the token count.
        Token data's ids stay on disk (MappedIds: each batch reads its windows, an id beyond d_vocab refused)."""
        ids: torch.Tensor | MappedIds
        if isinstance(text, TokenData):
            ids = text.ids.limited(start.model.cfg.d_vocab)
        else:
            ids = _encoded(start.tokenizer, text)
        window = block_size(start.tc, start.model.cfg.n_ctx)  # a fine-tune's may be shorter than n_ctx
        train_ids, val_ids = split_ids(ids, start.tc.val_fraction, window)
        data = LMData(train_ids, val_ids, start.tc, window, world, precision)  # type: ignore[arg-type]
        return data, {"data": {**origin, "tokens": len(ids)}}


def _encoded(tokenizer: Tokenizer, text: str) -> torch.Tensor:
    try:
        return torch.tensor(tokenizer.encode(text), dtype=torch.long)
    except UnknownTokenError as e:  # a word list cut by vocab_size: a word tokenizer has no unknown token
        raise Refusal.of("train.vocab_too_small", n=tokenizer.vocab_size, unknown=e) from None


def train(
    text: str | None = None,
    *,
    text_path=None,
    data=None,
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
    init=None,
    compile: bool = False,
) -> TrainResult:
    """Train a GPT on `text` (or the file `text_path`, or the built-in corpus) into the directory `out`.

    `data` is instead a folder `qkv tokenize` wrote (token ids on disk, read by memory mapping, and
    their tokenizer: qkv.core.text.shards; the same split as a text's). `tokenizer` ("char" by default),
    `vocab_size` and `preset` ("tiny" by default) shape a new run.
    `overrides` are "key=value" strings for ModelConfig / TrainConfig fields. `resume` continues the
    checkpoint in `out` with its own tokenizer and model; `until` stops after that step (the schedule
    still spans `steps`). `force` replaces a qkv checkpoint in `out` (it stays loadable until the new
    run's first checkpoint); a non-empty directory that is not a qkv checkpoint is never written.

    `device` is auto (CUDA, then MPS, then the CPU), cpu, cuda[:N] or mps; `precision` is auto (bf16
    autocast on CUDA, or fp16 with a gradient scaler where bf16 is missing; bf16 autocast on a CPU with
    AMX or AVX-512 BF16; float32 elsewhere), float32, bfloat16 or float16 (qkv.core.machine.device);
    `compile` runs the steps through torch.compile (qkv.core.train.compiled). Started by torchrun (or
    `qkv train --nproc N`), every process runs this function: each trains on its share of the global batch
    (qkv.core.machine.processes), and only rank 0 writes to `out`. Raises TrainingStopped on a non-finite loss.

    `init` fine-tunes: the new run starts from that model (a qkv run directory, a Hugging Face directory,
    a GGUF file, "smollm2", "hf:NAME"), its config, weights and tokenizer (qkv.core.train.init); the
    preset defaults to "finetune" and only its training fields apply.
    """
    task = LMTask(text=text, text_path=text_path, tokenizer=tokenizer, vocab_size=vocab_size)
    if data is not None:  # ids written by `qkv tokenize` (core.text.shards), with their own tokenizer
        task = _data_task(data, task)
    request = Request(
        out=Path(out),
        preset=preset,
        overrides=tuple(overrides),
        resume=resume,
        force=force,
        until=until,
        progress=progress,
        device=device,
        precision=precision,
        init=None if init is None else str(init),
        compile=compile,
    )
    return run_task(task, request)


def _data_task(data, task: LMTask) -> LMTask:
    """The task of training on the data folder `data`; refused beside a text or a tokenizer (it has its own)."""
    if task.text is not None or task.text_path is not None:
        raise Refusal.of("shards.data_and_text")
    given = [flag for flag, value in (("--tokenizer", task.tokenizer), ("--vocab-size", task.vocab_size)) if value]
    if given:
        raise Refusal.of("shards.data_tokenizer", flags=" ".join(given))
    return replace(task, data_path=data)
