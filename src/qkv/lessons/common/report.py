"""The demo's report: every lesson's explanation, numbers and figures in one folder.

report/index.html   open it in a browser (no network needed: figures are local files)
report/report.md    the same as Markdown
report/*.png        the figures
"""

from __future__ import annotations

import html
import json
import time
from pathlib import Path

from qkv.core.io.files import write_json, write_text
from qkv.core.io.refusal import phrase
from qkv.lessons.common.result import LessonResult, check_folder
from qkv.presentation.i18n import lang_of, t

_CSS = (
    "body{font:16px/1.6 system-ui,'Noto Sans CJK SC',sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem;"
    "color:#222}\n"
    "pre{white-space:pre-wrap;background:#f6f6f6;padding:.8rem;border-radius:6px}"
    "img{max-width:100%;border:1px solid #ddd;margin:.5rem 0}\n"
    ".headline{font-weight:600;background:#eef5ff;padding:.5rem .8rem;border-radius:6px}nav a{margin-right:.8rem}"
)


def write_report(
    results: list[LessonResult], folder, lang: str | None = None, model: str = "", seconds: dict | None = None
) -> Path:
    """Write index.html, report.md and results.json into folder, in `lang` (None: the language qkv
    speaks, qkv.set_lang / QKV_LANG); returns the index.html path."""
    lang = lang_of(lang)
    title, intro = t("lessons.common.report_title", lang), t("lessons.common.report_intro", lang)
    folder = check_folder(folder, phrase("errors.folder_report"))
    folder.mkdir(parents=True, exist_ok=True)
    when = time.strftime("%Y-%m-%d %H:%M")
    md = [f"# {title}\n", f"{intro} ({when}; {model})\n"] + [r.to_markdown() for r in results]
    write_text(folder / "report.md", "\n".join(md))
    nav = "".join(f'<a href="#{r.name}">{html.escape(r.title)}</a>' for r in results)
    sections = []
    for r in results:
        figs = "".join(f'<img src="{html.escape(Path(p).name)}" alt="{html.escape(Path(p).stem)}">' for p in r.figures)
        sections.append(
            f'<section id="{r.name}"><h2>{html.escape(r.title)}</h2><pre>{html.escape(r.text)}</pre>'
            f'<p class="headline">{html.escape(r.headline)}</p>{figs}</section>'
        )
    page = (
        f'<!doctype html><html lang="{lang}"><meta charset="utf-8"><title>{title}</title><style>{_CSS}</style>'
        f"<h1>{title}</h1><p>{html.escape(intro)} ({when}; {html.escape(model)})</p><nav>{nav}</nav>"
        f"{''.join(sections)}</html>"
    )
    write_text(folder / "index.html", page)
    write_json(
        folder / "results.json",
        {
            "model": model,
            "seconds": seconds or {},
            "lessons": [json.loads(json.dumps(r.to_json(), default=str)) for r in results],
        },
    )
    return folder / "index.html"
