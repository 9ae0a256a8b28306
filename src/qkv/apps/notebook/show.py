"""qkv.show: the explorer inline in a notebook, the same page `qkv explain --html` writes, data inside.

    qkv.show(model, tokenizer, "我 投资了 苹果 ，", layer=1, head=0)   # the last line of a cell

The page (qkv.apps.web.export.page_html, its data from page_data: the one dict both build from) is
shown inside an iframe of its own, its `srcdoc` the page, sandboxed to run scripts and save files
(allow-scripts allow-downloads) and nothing more. Why an iframe: the page's modules find their
elements by global ids (#text, #heatmap) and keep their state in module-level objects and on window,
so two views written into one notebook document would draw into each other's elements; an iframe
gives each view its own document and its own module instances, and the sandbox (an opaque origin)
keeps the page from reaching the notebook. A small script added at the end of the page tells the
notebook its height (postMessage), so the iframe grows to the page and the notebook scrolls, not the
iframe, and takes the notebook's theme from it.

What a front end is handed (View._repr_mimebundle_; the widget, qkv.apps.notebook.widget, adds its
own view to the same bundle):

    text/html    the iframe, self-contained, for a front end without the widget: nbconvert's HTML
                 (which drops a widget view whose state was not saved), a notebook not trusted for
                 widgets. A script beside it (the widget's front end, static/widget.js) follows the
                 notebook's theme and the page's height where scripts run. Under the iframe lies a
                 still picture of the heatmap (PNG, inline) and one line saying why the live view is
                 missing; the iframe covers it wherever it is shown, so the picture is seen exactly
                 where the iframe was removed (GitHub's viewer strips iframes, scripts and styles).
    text/plain   one line: what the view shows.

A view larger than MAX_PAGE_BYTES is refused (Refusal "notebook.too_large"): the notebook file keeps
the page twice (the widget's state and the text/html), and a notebook of tens of megabytes is slow to
open and to save. Measured (bytes of page_html(page_data(...)), about 0.47 MB of it the page's own
scripts and styles): the bundled model at 64 tokens (its n_ctx) 0.94 MB; SmolLM2-135M (30 layers x
9 heads) at 16 tokens 1.1 MB, 64 tokens 7.8 MB, 128 tokens 27 MB (the attention arrays grow as
layers x heads x T^2). The bound, 8 MB, keeps a 64-token view of a real LLM that size; the attention
arrays alone (dots and pattern, base64 of float32) are estimated before anything is computed, so a
text far too long is refused at once, and the page's own size is checked once it is written.
"""

from __future__ import annotations

import base64
import html
import tempfile
import uuid
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from qkv.core.io.files import format_bytes
from qkv.core.io.refusal import Refusal
from qkv.presentation.i18n import get_lang, t

MAX_PAGE_BYTES = 8 * 10**6  # 8 MB of page (UTF-8): see the module docstring for the measurements
FIRST_HEIGHT = 900  # px: the iframe's height until the page has said its own
WIDGET_JS = "widget.js"  # the front end, in qkv/apps/web/static (not part of the page's bundle)

# the page's side of the notebook view, added at the end of its body: it tells the notebook the height
# of its content, and takes the notebook's theme (light or dark) from it (static/widget.js sends it)
NOTEBOOK_SCRIPT = """<script>/* qkv.show: the page inside a notebook (qkv.apps.notebook) */
(() => { const say = () => parent.postMessage({ qkv: "height",
    height: Math.ceil(document.body.getBoundingClientRect().height) }, "*");
  new ResizeObserver(say).observe(document.body); addEventListener("load", say);
  addEventListener("message", (e) => {
    if (e.source !== parent || !e.data || e.data.qkv !== "theme") return;
    if (e.data.theme === "dark" || e.data.theme === "light") document.documentElement.dataset.theme = e.data.theme;
  }); })();</script>
"""


def front_end() -> str:
    """The widget's ES module (static/widget.js): anywidget loads it; text/html inlines it as a script."""
    return (resources.files("qkv.apps.web") / "static" / WIDGET_JS).read_text(encoding="utf-8")


@dataclass(frozen=True)
class View:
    """One explorer view: the page (with its data), the still picture, and what it shows."""

    page: str  # the self-contained page, with the notebook's script
    still: bytes  # PNG of the heatmap it opens on
    tokens: list[str]  # the tokens of the text (a translation model's: the source words)
    text: str
    model: str  # the name the model was given
    layer: int
    head: int
    lang: str

    def _say(self, key: str, **fields) -> str:
        return t(f"notebook.{key}", self.lang, **fields)

    def plain(self) -> str:
        """text/plain: one line."""
        return self._say(
            "plain", n=len(self.tokens), model=self.model, layer=self.layer, head=self.head, text=_short(self.text)
        )

    def title(self) -> str:
        """The iframe's accessible name."""
        return self._say("title", text=_short(self.text))

    def fallback_html(self) -> str:
        """text/html: the iframe over the still picture, and the script that fits it (see the module docstring)."""
        box = f"qkv-show-{uuid.uuid4().hex}"
        png = base64.b64encode(self.still).decode("ascii")
        still = self._say("still", layer=self.layer, head=self.head)
        script = _as_function_body(front_end())
        return (
            f'<div id="{box}" class="qkv-show" style="position:relative;height:{FIRST_HEIGHT}px;max-width:100%">\n'
            f'<div class="qkv-still"><p>{html.escape(still)}</p>\n'
            f'<img alt="{html.escape(self.title())}" width="{_shown_width(self.still)}" style="max-width:100%" '
            f'src="data:image/png;base64,{png}"></div>\n'
            f'<iframe title="{html.escape(self.title())}" sandbox="allow-scripts allow-downloads" '
            'style="position:absolute;top:0;left:0;width:100%;height:100%;border:0;background:#f4f5f8" '
            f'srcdoc="{_attribute(self.page)}"></iframe>\n</div>\n'
            f"<script>(() => {{ const qkvWidget = (() => {{\n{script}\n}})();\n"
            "const me = document.currentScript, before = me && me.previousElementSibling;\n"
            'const box = before && before.classList.contains("qkv-show") ? before : null;\n'
            f'qkvWidget.adopt(box || document.getElementById("{box}"));\n'
            "})();</script>\n"
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.fallback_html(), "text/plain": self.plain()}


