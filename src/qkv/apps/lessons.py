"""The lessons' old import path (`from qkv.apps import lessons`; `qkv.apps.lessons.run(...)`), kept so
that code written against it still runs: the names it offered, now those of qkv.lessons. The lessons
themselves are the layer qkv.lessons, one folder each (their old modules, qkv.apps.lessons.<name>, are gone)."""

from qkv.lessons import (
    ALL_LESSONS,
    DEFAULT_MODEL,
    LESSONS,
    REAL_LESSONS,
    LessonResult,
    lesson_module,
    load_model,
    reading,
    run,
    title,
    titles,
    view_module,
)

__all__ = [
    "ALL_LESSONS",
    "DEFAULT_MODEL",
    "LESSONS",
    "REAL_LESSONS",
    "LessonResult",
    "lesson_module",
    "load_model",
    "reading",
    "run",
    "title",
    "titles",
    "view_module",
]
