"""qkv.show's widget: an anywidget whose front end (static/widget.js) puts the explorer page in an
iframe of its own. JupyterLab, the classic notebook, VS Code, Colab and marimo render anywidgets.

Its display carries, beside the widget view, the View's text/html and text/plain (qkv.apps.notebook.show):
nbconvert drops a widget view whose state was not saved and falls back to text/html, and a front end
without the widget manager shows the text/html. Without anywidget installed, qkv.show returns the View
itself: its text/html is the same explorer.
"""

from __future__ import annotations

from qkv.apps.notebook.show import View, front_end, view_of


def _widget_class():
    """The anywidget class (made on first use: importing anywidget imports ipywidgets); None without it."""
    try:
        import anywidget
        import traitlets
    except ImportError:
        return None

    class Explorer(anywidget.AnyWidget):
        """The explorer of one text, inline. `.view` is what it shows (qkv.apps.notebook.show.View)."""

        _esm = front_end()
        page = traitlets.Unicode("").tag(sync=True)
        title = traitlets.Unicode("").tag(sync=True)

        def __init__(self, view: View, **kwargs) -> None:
            super().__init__(page=view.page, title=view.title(), **kwargs)
            self.view = view

        def _repr_mimebundle_(self, **kwargs):
            data, metadata = super()._repr_mimebundle_(**kwargs)
            data.update(self.view._repr_mimebundle_())  # text/html beside the widget view; text/plain ours
            return data, metadata

    return Explorer


_CLASS: list = []


def explorer_class():
    if not _CLASS:
        _CLASS.append(_widget_class())
    return _CLASS[0]


def show(model, tokenizer, text: str, layer=None, head=None, token=None, lang=None, name: str = ""):
    """The explorer of `text` inline in a notebook: the page `qkv explain --html` writes, opening on
    `layer`, `head` and query `token` (negative ones count from the end; a translation model's: a
    decoder layer, a target step), in `lang` (None: the language qkv speaks). An anywidget where
    anywidget is installed, else the View (its text/html). Refuses as explain --html does, and a
    view whose page would pass show.MAX_PAGE_BYTES."""
    view = view_of(model, tokenizer, text, layer, head, token, lang, name)
    cls = explorer_class()
    return view if cls is None else cls(view)
