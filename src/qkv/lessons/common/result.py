"""What every lesson returns: a measured experiment, said in Chinese or English.

A lesson runs real computations (qkv.lessons.<name>.measure), which return its typed result (a
dataclass deriving from Numbers, qkv.lessons.<name>.result), then says the numbers it measured and
draws them (qkv.lessons.<name>.present); qkv.lessons.run puts the parts together in a LessonResult.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path

from qkv.core.io.document import header
from qkv.core.io.refusal import Refusal
from qkv.core.io.shown import Shown


def check_folder(path, what) -> Path:
    """`path` as a folder to write into: a one-line ValueError when a file already stands there."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise Refusal.of("errors.not_a_folder", path=path, what=what)
    return path


class Numbers:
    """What a lesson's typed result (a dataclass) shares: its numbers as the plain dict the JSON output
    shows, keyed by the field names in their declared order, nested results as nested dicts; and the
    way back, from such a dict (the JSON's "numbers") to the typed result."""

    def to_numbers(self) -> dict:
        return asdict(self)

    @classmethod
    def from_numbers(cls, numbers: dict):
        """The typed result whose to_numbers() is `numbers` (nested results rebuilt by their declared types)."""
        hints = typing.get_type_hints(cls)
        return cls(**{f.name: _typed(hints[f.name], numbers[f.name]) for f in fields(cls)})


def _typed(hint, value):
    """`value` (as JSON holds it) as the type `hint` declares: a nested result, or a dict, list or optional
    of them; anything else as it is."""
    if value is None:
        return None
    if is_dataclass(hint):
        return hint.from_numbers(value)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is dict:
        return {key: _typed(args[1], item) for key, item in value.items()}
    if origin is list:
        return [_typed(args[0], item) for item in value]
    if origin in (typing.Union, types.UnionType):
        inner = [arg for arg in args if arg is not type(None)]
        return _typed(inner[0], value) if len(inner) == 1 else value
    return value


@dataclass(repr=False)
class LessonResult(Shown):
    """A lesson run: its words in one language, its numbers, its figures; in a notebook its title, numbers,
    text and figures inline (qkv.apps.displays)."""

    name: str
    title: str
    text: str  # the explanation, in the chosen language
    headline: str  # one line with the key measured numbers
    numbers: dict = field(default_factory=dict)  # every measured number, by name (measured.to_numbers())
    figures: list[Path] = field(default_factory=list)
    lang: str = "en"
    measured: object = None  # what the lesson's measure returned: its typed result
    shown_as = "lesson"  # a notebook's display; not a field

    def brief(self) -> str:
        return f"name={self.name!r}, lang={self.lang!r}, {len(self.numbers)} numbers, {len(self.figures)} figures"

    def to_text(self) -> str:
        figs = "".join(f"\n  figure: {p}" for p in self.figures)
        return f"{self.title}\n\n{self.text}\n\n{self.headline}{figs}\n"

    def to_markdown(self) -> str:
        figs = "".join(f"\n\n![{Path(p).stem}]({Path(p).name})" for p in self.figures)
        return f"## {self.title}\n\n{self.text}\n\n**{self.headline}**{figs}\n"

    def to_json(self) -> dict:
        return {
            **header("lesson"),
            "name": self.name,
            "lang": self.lang,
            "title": self.title,
            "text": self.text,
            "headline": self.headline,
            "numbers": json.loads(json.dumps(self.numbers, default=float)),
            "figures": [str(p) for p in self.figures],
        }
