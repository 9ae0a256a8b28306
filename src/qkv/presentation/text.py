"""Text, Markdown and LaTeX primitives that the renderers share: display width, wrapping, escaping, tables.

`width` and `wrap` count a Chinese character as two columns (terminals and figure captions);
`md_escape` and `tex_prose` make prose literal in Markdown and in LaTeX. A document to show is a
list of blocks, rendered by `render` as aligned plain text or as Markdown:

    ("title", text)                               a heading
    ("p", text)                                   a paragraph
    ("table", headers, rows, right)               rows of strings; `right`: the right-aligned columns

`render_html` lays the same blocks out as an HTML fragment for a notebook (every text escaped), with
two blocks more: ("pre", text), text kept as it is laid out, and ("raw", html), a fragment already made
safe (a figure's <img>).
"""

from __future__ import annotations

import html
import re
import unicodedata

_CJK = r"\u3000-\u9fff\uff00-\uffef"  # CJK punctuation, ideographs and full-width forms: one character, one break point


def width(s: str) -> int:
    """Columns `s` takes in a terminal: a wide (Chinese) character counts 2, a combining mark 0."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in s)


def wrap(text: str, columns: int) -> str:
    """Break each paragraph at `columns` display columns; Latin words stay whole, Chinese breaks anywhere."""
    lines = []
    for paragraph in text.split("\n"):
        line = ""
        for piece in re.findall(rf"[^\s{_CJK}]+\s*|[{_CJK}]|\s+", paragraph):
            if line and width(line + piece.rstrip()) > columns:
                lines.append(line.rstrip())
                line = piece.lstrip()
            else:
                line += piece
        lines.append(line.rstrip())
    return "\n".join(lines)


def md_escape(s: str) -> str:
    """`s` as literal Markdown text: the characters Markdown would read as markup get a backslash."""
    return "".join("\\" + c if c in "\\`*_[]<>|#" else c for c in s)


def render(blocks: list, markdown: bool) -> str:
    """The blocks (see the module docstring) as Markdown, or as plain text with columns padded to align."""
    out = []
    for block in blocks:
        if block[0] == "title":
            out += [("### " + md_escape(block[1])) if markdown else block[1], ""]
        elif block[0] == "p":
            out += [md_escape(block[1]) if markdown else block[1], ""]
        else:
            _, head, rows, right = block
            out += _markdown_table(head, rows, right) if markdown else _text_table(head, rows, right)
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_html(blocks: list) -> str:
    """The blocks as an HTML fragment in a <div class="qkv-display">: headings, paragraphs, tables
    (numbers right-aligned) and laid-out text, every string escaped (a token "<script>" stays text)."""
    out = []
    for block in blocks:
        if block[0] == "title":
            out.append(f"<h4>{html.escape(block[1])}</h4>")
        elif block[0] == "p":
            out.append(f"<p>{html.escape(block[1])}</p>")
        elif block[0] == "pre":
            out.append(f"<pre>{html.escape(block[1])}</pre>")
        elif block[0] == "raw":
            out.append(block[1])
        else:
            out.append(_html_table(*block[1:]))
    return '<div class="qkv-display">' + "".join(out) + "</div>"


def _html_table(head, rows, right) -> str:
    def cell(tag: str, i: int, s: str) -> str:
        return (
            f'<{tag} style="text-align:right">{html.escape(s)}</{tag}>'
            if i in right
            else f"<{tag}>{html.escape(s)}</{tag}>"
        )

    lines = ["<tr>" + "".join(cell("th", i, h) for i, h in enumerate(head)) + "</tr>"]
    lines += ["<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>" for row in rows]
    return "<table>" + "".join(lines) + "</table>"


def _markdown_table(head, rows, right) -> list[str]:
    lines = [
        "| " + " | ".join(md_escape(h) for h in head) + " |",
        "|" + "|".join("---:" if i in right else "---" for i in range(len(head))) + "|",
    ]
    return lines + ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in rows]


def _text_table(head, rows, right) -> list[str]:
    widths = [max(width(x) for x in column) for column in zip(head, *rows)]

    def pad(s: str, i: int) -> str:
        fill = " " * (widths[i] - width(s))
        return fill + s if i in right else s + fill

    return ["  " + "  ".join(pad(c, i) for i, c in enumerate(row)).rstrip() for row in [head, *rows]]


_FORMULA = re.compile(r"[A-Za-z0-9√Σ·{}]*[_^][A-Za-z0-9{}_^·]*")  # a_j, e^{s_j}, q·k_j, √d_k, W_O in prose


def tex_prose(text: str) -> str:
    """Prose into LaTeX text: small formulas (a_j, e^{s_j}, √d_k) go into $…$, the other specials are escaped."""

    def prose(s: str) -> str:
        for a, b in (
            ("\\", r"\textbackslash{}"),
            ("&", r"\&"),
            ("%", r"\%"),
            ("#", r"\#"),
            ("{", r"\{"),
            ("}", r"\}"),
            ("Σ", r"$\Sigma$"),
            ("√", r"$\surd$"),
            ("≥", r"$\geq$"),
            ("·", r"$\cdot$"),
        ):
            s = s.replace(a, b)
        return s

    def formula(s: str) -> str:
        s = re.sub(r"√([A-Za-z0-9_]+)", r"\\sqrt{\1}", s)
        return "$" + s.replace("·", r"\cdot ").replace("Σ", r"\sum ") + "$"

    out, last = [], 0
    for m in _FORMULA.finditer(text):
        out += [prose(text[last : m.start()]), formula(m.group())]
        last = m.end()
    return "".join(out) + prose(text[last:])
