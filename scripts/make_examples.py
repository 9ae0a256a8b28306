"""Write the example notebooks, examples/NN_topic.zh.ipynb and .en.ipynb, from one source.

    python scripts/make_examples.py            # (re)write examples/*.ipynb
    python scripts/make_examples.py --check    # exit 1 if a committed notebook differs from what it would write

Each topic is a module of scripts/examples_src/ (t01_first_steps.py, ...) holding CELLS, a list of

    ("md", "中文说明 ...", "English text ...")   a text cell, in each language
    ("code", "source ...")                      a code cell, the same in both notebooks

A code cell may say __LANG__ where the notebook's language goes (only `qkv.set_lang("__LANG__")`
does), so the two notebooks of a topic differ in their text and in that one word, and can never drift
apart. The notebooks are written without outputs, with fixed cell ids, so the file is the same on every run.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).parent
SOURCES = HERE / "examples_src"
OUT = HERE.parent / "examples"
LANGS = ("zh", "en")
PLACEHOLDER = "__LANG__"


def topics() -> list[tuple[str, list]]:
    """(stem, CELLS) of every topic module, in the order of their file names."""
    out = []
    for path in sorted(SOURCES.glob("t[0-9][0-9]_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out.append((path.stem[1:], module.CELLS))  # t01_first_steps -> 01_first_steps
    return out


CJK = re.compile("[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")  # Chinese characters and their punctuation
BLOCK = re.compile(r"\s*(?:[#>|*-]|\d+\.|```|$)")  # a line that starts a Markdown block of its own


def unwrapped(text: str) -> str:
    """Chinese text as one line per paragraph: Markdown shows a line break inside a paragraph as a
    space, which Chinese does not write (的信息 加了进来), so a break beside a Chinese character goes."""
    lines = text.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        prev = out[-1]
        joins = prev.strip() and not BLOCK.match(line) and not prev.lstrip().startswith(("#", "|", "```"))
        if joins and (CJK.match(prev[-1:]) or CJK.match(line[:1])):
            out[-1] = prev + line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)


def notebook(stem: str, cells: list, lang: str) -> nbformat.NotebookNode:
    """The notebook of one topic in one language, without outputs."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    for i, cell in enumerate(cells):
        cid = f"{stem.replace('_', '-')}-{i:02d}"
        if cell[0] == "md":
            text = unwrapped(cell[1]) if lang == "zh" else cell[2]
            nb.cells.append(nbformat.v4.new_markdown_cell(text.strip("\n"), id=cid))
        elif cell[0] == "code":
            nb.cells.append(nbformat.v4.new_code_cell(cell[1].strip("\n").replace(PLACEHOLDER, lang), id=cid))
        else:
            raise ValueError(f"{stem} cell {i}: a cell is ('md', zh, en) or ('code', source), got {cell[0]!r}")
    nbformat.validate(nb)
    return nb


def rendered() -> dict[Path, str]:
    """Every notebook's path and the text this script writes there."""
    return {
        OUT / f"{stem}.{lang}.ipynb": nbformat.writes(notebook(stem, cells, lang)) + "\n"
        for stem, cells in topics()
        for lang in LANGS
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with examples/, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for path, text in rendered().items():
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date (run python scripts/make_examples.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
