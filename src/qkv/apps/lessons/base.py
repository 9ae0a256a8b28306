"""What every lesson returns: a measured experiment, said in Chinese or English.

A lesson runs real computations (qkv.apps.lessons.<name>.measure), then says the numbers it measured
and draws them (qkv.presentation.lessons.<name>); qkv.apps.lessons.run puts the parts together here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from qkv.core.io.document import header


def check_folder(path, what: str) -> Path:
    """`path` as a folder to write into: a one-line ValueError when a file already stands there."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path} is a file, not a folder: give a folder for the {what}")
    return path


@dataclass
class LessonResult:
    name: str
    title: str
    text: str  # the explanation, in the chosen language
    headline: str  # one line with the key measured numbers
    numbers: dict = field(default_factory=dict)  # every measured number, by name
    figures: list[Path] = field(default_factory=list)
    lang: str = "en"

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
