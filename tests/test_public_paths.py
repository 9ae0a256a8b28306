"""The public API's import paths survive the reorganisation: every name in qkv.__all__ is there, and the
lessons' old path (qkv.apps.lessons) gives the same functions as their new layer (qkv.lessons)."""

import qkv
import qkv.lessons
from qkv.apps import lessons as old_lessons


def test_every_public_name_is_importable():
    missing = [name for name in qkv.__all__ if not hasattr(qkv, name)]
    assert not missing, f"qkv.__all__ names that qkv lacks: {missing}"


def test_the_lessons_old_path_is_the_new_one():
    assert old_lessons.run is qkv.lessons.run
    for name in old_lessons.__all__:
        assert getattr(old_lessons, name) is getattr(qkv.lessons, name), name
