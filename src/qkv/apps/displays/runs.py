"""The notebook displays of what a run records and checks, of a model, its training and a lesson: each
kind's blocks (qkv.presentation.text: title, paragraphs, small tables) and its one line, in the words of
the catalogue's area "displays" (`say`). qkv.apps.displays registers them.

A trace is summarised, never printed: its activations grouped by name across layers ("blocks.{L}.attn.
hook_pattern" for every L), with their shape, dtype and bytes, a few rows only (MAX_ROWS), so the summary
of a trace of megabytes is a few kilobytes.
"""

from __future__ import annotations

import base64
import re
import tempfile
from pathlib import Path

from qkv.analysis.model_info import model_info
from qkv.presentation.check_report import check_report, item_line
from qkv.presentation.i18n import check_lang, t

MAX_ROWS = 24  # the most rows a display's table shows
TRACE_ROWS = 80  # the most names a trace's summary lists: a block records about 25, each once for all its layers
# (an encoder-decoder's two stacks about 65 in all), so the list is bounded by the architecture, not the input
MAX_IDS = 24  # the most token ids a trace's summary lists
MAX_FIGURE_BYTES = 2**21  # a lesson's figure larger than this is named, not embedded
FIGURE_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
_LAYER = re.compile(r"(^|\.)blocks\.(\d+)\.")


class Say:
    """The catalogue's area "displays" in one language: say("trace_line", n=3); say.lang is the language."""

    def __init__(self, lang: str):
        self.lang = check_lang(lang)

    def __call__(self, key: str, /, **fields) -> str:
        return t(f"displays.{key}", self.lang, **fields)


def size(n: int) -> str:
    """A number of bytes as people read it: 512 B, 3.1 KB, 12.0 MB, 1.50 GB."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            return f"{n / scale:.{2 if unit == 'GB' else 1}f} {unit}"
    return f"{n} B"


def cut(rows: list, say, limit: int = MAX_ROWS) -> tuple[list, list]:
    """The first `limit` rows, and the paragraph that says how many more there are (none: [])."""
    more = [("p", say("more_rows", n=len(rows) - limit))] if len(rows) > limit else []
    return rows[:limit], more


def shape(t) -> str:
    return "×".join(str(n) for n in t.shape) or "()"


# ------------------------------------------------------------------ a trace


def trace_groups(trace) -> list[dict]:
    """The activations grouped by name with the layer written {L}: name, layers, shapes, dtype, bytes."""
    groups: dict[str, dict] = {}
    for name, tensor in trace.activations.items():
        layer = _LAYER.search(name)
        key = _LAYER.sub(lambda m: f"{m.group(1)}blocks.{{L}}.", name, count=1)
        g = groups.setdefault(key, {"name": key, "layers": [], "shapes": set(), "dtype": str(tensor.dtype), "bytes": 0})
        if layer:
            g["layers"].append(int(layer.group(2)))
        g["shapes"].add(shape(tensor))
        g["bytes"] += tensor.numel() * tensor.element_size()
    return list(groups.values())


def trace_bytes(trace) -> int:
    return sum(t.numel() * t.element_size() for t in trace.activations.values())


def trace_blocks(trace, say) -> list:
    cfg = trace.cfg
    blocks = [("title", trace_line(trace, say))]
    blocks.append(("p", say("trace_model", arch=cfg.arch, n_layers=cfg.n_layers, d_model=cfg.d_model,
                            n_heads=cfg.n_heads, d_head=cfg.d_head, d_vocab=cfg.d_vocab)))  # fmt: skip
    blocks.append(("p", say("trace_tokens", B=trace.ids.shape[0], T=trace.ids.shape[-1], ids=_ids(trace.ids))))
    if trace.tgt_ids is not None:  # an encoder-decoder: ids are the source's, the decoder read these
        blocks.append(("p", say("trace_target", T=trace.tgt_ids.shape[-1], ids=_ids(trace.tgt_ids))))
    if trace.training:
        blocks.append(("p", say("trace_training")))
    rows = []
    for g in trace_groups(trace):
        layers = _layers(g["layers"]) if g["layers"] else "—"
        shapes = " | ".join(sorted(g["shapes"])) if len(g["shapes"]) <= 2 else say("trace_shapes", n=len(g["shapes"]))
        rows.append([g["name"], layers, shapes, g["dtype"].replace("torch.", ""), size(g["bytes"])])
    rows, more = cut(rows, say, TRACE_ROWS)
    head = [say(k) for k in ("c_name", "c_layers", "c_shape", "c_dtype", "c_bytes")]
    return [*blocks, ("table", head, rows, {4}), *more, ("p", say("trace_read", L="{L}"))]


def _ids(ids) -> str:
    """The first sequence's first MAX_IDS token ids, and … when there are more."""
    first = ids[0].tolist()
    return " ".join(str(i) for i in first[:MAX_IDS]) + (" …" if len(first) > MAX_IDS else "")


def _layers(layers: list[int]) -> str:
    """0–3 for a run of layers, else the list: 0, 2, 5."""
    layers = sorted(set(layers))
    if layers == list(range(layers[0], layers[-1] + 1)) and len(layers) > 2:
        return f"{layers[0]}–{layers[-1]}"
    return ", ".join(map(str, layers))


def trace_line(trace, say) -> str:
    return say("trace_line", n=len(trace), B=trace.ids.shape[0], T=trace.ids.shape[-1], bytes=size(trace_bytes(trace)))


