"""Lessons: each claim of the source documents as an experiment that prints what it measured.

    qkv lesson --list
    qkv lesson context --lang zh --out report/
    qkv.apps.lessons.run("order", lang="en")

A lesson is two modules with the same name. qkv.apps.lessons.<name> MEASURES: it declares
NEEDS_MODEL and defines `measure(model, tokenizer, seed)` (NEEDS_MODEL true: it reads the bundled
model or --ckpt; NEEDS_MODEL "minilm": it reads a pretrained BERT-family encoder, all-MiniLM-L6-v2
from the `real` extra unless --ckpt names another; NEEDS_MODEL "translate": it reads a zh→en
translation model, the bundled one unless --ckpt names another) or `measure(seed)` (it trains its own
small models), returning a plain dict of numbers (JSON-able; curves as lists).
qkv.presentation.lessons.<name> SAYS and DRAWS those numbers: `text(n, lang)`, `headline(n, lang)`,
`figures(n, out, lang)`, from the message area "lessons.<name>". `run` below is the only code they share.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from qkv.core.bundled import default_ckpt
from qkv.presentation.i18n import check_lang, t

from .base import LessonResult, check_folder

# lesson name -> module name (the same under apps.lessons and presentation.lessons), in teaching order;
# `qkv demo` runs these, on the bundled model or on models they train
LESSONS = {
    "convex": "convex",
    "why-v": "why_v",
    "context": "context",
    "order": "order",
    "heads": "heads",
    "dropout": "dropout",
    "residual": "residual",
    "embedding": "embedding",
    "transform": "transform",
    "next-token": "next_token",
    "align": "align",
}
# lessons on a real pretrained encoder (the `real` extra): not in the demo, which must work without it
REAL_LESSONS = {
    "real-apple": "real_apple",
    "real-heads": "real_heads",
    "real-hull": "real_hull",
}
ALL_LESSONS = {**LESSONS, **REAL_LESSONS}

# lessons written for a causal language model (a GPT), and why an encoder cannot run them
NEEDS_GPT = {
    "convex": "its sentence, query and cue word are chosen for the bundled word-level GPT, and its residual "
    "step is a pre-norm block's; real-hull is this lesson on an encoder",
    "context": "it compares the next words the model predicts, and an encoder has no next-token head; "
    "real-apple is this lesson on an encoder",
    "heads": "it reads the query after the comma of the corpus's sense probes, in a causal model; "
    "real-heads is this lesson on an encoder",
    "dropout": "it rebuilds the model as a qkv GPT to switch attention dropout on",
    "next-token": "it turns the last position's vector into next-token probabilities, and an encoder has no such head",
}


def _module_name(name: str) -> str:
    if name not in ALL_LESSONS:
        raise ValueError(f"unknown lesson {name!r}; choose one of {', '.join(ALL_LESSONS)}")
    return ALL_LESSONS[name]


def lesson_module(name: str):
    """The module that measures lesson `name`."""
    return importlib.import_module(f".{_module_name(name)}", __name__)


def view_module(name: str):
    """The module that says and draws lesson `name`."""
    return importlib.import_module(f"qkv.presentation.lessons.{_module_name(name)}")


def title(name: str, lang: str = "en") -> str:
    return t(f"lessons.{_module_name(name)}.title", check_lang(lang))


def titles(lang: str = "en", real: bool = False) -> dict[str, str]:
    """Lesson name -> title: the demo's lessons, and with real=True the lessons on a real encoder too."""
    return {name: title(name, lang) for name in (ALL_LESSONS if real else LESSONS)}


def _task(path) -> dict:
    """The task a checkpoint directory's config.json records ({} when it records none)."""
    from qkv.core.checkpoint import read_config

    try:
        task = read_config(Path(path)).get("task")
    except (ValueError, OSError):
        return {}
    return task if isinstance(task, dict) else {}


def load_model(name: str, needs, ckpt=None):
    """(model in eval mode, tokenizer) for lesson `name`, or a one-line ValueError saying why it cannot read it.

    needs "minilm": a BERT-family encoder, all-MiniLM-L6-v2 unless `ckpt` names another; needs
    "translate": an encoder-decoder (arch=seq2seq), the bundled translation model unless `ckpt` names
    another; needs True: the bundled model or `ckpt`, a language model (not a translation model), which
    must be a GPT when the lesson is one of NEEDS_GPT."""
    from qkv.core.checkpoint import load

    if needs == "minilm":
        model, tokenizer = load(ckpt if ckpt is not None else "minilm")
        if model.has_lm_head or model.cfg.arch != "bert":
            raise ValueError(
                f"lesson {name!r} reads a BERT-family encoder (by default minilm, the `real` extra); "
                f"{ckpt} is a {model.cfg.arch} language model"
            )
    elif needs == "translate":
        from qkv.core.bundled import default_translate_ckpt

        path = ckpt if ckpt is not None else default_translate_ckpt()
        model, tokenizer = load(path)
        if model.cfg.arch != "seq2seq":
            kind = "a GPT" if model.has_lm_head else "an encoder"
            raise ValueError(
                f"lesson {name!r} reads a translation model (arch=seq2seq; by default the bundled one), "
                f"and {ckpt} is {kind}"
            )
        task = _task(path)
        if task.get("kind") == "translate" and (task.get("source"), task.get("target")) != ("zh", "en"):
            raise ValueError(
                f"lesson {name!r} reads a zh→en translation model, and {path} translates "
                f"{task.get('source')}→{task.get('target')}"
            )
    else:
        model, tokenizer = load(ckpt if ckpt is not None else default_ckpt())
        if model.cfg.arch == "seq2seq":
            raise ValueError(
                f"lesson {name!r} reads a language model (a GPT{'' if name in NEEDS_GPT else ' or an encoder'}), "
                f"and {ckpt} is a translation model (encoder-decoder); lesson 'align' reads translation models"
            )
        if not model.has_lm_head and name in NEEDS_GPT:
            raise ValueError(f"lesson {name!r} needs a GPT, and {ckpt} is an encoder: {NEEDS_GPT[name]}")
    return model.eval(), tokenizer


def run(name: str, lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    """Run lesson `name`: measure, say it in `lang`, draw its figures into the folder `out` (None: none).

    `ckpt` is the checkpoint a lesson that reads a model reads (None: the bundled model, MiniLM for
    the lessons of REAL_LESSONS, the bundled translation model for align); lessons that train their
    own models ignore it."""
    check_lang(lang)
    if out is not None:
        check_folder(out, "lesson's figures")
    lesson, view = lesson_module(name), view_module(name)
    extra = {}
    if lesson.NEEDS_MODEL:
        model, tokenizer = load_model(name, lesson.NEEDS_MODEL, ckpt)
        numbers = dict(lesson.measure(model, tokenizer, seed))
        if getattr(view, "DRAWS_MODEL", False):  # a figure of the model itself (see that module)
            extra = {"model": model, "tokenizer": tokenizer}
    else:
        numbers = dict(lesson.measure(seed))  # a copy: measure may cache its dict
    figures = view.figures(numbers, Path(out), lang, **extra) if out is not None else []
    return LessonResult(
        name, title(name, lang), view.text(numbers, lang), view.headline(numbers, lang), numbers, figures, lang
    )


__all__ = [
    "ALL_LESSONS",
    "LESSONS",
    "LessonResult",
    "NEEDS_GPT",
    "REAL_LESSONS",
    "default_ckpt",
    "lesson_module",
    "load_model",
    "run",
    "title",
    "titles",
    "view_module",
]
