"""Lessons: each claim of the source documents as an experiment that prints what it measured.

    qkv lesson --list
    qkv lesson context --lang zh --out report/
    qkv.apps.lessons.run("order", lang="en")

A lesson is two modules with the same name. qkv.apps.lessons.<name> MEASURES: it declares
NEEDS_MODEL and defines `measure(model, tokenizer, seed)` (NEEDS_MODEL true: it reads the bundled
model or --ckpt) or `measure(seed)` (it trains its own small models), returning a plain dict of
numbers (JSON-able; curves as lists). qkv.presentation.lessons.<name> SAYS and DRAWS those numbers:
`text(n, lang)`, `headline(n, lang)`, `figures(n, out, lang)`, from the message area
"lessons.<name>". `run` below is the only code they share.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from qkv.core.bundled import default_ckpt
from qkv.presentation.i18n import check_lang, t

from .base import LessonResult, check_folder

# lesson name -> module name (the same under apps.lessons and presentation.lessons), in teaching order
LESSONS = {
    "convex": "convex",
    "why-v": "why_v",
    "context": "context",
    "order": "order",
    "heads": "heads",
    "dropout": "dropout",
    "residual": "residual",
    "embedding": "embedding",
    "next-token": "next_token",
}


def _module_name(name: str) -> str:
    if name not in LESSONS:
        raise ValueError(f"unknown lesson {name!r}; choose one of {', '.join(LESSONS)}")
    return LESSONS[name]


def lesson_module(name: str):
    """The module that measures lesson `name`."""
    return importlib.import_module(f".{_module_name(name)}", __name__)


def view_module(name: str):
    """The module that says and draws lesson `name`."""
    return importlib.import_module(f"qkv.presentation.lessons.{_module_name(name)}")


def title(name: str, lang: str = "en") -> str:
    return t(f"lessons.{_module_name(name)}.title", check_lang(lang))


def titles(lang: str = "en") -> dict[str, str]:
    return {name: title(name, lang) for name in LESSONS}


def run(name: str, lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    """Run lesson `name`: measure, say it in `lang`, draw its figures into the folder `out` (None: none).

    `ckpt` is the checkpoint a lesson that reads a model reads (None: the bundled model); lessons that
    train their own models ignore it."""
    check_lang(lang)
    if out is not None:
        check_folder(out, "lesson's figures")
    lesson, view = lesson_module(name), view_module(name)
    extra = {}
    if lesson.NEEDS_MODEL:
        from qkv.core.checkpoint import load

        model, tokenizer = load(ckpt if ckpt is not None else default_ckpt())
        model.eval()
        numbers = dict(lesson.measure(model, tokenizer, seed))
        if getattr(view, "DRAWS_MODEL", False):  # a figure of the model itself (see that module)
            extra = {"model": model, "tokenizer": tokenizer}
    else:
        numbers = dict(lesson.measure(seed))  # a copy: measure may cache its dict
    figures = view.figures(numbers, Path(out), lang, **extra) if out is not None else []
    return LessonResult(name, title(name, lang), view.text(numbers, lang), view.headline(numbers, lang),
                        numbers, figures, lang)


__all__ = ["LESSONS", "LessonResult", "default_ckpt", "lesson_module", "run", "title", "titles", "view_module"]
