"""How a result shows itself in a notebook: a rich (HTML) display and a short line, said by the layer above.

    trace                     # in Jupyter, VS Code, Colab or marimo: a summary table, not megabytes of numbers
    repr(trace)               # Trace(91 activations, tokens=(1, 4)): short, in any language

Why `_repr_html_` on the classes, filled in from above: the objects a notebook user holds are made in
core and analysis (a Trace, a Patching, a kind-"logit-lens" document), while their words and tables
belong to qkv.presentation (the zh/en catalogue), which these layers may not import. `_repr_html_` is the
one hook every notebook front end reads (IPython's display formatter in Jupyter, VS Code and Colab,
marimo, nbconvert), wherever and whenever qkv was imported; IPython's own `for_type` registration would
reach only IPython kernels that were running when qkv was imported. So each class derives from Shown and
names what it is (`shown_as`), and presentation registers one builder per name (`shown_by`) when qkv is
imported (qkv.apps.displays). A plain JSON document (a dict with a "kind") is a
Document: a dict in every way, shown by its kind.

Without a registered builder nothing changes: `_repr_html_` returns None (the front end shows text) and
the short line is the repr.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

_html: dict[str, Callable[[object], str]] = {}  # what a kind looks like in a notebook (HTML)
_line: dict[str, Callable[[object], str]] = {}  # and in one line of text (text/plain), in the reader's language


def shown_by(kind: str, html: Callable[[object], str], line: Callable[[object], str] | None = None) -> None:
    """Set how objects that are shown as `kind` display themselves: `html(obj)` an HTML fragment,
    `line(obj)` one line of text (qkv.apps.displays calls this once per kind)."""
    _html[kind] = html
    if line is not None:
        _line[kind] = line


def shown_kinds() -> list[str]:
    """The kinds that have a display (for tests and docs)."""
    return sorted(_html)


class Displayed:
    """The rich display alone, `_repr_html_` looked up by `shown_kind()`: for a class whose repr is
    someone else's (a model keeps torch's list of modules as its text)."""

    shown_as: ClassVar[str] = ""

    def shown_kind(self) -> str:
        return self.shown_as

    def _repr_html_(self) -> str | None:
        html = _html.get(self.shown_kind())
        return html(self) if html is not None else None


class Shown(Displayed):
    """What a result needs to show itself in a notebook: `_repr_html_` and IPython's `_repr_pretty_`,
    both looked up by `shown_kind()`; and a short `__repr__` from `brief()` (no tensor is ever printed)."""

    def brief(self) -> str:
        """The fields that say what this is, for repr: a few short `name=value` pairs."""
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.brief()})"

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython's text/plain: the kind's line in the reader's language, else the short repr."""
        line = _line.get(self.shown_kind())
        printer.text(line(self) if line is not None and not cycle else Shown.__repr__(self))


class Document(Shown, dict):
    """A JSON document (a dict) that shows itself by its "kind" in a notebook, or by `kind` when its
    fields have none (a model_info document); its repr() and its JSON are the dict's."""

    def __init__(self, fields: dict, kind: str = ""):
        super().__init__(fields)
        self._kind = kind

    def shown_kind(self) -> str:
        return self._kind or str(self.get("kind", ""))

    def brief(self) -> str:
        return f"kind={self.shown_kind()!r}, {len(self)} fields"

    __repr__ = dict.__repr__  # a document is its data; only a notebook's display is short:
    _repr_pretty_ = Shown._repr_pretty_  # IPython reads a class's own _repr_pretty_ before its own __repr__
