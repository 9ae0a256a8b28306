"""What every lesson returns: a measured experiment, said in Chinese or English.

A lesson runs real computations (qkv.lessons.<name>.measure), which return its typed result (a
dataclass deriving from Numbers, qkv.lessons.<name>.result), then says the numbers it measured and
draws them (qkv.lessons.<name>.present); qkv.lessons.run puts the parts together in a LessonResult.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from qkv.core.io.document import header


def check_folder(path, what: str) -> Path:
    """`path` as a folder to write into: a one-line ValueError when a file already stands there."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path} is a file, not a folder: give a folder for the {what}")
    return path


class Numbers:
    """What a lesson's typed result (a dataclass) shares: its numbers as the plain dict the JSON output
    shows, keyed by the field names in their declared order, nested results as nested dicts."""

    def to_numbers(self) -> dict:
        return asdict(self)


@dataclass
class LessonResult:
    name: str
    title: str
    text: str  # the explanation, in the chosen language
    headline: str  # one line with the key measured numbers
    numbers: dict = field(default_factory=dict)  # every measured number, by name (measured.to_numbers())
    figures: list[Path] = field(default_factory=list)
    lang: str = "en"
    measured: object = None  # what the lesson's measure returned: its typed result

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
