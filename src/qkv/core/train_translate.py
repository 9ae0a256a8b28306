"""Training a translation model: an encoder-decoder (arch="seq2seq") on sentence pairs.

The loop is train.py's (AdamW, warmup + cosine decay, clipping, atomic checkpoints, exact resume,
a stop on a non-finite loss, Ctrl-C keeping what was trained); what differs is the data. A step
draws batch_size pairs with a generator seeded by (seed, step), pads them (translation.collate),
and scores the decoder's prediction of every target word and of </s>, padding left out
(seq2seq_loss). The pairs come from qkv's corpus (corpus.pairs: "train" to learn from, the
held-out frames for the validation loss, never trained on) or from a TSV file (source TAB target;
the last val_fraction of its pairs are the validation pairs).

config.json records the task, {"kind": "translate", "source": "zh", "target": "en"}, and the data
(kind "builtin" or "file", sha256 of the pairs), so a resume refuses other pairs or the other
direction, and `qkv translate` / `qkv info` can say what the model translates.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import torch
import torch.nn.functional as F

from . import checkpoint, lock, rundir
from .config import PRESETS, ModelConfig, TrainConfig, apply_overrides
from .models.seq2seq import Seq2Seq, seq2seq_loss
from .resume import recorded_source
from .train import (
    Setup,
    TrainResult,
    optimize,
    refuse_on_resume,
    refuse_other_task,
    refuse_to_replace,
    resume_setup,
    run_loop,
    step_seed,
)
from .translation import PAD, build_tokenizer, collate, make_examples, read_pairs

DIRECTIONS = ("zh-en", "en-zh")  # the built-in corpus's; a pairs file may name other languages
DEFAULT_SENTENCES = 20000  # training pairs drawn from the built-in corpus (the bundled model's data)
CORPUS_SEED = 0  # the corpus seed of the training pairs (pairs("train", seed=0, ...)) and of the held-out ones
_LANG = re.compile(r"[a-z]{2,8}")


def parse_direction(direction: str, builtin: bool = True) -> tuple[str, str]:
    """ "zh-en" -> ("zh", "en"). The built-in corpus has zh-en and en-zh; a pairs file may name any two languages."""
    src, sep, tgt = str(direction).partition("-")
    if builtin and direction not in DIRECTIONS:
        raise ValueError(f"the built-in corpus translates {' or '.join(DIRECTIONS)}; got direction {direction!r}")
    if not sep or not _LANG.fullmatch(src) or not _LANG.fullmatch(tgt) or src == tgt:
        raise ValueError(f"direction must be SOURCE-TARGET, two different language codes like zh-en; got {direction!r}")
    return src, tgt


def direction_of(config: dict) -> tuple[str, str] | None:
    """(source, target) of a translation checkpoint's config.json; None for another model."""
    task = config.get("task")
    if not isinstance(task, dict) or task.get("kind") != "translate":
        return None
    return str(task.get("source", "zh")), str(task.get("target", "en"))


class PairData:
    """The batches of the translation task: batch_size examples drawn per step, padded."""

    def __init__(self, train, val, tc: TrainConfig):
        self.train, self.val, self.tc = train, val, tc
        self._tokens = 0

    def _batch(self, examples, g: torch.Generator):
        pick = torch.randint(len(examples), (self.tc.batch_size,), generator=g).tolist()
        return collate([examples[i] for i in pick])

    def step(self, model, optimizer, step: int) -> float:
        """Train on the pairs of `step` (drawn by a generator seeded by (seed, step)); the loss."""
        src, src_mask, tgt_in, tgt_out = self._batch(
            self.train, torch.Generator().manual_seed(step_seed(self.tc.seed, step))
        )
        self._tokens = int((tgt_out != PAD).sum())
        torch.manual_seed(step_seed(self.tc.seed + 1, step))  # dropout masks
        return optimize(model, optimizer, seq2seq_loss(model(src, tgt_in, src_mask), tgt_out, PAD), self.tc.grad_clip)

    def tokens(self, step: int) -> int:
        """The target tokens the last step scored (for the tokens/s figure)."""
        return self._tokens

    @torch.inference_mode()
    def evaluate(self, model) -> tuple[float, float | None]:
        """(train loss, val loss) per target token: eval_steps batches of training pairs drawn from a
        generator seeded by `seed` (the same every time), and the first eval_steps * batch_size val pairs."""
        was_training = model.training
        model.eval()
        g = torch.Generator().manual_seed(self.tc.seed)
        train = _mean_loss(model, [self._batch(self.train, g) for _ in range(self.tc.eval_steps)])
        n, b = min(len(self.val), self.tc.eval_steps * self.tc.batch_size), self.tc.batch_size
        val = _mean_loss(model, [collate(self.val[i : i + b]) for i in range(0, n, b)]) if n else None
        model.train(was_training)
        return train, val


