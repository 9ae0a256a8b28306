"""The lessons' old import path (`from qkv.apps import lessons`; `qkv.apps.lessons.run(...)`), kept so
that code written against it still runs. The lessons themselves are the layer qkv.lessons, one folder each."""

from qkv.lessons import ALL_LESSONS, LESSONS, REAL_LESSONS, LessonResult, run, title, titles

__all__ = ["ALL_LESSONS", "LESSONS", "REAL_LESSONS", "LessonResult", "run", "title", "titles"]
