"""Training a translation model: an encoder-decoder (the family that trains "translate") on sentence pairs.

What is shared with every task (resume, refusals, lock, device) is run.py's, and the loop is
loop.py's (AdamW, warmup + cosine decay, clipping, atomic checkpoints, exact resume, a stop on a
non-finite loss, Ctrl-C keeping what was trained); what differs is the data. A step draws
batch_size pairs with a generator seeded by (seed, step), pads them (translation.collate), and
scores the decoder's prediction of every target word and of </s>, padding left out
(seq2seq_loss). The pairs come from qkv's corpus (corpus.pairs: "train" to learn from, the
held-out frames for the validation loss, never trained on) or from a TSV file (source TAB target;
the last val_fraction of its pairs are the validation pairs). It trains on one process, on the
CPU, in float32.

config.json records the task, {"kind": "translate", "source": "zh", "target": "en"} (the source and
target languages), and the data (kind "builtin" or "file", sha256 of the pairs, their counts), so a
resume refuses other pairs or the other direction, and `qkv translate` / `qkv info` can say what
the model translates.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F

from qkv.core.decode.translate import PAD, build_tokenizer, collate, make_examples, read_pairs
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.machine.device import Precision
from qkv.core.machine.processes import ALONE, World
from qkv.core.model import evaluating
from qkv.core.model.seq2seq import seq2seq_loss
from qkv.core.spec.config import TrainConfig
from qkv.core.text.tokenizers import Tokenizer, WordTokenizer
from qkv.core.train.loop import Start, TrainResult, optimize, step_seed
from qkv.core.train.resume import recorded_origin
from qkv.core.train.run import Request, Task, run_task

DIRECTIONS = ("zh-en", "en-zh")  # the built-in corpus's; a pairs file may name other languages
DEFAULT_SENTENCES = 20000  # training pairs drawn from the built-in corpus (the bundled model's data)
CORPUS_SEED = 0  # the corpus seed of the training pairs (pairs("train", seed=0, ...)) and of the held-out ones
_LANG = re.compile(r"[a-z]{2,8}")


def parse_direction(direction: str, builtin: bool = True) -> tuple[str, str]:
    """ "zh-en" -> ("zh", "en"). The built-in corpus has zh-en and en-zh; a pairs file may name any two languages."""
    src, sep, tgt = str(direction).partition("-")
    if builtin and direction not in DIRECTIONS:
        raise Refusal.of("errors.direction_builtin", one=DIRECTIONS[0], other=DIRECTIONS[1], got=repr(direction))
    if not sep or not _LANG.fullmatch(src) or not _LANG.fullmatch(tgt) or src == tgt:
        raise Refusal.of("errors.direction_form", got=repr(direction))
    return src, tgt


def direction_of(config: dict) -> tuple[str, str] | None:
    """(source, target) of a translation checkpoint's config.json; None for another model."""
    task = config.get("task")
    if not isinstance(task, dict) or task.get("kind") != "translate":
        return None
    return str(task.get("source", "zh")), str(task.get("target", "en"))


class PairData:
    """The batches of the translation task (a loop.Data): batch_size examples drawn per step, padded.
    On one process (run.run_task refuses several: TranslateTask.parallel is False)."""

    world = ALONE

    def __init__(self, train, val, tc: TrainConfig):
        if tc.grad_accum > 1:  # its micro-batches would score different numbers of target tokens
            raise Refusal.of("accum.translate")
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
        with evaluating(model):
            g = torch.Generator().manual_seed(self.tc.seed)
            train = _mean_loss(model, [self._batch(self.train, g) for _ in range(self.tc.eval_steps)])
            n, b = min(len(self.val), self.tc.eval_steps * self.tc.batch_size), self.tc.batch_size
            val = _mean_loss(model, [collate(self.val[i : i + b]) for i in range(0, n, b)]) if n else None
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


def _builtin(direction: str, n_sentences: int, everyday: bool = False):
    """(train pairs, val pairs, origin) from qkv's corpus: the val pairs are the held-out frames. With
    `everyday`, the HSK sentences too: their training part to learn from, their held-out part for the
    val loss (corpus.hsk; needs hsk-sentences-audio)."""
    from qkv.core.text.corpus import hsk, pairs

    flip = direction == "en-zh"
    side = (lambda zh, en: (en, zh)) if flip else (lambda zh, en: (zh, en))
    train = [side(list(p.zh), list(p.en)) for p in pairs("train", seed=CORPUS_SEED, n_sentences=n_sentences)]
    val = [side(list(p.zh), list(p.en)) for p in pairs("heldout", seed=CORPUS_SEED)]
    origin = {"kind": "builtin", "corpus_seed": CORPUS_SEED, "n_sentences": n_sentences}
    if everyday:
        train += [side(*s.pair) for s in hsk.split("train")]
        val += [side(*s.pair) for s in hsk.split("heldout")]
        origin["everyday"] = "hsk"
    return train, val, origin


def _from_file(path, val_fraction: float):
    """(train pairs, val pairs, origin) from a TSV file: its last val_fraction of pairs are the val pairs."""
    every = read_pairs(path)
    n_val = int(len(every) * val_fraction)
    if len(every) - n_val < 1:
        raise Refusal.of("errors.pairs_none_left", path=path, n=len(every))
    return every[: len(every) - n_val], every[len(every) - n_val :], {"kind": "file", "path": str(Path(path).resolve())}


