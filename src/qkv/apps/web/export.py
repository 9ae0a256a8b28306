"""The explorer page as one self-contained HTML file: the data embedded, opens from disk offline.

    export_html(model, tokenizer, "我 投资了 苹果 ，", "attention.html")   # qkv explain --html FILE TEXT

The page is the one `qkv serve` sends, with its stylesheets written inline, its ES modules bundled
into one inline module script (qkv.apps.web.bundle: a file opened from disk may not load module
scripts), and the documents it would have fetched (model, view, compare) embedded as JSON, with the
layer, head and query token to open on (a translation model's page: the cross-attention of a decoder
layer, a target step), the open panel and its inputs: page_data builds them, for export_html and for
POST /api/export ("Export this view", routes_export.py). Layer, head, token and language switch as on
the server; analysing new text, generating and comparing need `qkv serve`. Where the model was loaded
from keeps its name but not the directory (a file to share).
"""

from __future__ import annotations

from pathlib import Path

from qkv.analysis.word_similarity import compare
from qkv.apps.web.assets import STYLES, asset
from qkv.apps.web.bundle import ENTRY, bundle
from qkv.apps.web.model_doc import model_doc
from qkv.apps.web.translation_view import translation_view
from qkv.apps.web.view import view
from qkv.core.io.files import atomic_write
from qkv.core.io.finite import dumps
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.see.indices import check_index, check_layer_head


def _inline_json(obj) -> str:
    """JSON that is safe inside <script>: every "<" is written \\u003c, so no tag or comment can start."""
    text = dumps(obj, separators=(",", ":"))  # a NaN is written null, and the document says so
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def page_html(data: dict) -> str:
    """index.html with the stylesheets inline, the page's modules as one inline module script (the
    bundle) and `data` in <script id="qkv-data">."""
    html = asset("index.html")
    tag = f'<script type="module" src="assets/{ENTRY}"></script>'
    links = [f'<link rel="stylesheet" href="assets/{name}">' for name in STYLES]
    if not all(line in html for line in [tag, *links]):
        raise RuntimeError("static/index.html lost its asset lines: the export cannot inline them")
    for name, link in zip(STYLES, links, strict=True):
        style = asset(name).replace("</style", "<\\/style")
        html = html.replace(link, f"<style>\n{style}\n</style>")
    payload = f'<script id="qkv-data" type="application/json">{_inline_json(data)}</script>\n'
    script = bundle().replace("</script", "<\\/script")
    return html.replace(tag, payload + f'<script type="module">\n{script}</script>')


# the panels whose inputs a view keeps (static/address.js; "compare" is the comparison card), and how much
KEPT_PANELS = ("compare", "side", "lens", "origin", "attribution", "patch", "ablate", "vocab", "transform")
MAX_INPUTS, MAX_INPUT_CHARS = 16, 400  # values in all, characters each (as many as the page's address keeps)


def check_inputs(panel: str | None, inputs: dict | None) -> dict:
    """The open panel and the panels' inputs ({panel: {field: value}}) as a view keeps them, or a refusal."""
    for name in ([panel] if panel is not None else []) + list(inputs or {}):
        if name not in KEPT_PANELS:
            raise Refusal.of("address.panel", panels=", ".join(KEPT_PANELS), got=repr(name))
    values = [v for fields in (inputs or {}).values() for v in fields.values()]
    if len(values) > MAX_INPUTS or any(not isinstance(v, str) or len(v) > MAX_INPUT_CHARS for v in values):
        raise Refusal.of("address.inputs", n=MAX_INPUTS, chars=MAX_INPUT_CHARS, got=f"{len(values)}")
    return {name: {str(k): v for k, v in fields.items()} for name, fields in (inputs or {}).items()}


def _start(model, doc: dict, layer, head, token, part) -> dict:
    """Where the page opens: layer, head, query token (negative ones count from the end) and a translation
    model's part (which attention; its queries are what token counts), each checked against the document."""
    translates = model.family.translates
    if part is not None and not translates:
        raise Refusal.of("address.no_part", got=repr(part))
    if part is not None and part not in doc["parts"]:
        raise Refusal.of("address.part", parts=", ".join(doc["parts"]), got=repr(part))
    if translates:
        queries = doc["parts"][part]["queries"] if part else "target"  # the page opens on the cross-attention
        T = len(doc[queries]["ids"])
    else:
        T = len(doc["ids"])
    layer, head = check_layer_head(model.cfg, layer, head)
    unit = phrase("errors.unit_steps", n=T) if translates else phrase("errors.unit_tokens", n=T)
    token = None if token is None else check_index(token, T, "token", unit)
    given = (("layer", layer), ("head", head), ("token", token), ("part", part))
    return {key: value for key, value in given if value is not None}


def page_data(
    model,
    tokenizer,
    text: str,
    name: str = "",
    layer: int | None = None,
    head: int | None = None,
    token: int | None = None,
    lang: str | None = None,
    part: str | None = None,
    panel: str | None = None,
    inputs: dict | None = None,
) -> dict:
    """The documents the page embeds for `text` (model, view, compare), the view it opens on ("start": layer,
    head, query `token`, negative ones counting from the end, a translation model's `part` (default: the
    cross-attention of a decoder layer, at a target step), the open `panel` and the panels' `inputs`) and its
    language `lang` ("zh", "en" or None: the reader's browser language). `qkv explain --html`, `qkv.show` and
    POST /api/export ("Export this view", routes_export.py) all build their page from this one dict."""
    if lang not in (None, "zh", "en"):
        raise Refusal.of("errors.export_lang", got=repr(lang))
    kept = check_inputs(panel, inputs)
    info = model_doc(model, tokenizer, name, first=text)
    pair = info["compare"]
    translates = model.family.translates  # then layer and head are the decoder's, token a target step
    doc = translation_view(model, tokenizer, text, name) if translates else view(model, tokenizer, text, name)
    start = _start(model, doc, layer, head, token, part)
    if panel is not None:
        start["panel"] = panel
    if kept:
        start["inputs"] = kept
    for m in (info["model"], doc["model"]):  # a file to share: the name the model was given, not this computer's paths
        m["loaded_from"] = {**m["loaded_from"], "path": None}
    return {
        "model": info,
        "view": doc,
        "start": start,
        "lang": lang,
        "compare": compare(model, tokenizer, pair["a"], pair["b"], pair["word"]) if pair else None,
    }


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
        raise Refusal.of("errors.export_lang", got=repr(lang))
    path = Path(path)
    if path.is_dir():
        raise Refusal.of("errors.export_dir", path=path, example=path / "attention.html")
    data = page_data(model, tokenizer, text, name, layer, head, token, lang)
    atomic_write(path, page_html(data).encode("utf-8"))
    return path
