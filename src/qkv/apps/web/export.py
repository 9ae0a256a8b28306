"""The explorer page as one self-contained HTML file: the data embedded, opens from disk offline.

    export_html(model, tokenizer, "我 投资了 苹果 ，", "attention.html")   # qkv explain --html FILE TEXT

The page is the one `qkv serve` sends, with its stylesheet and scripts written inline and the
documents it would have fetched (model, view, compare) embedded as JSON, with the layer, head and
query token to open on (a translation model's page: the cross-attention of a decoder layer, a target
step). Layer, head, token and
language switch as on the server; analysing new text, generating and comparing need `qkv serve`.
The model's source keeps its name but not the directory it was loaded from (a file to share).
"""

from __future__ import annotations

import json
from pathlib import Path

from qkv.analysis.compare import compare
from qkv.analysis.explain import check_index
from qkv.analysis.translation_view import translation_view
from qkv.analysis.view import view
from qkv.core.files import atomic_write

from .server import SCRIPTS, STYLES, asset, model_doc


def _inline_json(obj) -> str:
    """JSON that is safe inside <script>: every "<" is written \\u003c, so no tag or comment can start."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def page_html(data: dict) -> str:
    """index.html with the stylesheet and the scripts inline and `data` in <script id="qkv-data">."""
    html = asset("index.html")
    tags = [f'<script src="assets/{name}"></script>' for name in SCRIPTS]
    links = [f'<link rel="stylesheet" href="assets/{name}">' for name in STYLES]
    if not all(tag in html for tag in tags + links):
        raise RuntimeError("static/index.html lost its asset lines: the export cannot inline them")
    for name, link in zip(STYLES, links, strict=True):
        style = asset(name).replace("</style", "<\\/style")
        html = html.replace(link, f"<style>\n{style}\n</style>")
    payload = f'<script id="qkv-data" type="application/json">{_inline_json(data)}</script>\n'
    for n, (name, tag) in enumerate(zip(SCRIPTS, tags, strict=True)):
        script = asset(name).replace("</script", "<\\/script")
        html = html.replace(tag, (payload if n == 0 else "") + f"<script>\n{script}\n</script>")
    return html


def export_html(
    model,
    tokenizer,
    text: str,
    path,
    name: str = "",
    layer: int | None = None,
    head: int | None = None,
    token: int | None = None,
    lang: str | None = None,
) -> Path:
    """Write the page for `text` to `path` (atomically) and return the path. The page opens on
    `layer`, `head` and query `token` when given (negative ones count from the end), in `lang`
    ("zh" or "en"; None: the reader's browser language; ?lang= in the address wins)."""
    if lang not in (None, "zh", "en"):
        raise ValueError(f"lang must be zh or en, got {lang!r}")
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a directory: give a file name for the page, e.g. {path / 'attention.html'}")
    info = model_doc(model, tokenizer, name, first=text)
    pair = info["compare"]
    translates = model.cfg.arch == "seq2seq"  # then layer and head are the decoder's, token a target step
    doc = translation_view(model, tokenizer, text, name) if translates else view(model, tokenizer, text, name)
    cfg, T = model.cfg, len(doc["target"]["ids"] if translates else doc["ids"])
    start = {
        key: check_index(value, n, key, unit)
        for key, value, n, unit in (
            ("layer", layer, cfg.n_layers, f"the model has {cfg.n_layers} layers"),
            ("head", head, cfg.n_heads, f"each layer has {cfg.n_heads} heads"),
            ("token", token, T, f"the translation has {T} target steps" if translates else f"the text has {T} tokens"),
        )
        if value is not None
    }
    for m in (info["model"], doc["model"]):  # a file to share: the name the model was given, not this computer's paths
        m["source"] = {**m["source"], "path": None}
    data = {
        "model": info,
        "view": doc,
        "start": start,
        "lang": lang,
        "compare": compare(model, tokenizer, pair["a"], pair["b"], pair["word"]) if pair else None,
    }
    atomic_write(path, page_html(data).encode("utf-8"))
    return path