def _shown_width(png: bytes) -> int:
    """The picture's width on screen, in CSS px: half its pixels (drawn at 150 dpi), at most 720. An
    attribute, not a style: a viewer that strips styles keeps it."""
    return min(int.from_bytes(png[16:20], "big") // 2, 720)  # IHDR: the width after the 8-byte signature


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _attribute(text: str) -> str:
    """`text` inside a double-quoted attribute: only & and " need writing otherwise."""
    return text.replace("&", "&amp;").replace('"', "&quot;")


def _as_function_body(module: str) -> str:
    """widget.js as the body of a function returning what the module exports (a classic script
    cannot `export`; a function scope keeps two views' scripts from declaring the same names)."""
    if module.count("export default ") != 1 or module.count("export ") != 1:
        raise RuntimeError(f"static/{WIDGET_JS} must have one export, `export default {{...}}`")
    return module.replace("export default ", "return ")


def _with_notebook_script(page: str) -> str:
    head, body_end, tail = page.rpartition("</body>")
    if not body_end:
        raise RuntimeError("the explorer page lost its </body>: the notebook view cannot add its script")
    return head + NOTEBOOK_SCRIPT + body_end + tail


def _refuse_early(model, tokenizer, text: str) -> None:
    """Refuse before computing when the attention arrays alone would pass the bound: dots and pattern,
    2 * n_layers * n_heads * T(T+1)/2 float32 (the causal half; more for an encoder), base64 (4/3)."""
    if model.family.translates:
        return  # its target is not known before translating: measured on the page only
    T = len(tokenizer.encode(text))
    cfg = model.cfg
    least = 2 * cfg.n_layers * cfg.n_heads * (T * (T + 1) // 2) * 4 * 4 // 3
    if least > MAX_PAGE_BYTES:
        raise Refusal.of("notebook.too_large_early", size=format_bytes(least), limit=format_bytes(MAX_PAGE_BYTES), n=T)


def view_of(model, tokenizer, text: str, layer=None, head=None, token=None, lang=None, name: str = "") -> View:
    """The View of `text`: the page qkv explain --html writes (bad layer, head, token or lang: its
    refusals), in `lang` (None: the language qkv speaks, qkv.set_lang or QKV_LANG)."""
    from qkv.apps.web.export import page_data, page_html

    lang = get_lang() if lang is None else lang
    name = name or model.checkpoint or ""  # what qkv.load read: the header names the model
    _refuse_early(model, tokenizer, text)
    data = page_data(model, tokenizer, text, name, layer, head, token, lang)
    page = _with_notebook_script(page_html(data))
    size = len(page.encode("utf-8"))
    doc = data["view"]
    tokens = doc["source"]["tokens"] if model.family.translates else doc["tokens"]
    if size > MAX_PAGE_BYTES:
        limit = format_bytes(MAX_PAGE_BYTES)
        raise Refusal.of("notebook.too_large", size=format_bytes(size), limit=limit, n=len(tokens))
    still, layer, head = _still(model, doc, data["start"], lang)
    return View(page, still, list(tokens), text, name or "model", layer, head, lang)


def _still(model, doc: dict, start: dict, lang: str) -> tuple[bytes, int, int]:
    """(PNG, layer, head) of the heatmap the page opens on: `start`'s layer and head, else the page's
    own choice (layer 0, head 0; a translation model's cross-attention: its last layer's sharpest head)."""
    import torch

    from qkv.analysis.cross_attention import sharpest_head
    from qkv.apps.web.view import unpack
    from qkv.presentation.plot_alignment import alignment_figure
    from qkv.presentation.plot_attention import head_heatmap

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "still.png"
        if model.family.translates:
            A = unpack(doc["parts"]["cross"]["arrays"]["pattern"])  # (L, H, T_target, T_source)
            layer, head = start.get("layer", len(A) - 1), start.get("head", sharpest_head(torch.tensor(A[-1])))
            source, target = doc["source"]["tokens"], doc["target"]["tokens"]
            alignment_figure(A[layer, head], source, target, path, layer, head, lang=lang)
        else:
            A = unpack(doc["arrays"]["pattern"])  # (L, H, T, T)
            layer, head = start.get("layer", 0), start.get("head", 0)
            head_heatmap(A[layer, head], doc["tokens"], path, layer, head, lang=lang)
        return path.read_bytes(), layer, head