def _mean_loss(model, batches) -> float:
    total, count = 0.0, 0
    for src, src_mask, tgt_in, tgt_out in batches:
        logits = model(src, tgt_in, src_mask)  # (B, T, d_vocab)
        total += F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD, reduction="sum").item()
        count += int((tgt_out != PAD).sum())
    return total / count


# ---------------------------------------------------------------------------- the pairs


def _digest(pairs) -> str:
    text = "".join(" ".join(s) + "\t" + " ".join(t) + "\n" for s, t in pairs)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _builtin(direction: str, n_sentences: int):
    """(train pairs, val pairs, record) from qkv's corpus: the val pairs are the held-out frames."""
    from .corpus import pairs

    flip = direction == "en-zh"
    side = (lambda p: (list(p.en), list(p.zh))) if flip else (lambda p: (list(p.zh), list(p.en)))
    train = [side(p) for p in pairs("train", seed=CORPUS_SEED, n_sentences=n_sentences)]
    val = [side(p) for p in pairs("heldout", seed=CORPUS_SEED)]
    return train, val, {"kind": "builtin", "corpus_seed": CORPUS_SEED, "n_sentences": n_sentences}


def _from_file(path, val_fraction: float):
    """(train pairs, val pairs, record) from a TSV file: its last val_fraction of pairs are the val pairs."""
    every = read_pairs(path)
    n_val = int(len(every) * val_fraction)
    if len(every) - n_val < 1:
        raise ValueError(f"pairs file {path} holds {len(every)} pair(s): none left to train on after the val split")
    return every[: len(every) - n_val], every[len(every) - n_val :], {"kind": "file", "path": str(Path(path).resolve())}


def _data(pairs_path, direction: str, n_sentences: int | None, val_fraction: float):
    """(train pairs, val pairs, record). Val pairs with a word that no training pair uses are left out."""
    if pairs_path is None:
        if isinstance(n_sentences, int) and n_sentences > 1_000_000:
            raise ValueError(f"n_sentences must be at most 1000000; got {n_sentences}")
        train, val, record = _builtin(direction, DEFAULT_SENTENCES if n_sentences is None else n_sentences)
    else:
        if n_sentences is not None:
            raise ValueError("n_sentences is for the built-in corpus; a pairs file gives its own pairs")
        train, val, record = _from_file(pairs_path, val_fraction)
    known = {w for pair in train for side in pair for w in side}  # the tokenizer's words
    scored = [(s, t) for s, t in val if known.issuperset(s) and known.issuperset(t)]  # a word never trained: no score
    record.update(
        sha256=_digest(train + val), pairs=len(train), val_pairs=len(scored), val_left_out=len(val) - len(scored)
    )
    return train, scored, record


def _examples(run: Setup, train, val, until: int | None) -> Setup:
    """The run with its pairs as examples, and the step to stop after."""
    if until is not None and not (run.start < until <= run.tc.steps):
        raise ValueError(f"--until must be between {run.start + 1} and {run.tc.steps}; got {until}")
    n_ctx = run.model.cfg.n_ctx
    run.data = PairData(make_examples(run.tokenizer, train, n_ctx), make_examples(run.tokenizer, val, n_ctx), run.tc)
    run.last = until or run.tc.steps
    return run