# ------------------------------------------------------------------ a check report


def check_blocks(report, say) -> list:
    """The report's head line, what a check means, the failing checks first, then those that pass."""
    lang = say.lang
    lines = check_report(report, lang).split("\n")
    weights = lines[1 : 1 + int(report.weights_checked)]
    items = sorted(report.items, key=lambda i: i.passed)  # stable: the failing ones first, in order
    shown, more = cut([item_line(i, lang) for i in items], say)
    blocks = [("title", lines[0]), ("p", say("check_means", tol=f"{report.tol:g}"))]
    if not report.passed:
        blocks.append(("p", say("check_failed", n=len(report.failed()) + int(report.weights is not None))))
    return [*blocks, ("pre", "\n".join(weights + shown)), *more]


def check_line(report, say) -> str:
    return check_report(report, say.lang).split("\n")[0]


# ------------------------------------------------------------------ a model (qkv.analysis.model_info)


MODEL_FIELDS = ("arch", "n_layers", "n_encoder_layers", "n_heads", "d_model", "d_head", "d_mlp", "n_ctx", "d_vocab",
                "norm", "pos", "tokenizer")  # fmt: skip


def model_blocks(doc, say) -> list:
    rows = [[k, str(doc[k])] for k in MODEL_FIELDS if doc.get(k) is not None]
    rows.append([say("c_parameters"), f"{doc['parameters']:,}"])
    if doc.get("weights_bytes"):
        rows.append([say("c_on_disk"), size(doc["weights_bytes"])])
    where = (doc.get("loaded_from") or {}).get("title") or doc.get("name") or ""
    blocks = [("title", model_line(doc, say)), ("p", say("model_means"))]
    if where:
        blocks.append(("p", say("model_from", where=str(where))))
    return [*blocks, ("table", [say("c_field"), say("c_value")], rows, {1})]


def module_blocks(model, say) -> list:
    """A model itself (GPT, Encoder, Seq2Seq): its model-info table, and where its modules are listed."""
    return [*model_blocks(model_info(model), say), ("p", say("model_modules"))]


def module_line(model, say) -> str:
    return model_line(model_info(model), say)


def model_line(doc, say) -> str:
    return say("model_line", arch=doc["arch"], n_layers=doc["n_layers"], d_model=doc["d_model"],
               parameters=f"{doc['parameters']:,}")  # fmt: skip


# ------------------------------------------------------------------ a training run (qkv.train)


def training_blocks(r, say) -> list:
    loss = lambda x: "—" if x is None else f"{x:.4f}"  # noqa: E731
    rows = [
        [say("c_train_loss"), loss(r.train_loss)],
        [say("c_val_loss"), loss(r.val_loss)],
        [say("c_speed"), f"{r.tokens_per_s:,.0f}"],
        [say("c_seconds"), f"{r.seconds:.1f}"],
    ]
    return [("title", training_line(r, say)), ("p", say("training_means", out=str(r.out))),
            ("table", [say("c_field"), say("c_value")], rows, {1})]  # fmt: skip


def training_line(r, say) -> str:
    loss = "—" if r.val_loss is None else f"{r.val_loss:.4f}"
    return say("training_line", step=r.step, loss=loss)


# ------------------------------------------------------------------ a lesson's result (qkv.lessons.run)


def lesson_blocks(r, say) -> list:
    """The lesson's title, its key numbers, its explanation as it is laid out, and its figures inline: the
    files it drew (run with out=), else drawn now from what it measured (once: kept on the result)."""
    blocks = [("title", r.title), ("p", r.headline), ("pre", r.text)]
    if r.figures:
        return blocks + [figure(Path(p), say) for p in r.figures]
    if "_drawn" not in vars(r):
        r._drawn = _draw(r, say)
    return blocks + (r._drawn or [("p", say("lesson_no_figures", name=r.name))])


def _draw(r, say) -> list:
    """The lesson's figures drawn into a temporary folder and read back inline, in the lesson's language;
    none for a result without its measurement or a lesson that draws the model itself (DRAWS_MODEL)."""
    from qkv.lessons import view_module

    view = view_module(r.name) if r.measured is not None else None
    if view is None or getattr(view, "DRAWS_MODEL", False):
        return []
    with tempfile.TemporaryDirectory() as folder:
        try:
            paths = view.figures(r.measured, Path(folder), r.lang)
        except (OSError, ValueError, RuntimeError) as e:  # shown as one line, never a traceback in the cell
            return [("p", say("lesson_draw_failed", why=str(e)))]
        return [figure(Path(p), say) for p in paths]


def figure(path: Path, say):
    """A figure file as an inline <img> (base64: the notebook keeps it without the file), or a line naming it
    when it is gone, of a type a notebook does not show, or larger than MAX_FIGURE_BYTES."""
    mime = FIGURE_TYPES.get(path.suffix.lower())
    if mime is None or not path.is_file() or path.stat().st_size > MAX_FIGURE_BYTES:
        return ("p", say("figure_named", path=str(path)))
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    alt = re.sub(r"[^\w .-]", "", path.stem)  # the alt text: the file's name, with nothing HTML would read
    return ("raw", f'<img src="data:{mime};base64,{data}" alt="{alt}" style="max-width:100%">')


def lesson_line(r, say) -> str:
    return say("lesson_line", title=r.title, headline=r.headline)
