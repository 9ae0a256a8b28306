"""Lessons: each claim of the source documents as an experiment that prints what it measured.

    qkv lesson --list
    qkv lesson context --lang zh --out report/
    qkv.lessons.run("order", lang="en")
"""

from __future__ import annotations

import importlib

from qkv.presentation.i18n import check_lang
from qkv.core.bundled import default_ckpt

from .base import LessonResult

# lesson name -> module name, in teaching order
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


def lesson_module(name: str):
    if name not in LESSONS:
        raise ValueError(f"unknown lesson {name!r}; choose one of {', '.join(LESSONS)}")
    return importlib.import_module(f".{LESSONS[name]}", __name__)


def titles(lang: str = "en") -> dict[str, str]:
    check_lang(lang)
    return {name: lesson_module(name).TITLE[lang] for name in LESSONS}


def run(name: str, lang: str = "en", out=None, ckpt=None, seed: int = 0) -> LessonResult:
    """Run one lesson; figures go to `out` (a folder) when given."""
    check_lang(lang)
    return lesson_module(name).run(lang=lang, out=out, ckpt=ckpt, seed=seed)


__all__ = ["LESSONS", "LessonResult", "default_ckpt", "lesson_module", "run", "titles"]
