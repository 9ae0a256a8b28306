"""A rich display for every object a notebook user holds: in Jupyter, VS Code, Colab and marimo a model, a
trace, a check report, patching, lens and attribution results, head scores, a compare, model-info, origin or ablate
document, a training run's result and a lesson's result each show a short HTML summary in the language
qkv speaks (qkv.set_lang, QKV_LANG): one sentence on what the numbers mean, a small table (the top few,
never all), a lesson's figures inline; and one short line as text/plain.

    import qkv                      # registers these displays (the classes' _repr_html_ ask for them)
    logits, trace = model.run_with_trace(ids)
    trace                           # the summary: model, tokens, names grouped by layer, shapes, bytes
    qkv.apps.displays.html(trace, lang="zh")   # the same HTML, in a language of your choice

Where it sits: DESIGN.md puts the notebook display in apps, beside the command line and the page, a
thin shell over the layers below. The objects are made in core, analysis and lessons, which may not
import apps, so each derives from qkv.core.io.shown.Shown (a JSON document is a shown.Document; a model,
whose text stays torch's list of modules, from shown.Displayed), which asks here for its display by
name; this module registers one builder per name with shown.shown_by when qkv is imported
(qkv/__init__.py imports it). `_repr_html_` rather than IPython's
`display_formatter.for_type`: every notebook front end reads `_repr_html_`, whether or not IPython was
running when qkv was imported (shown.py says more). An Explanation and a Derivation keep their own
Markdown displays (formulas render as math there). The blocks are laid out by
qkv.presentation.text.render_html, the renderer the text and Markdown displays share, so every string
is escaped in one place.

One place per display: runs.py (what a run records and checks, what a lesson measured, the model and its
training) and results.py (the analysis results); their words are the catalogue's area "displays".
"""

from __future__ import annotations

from qkv.apps.displays import results, runs
from qkv.apps.displays.runs import Say
from qkv.core.io import shown
from qkv.presentation.i18n import lang_of
from qkv.presentation.text import render_html

# the name each object is shown by -> (its blocks, its one line), both f(obj, say)
BUILDERS = {
    "trace": (runs.trace_blocks, runs.trace_line),
    "check": (runs.check_blocks, runs.check_line),
    "model-info": (runs.model_blocks, runs.model_line),
    "model": (runs.module_blocks, runs.module_line),
    "training": (runs.training_blocks, runs.training_line),
    "lesson": (runs.lesson_blocks, runs.lesson_line),
    "patching": (results.patching_blocks, results.patching_line),
    "logit-lens": (results.lens_blocks, results.lens_line),
    "logit-attribution": (results.attribution_blocks, results.attribution_line),
    "head-scores": (results.heads_blocks, results.heads_line),
    "compare": (results.compare_blocks, results.compare_line),
    "origin": (results.origin_blocks, results.origin_line),
    "ablate": (results.ablate_blocks, results.ablate_line),
}


def html(obj, lang: str | None = None) -> str:
    """The HTML an object shows in a notebook, in `lang` (None: the language qkv speaks)."""
    blocks, _ = BUILDERS[obj.shown_kind()]
    return render_html(blocks(obj, Say(lang_of(lang))))


def line(obj, lang: str | None = None) -> str:
    """The one line of text/plain an object shows in a notebook, in `lang` (None: the language qkv speaks)."""
    _, say_line = BUILDERS[obj.shown_kind()]
    return say_line(obj, Say(lang_of(lang)))


def register() -> None:
    """Give every kind its display (qkv/__init__.py calls this once; calling again changes nothing)."""
    for kind in BUILDERS:
        shown.shown_by(kind, lambda obj: html(obj), lambda obj: line(obj))


register()