def _read(pairs_path, direction: str, n_sentences: int | None, val_fraction: float, everyday: bool = False):
    """(train pairs, val pairs, origin). Val pairs with a word that no training pair uses are left out."""
    if pairs_path is None:
        if isinstance(n_sentences, int) and n_sentences > 1_000_000:
            raise Refusal.of("errors.n_sentences_range", got=n_sentences)
        n = DEFAULT_SENTENCES if n_sentences is None else n_sentences
        train, val, origin = _builtin(direction, n, everyday)
    else:
        if n_sentences is not None or everyday:
            raise Refusal.of("errors.n_sentences_with_file")
        train, val, origin = _from_file(pairs_path, val_fraction)
    known = {w for pair in train for side in pair for w in side}  # the tokenizer's words
    scored = [(s, t) for s, t in val if known.issuperset(s) and known.issuperset(t)]  # a word never trained: no score
    origin.update(
        sha256=_digest(train + val), pairs=len(train), val_pairs=len(scored), val_left_out=len(val) - len(scored)
    )
    return train, scored, origin


@dataclass(frozen=True)
class Pairs:
    """What a translation run reads: its training and validation pairs (each a pair of word lists)."""

    train: list
    val: list
    languages: tuple[str, str]  # (source, target)


@dataclass(frozen=True)
class TranslateTask(Task[Pairs]):
    """What a translation model's training supplies to run.run_task: its pairs, word list and batches."""

    kind = "translate"
    default_preset = "translate"
    parallel = False  # PairData draws whole batches on one process
    what = phrase("train.data_pairs")

    pairs_path: str | Path | None = None
    direction: str | None = None  # "zh-en" by default
    n_sentences: int | None = None  # from the built-in corpus (DEFAULT_SENTENCES by default)
    everyday: bool = False  # the built-in corpus with the HSK sentences (corpus.hsk)

    def new_run_settings(self) -> dict[str, object]:
        return {"n_sentences": self.n_sentences, "everyday": self.everyday or None}

    def recall(self, config: dict, out: Path) -> TranslateTask:
        """What was not given again, as the checkpoint records it: the direction, the file or the corpus's size."""
        recorded = recorded_origin(config, out)
        pairs_path, direction = self.pairs_path, direction_of(config)
        assert direction is not None  # run._settings resumes only a translation checkpoint (refuse_other_task)
        if pairs_path is None and recorded["kind"] == "file":
            pairs_path = recorded["path"]
        return replace(
            self,
            pairs_path=pairs_path,
            direction=self.direction or "-".join(direction),
            n_sentences=recorded.get("n_sentences") if pairs_path is None else None,
            everyday=pairs_path is None and recorded.get("everyday") == "hsk",
        )

    def read(self, tc: TrainConfig) -> tuple[Pairs, dict]:
        source, target = parse_direction(self.direction or "zh-en", builtin=self.pairs_path is None)
        train, val, origin = _read(
            self.pairs_path, f"{source}-{target}", self.n_sentences, tc.val_fraction, self.everyday
        )
        return Pairs(train, val, (source, target)), origin

    def check_resume(self, pairs: Pairs, config: dict, out: Path) -> None:
        """One line when `out` was trained in another direction or on another split of the pairs."""
        was, now = direction_of(config), "-".join(pairs.languages)
        assert was is not None  # run.run_task resumes only a translation checkpoint (refuse_other_task)
        if was != pairs.languages:
            raise Refusal.of("errors.resume_direction", out=out, was="-".join(was), now=now)
        old, new = recorded_origin(config, out), {"pairs": len(pairs.train), "val_pairs": len(pairs.val)}
        for key in ("pairs", "val_pairs"):
            if old.get(key) not in (None, new[key]):
                raise Refusal.of(
                    "train.pairs_count", out=out, was=old[key], what=phrase(f"train.count_{key}"), now=new[key]
                )

    def new_tokenizer(self, pairs: Pairs) -> Tokenizer:
        return build_tokenizer([side for pair in pairs.train for side in pair])

    def batches(self, pairs: Pairs, origin: dict, start: Start, world: World, precision: Precision):
        """PairData over the pairs as examples; config.json records their origin and the task (its languages)."""
        n_ctx, tok = start.model.cfg.n_ctx, start.tokenizer
        assert isinstance(tok, WordTokenizer)  # a translation's vocabulary: build_tokenizer's words
        data = PairData(make_examples(tok, pairs.train, n_ctx), make_examples(tok, pairs.val, n_ctx), start.tc)
        source, target = pairs.languages
        return data, {"data": origin, "task": {"kind": "translate", "source": source, "target": target}}


def train_translation(
    pairs_path=None,
    *,
    out="runs/translate",
    direction: str | None = None,
    n_sentences: int | None = None,
    everyday: bool = False,
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
    a file it names the languages of its two columns. `everyday` adds the HSK sentences to the built-in
    corpus (their training part; the held-out part joins the val pairs; needs hsk-sentences-audio).
    `preset` ("translate" by default) and `overrides` ("key=value") shape a new run; `resume`, `force`
    and `until` work as in train.train.
    """
    task = TranslateTask(pairs_path=pairs_path, direction=direction, n_sentences=n_sentences, everyday=everyday)
    request = Request(
        out=Path(out),
        preset=preset,
        overrides=tuple(overrides),
        resume=resume,
        force=force,
        until=until,
        progress=progress,
        device="cpu",
        precision="float32",
    )
    return run_task(task, request)