def _settings(preset: str, overrides) -> tuple[dict, TrainConfig]:
    """The model fields (d_vocab still open) and the TrainConfig of a new run."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    model_over, train_over = apply_overrides(PRESETS[preset].model, PRESETS[preset].train, list(overrides))
    if model_over.setdefault("arch", "seq2seq") != "seq2seq":
        raise ValueError(f"a translation model is an encoder-decoder (arch=seq2seq); got arch={model_over['arch']}")
    return model_over, TrainConfig(**train_over)


def _fresh(train, model_over: dict, tc: TrainConfig, extra: dict) -> Setup:
    tok = build_tokenizer([side for pair in train for side in pair])
    if model_over.get("d_vocab", tok.vocab_size) < tok.vocab_size:
        raise ValueError(f"d_vocab={model_over['d_vocab']} is smaller than the tokenizer's {tok.vocab_size} tokens")
    mc = ModelConfig(**{**model_over, "d_vocab": model_over.get("d_vocab", tok.vocab_size)})
    torch.manual_seed(tc.seed)
    return Setup(Seq2Seq(mc), tok, tc, 0, extra["data"], log_lines=[], extra=extra)


def _check_resumable(out: Path, task: dict, record: dict) -> None:
    """One line when `out` was trained in another direction or on another split of the pairs."""
    config = checkpoint.read_config(out)
    was = direction_of(config)
    if was != (task["source"], task["target"]):
        raise ValueError(f"{out} translates {'-'.join(was)}; it cannot be resumed as {task['source']}-{task['target']}")
    old = recorded_source(config, out)
    for key in ("pairs", "val_pairs"):
        if old.get(key) not in (None, record[key]):
            raise ValueError(
                f"{out} was trained with {old[key]} {key.replace('_', ' ')}, now there are {record[key]}: "
                "resume with the same pairs and val_fraction"
            )


def train_translation(
    pairs_path=None,
    *,
    out="runs/translate",
    direction: str | None = None,
    n_sentences: int | None = None,
    preset: str | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    resume: bool = False,
    force: bool = False,
    until: int | None = None,
    progress: bool = True,
) -> TrainResult:
    """Train an encoder-decoder to translate, into the directory `out`.

    The pairs: the built-in corpus (`n_sentences` training pairs, DEFAULT_SENTENCES if None; the
    held-out frames for the val loss) or `pairs_path`, a UTF-8 TSV file of source TAB target.
    `direction` ("zh-en" by default, or "en-zh") picks which side of the corpus is the source; for
    a file it names the languages of its two columns. `preset` ("translate" by default) and
    `overrides` ("key=value") shape a new run; `resume`, `force` and `until` work as in train.train.
    """
    out = Path(out)
    found = rundir.inspect(out)
    lock.check_free(out)
    if resume:
        refuse_on_resume(out, force=force, preset=preset, n_sentences=n_sentences)
        if found != "checkpoint":
            checkpoint.load_checkpoint(out)  # raises the reason: no directory, no config.json, no state.json
        refuse_other_task(out, "translate")
        config = checkpoint.read_config(out)
        recorded = recorded_source(config, out)
        direction = direction or "-".join(direction_of(config))
        if pairs_path is None and recorded["kind"] == "file":
            pairs_path = recorded["path"]
        n_sentences = recorded.get("n_sentences") if pairs_path is None else None
        tc = TrainConfig.from_dict(apply_overrides({}, config.get("train") or {}, list(overrides))[1])
    else:
        refuse_to_replace(found, out, force)
        model_over, tc = _settings(preset or "translate", overrides)
    source, target = parse_direction(direction or "zh-en", builtin=pairs_path is None)
    train, val, record = _data(pairs_path, f"{source}-{target}", n_sentences, tc.val_fraction)
    task = {"kind": "translate", "source": source, "target": target}
    extra = {"data": record, "task": task}
    run = None if resume else _examples(_fresh(train, model_over, tc, extra), train, val, until)
    with lock.locked(out):
        if resume:
            _check_resumable(out, task, record)
            run = resume_setup(out, record, overrides, what="set of sentence pairs")
            run.extra = extra
            run = _examples(run, train, val, until)
        else:
            refuse_to_replace(rundir.inspect(out), out, force)  # another run may have saved there meanwhile
        return run_loop(out, run, resume, progress)
