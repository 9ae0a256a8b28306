"""What a model is, as the documents of the page and `qkv info` state it: its shape, its tokenizer,
its size, and where it came from."""

from __future__ import annotations

from pathlib import Path

from qkv.analysis.explain import model_fields
from qkv.core.io.shown import Document


def model_info(model, tokenizer=None, name: str = "") -> dict:
    """The model's shape, its tokenizer, its size, and where it came from (a translation model's
    also n_encoder_layers).

    design, generates, translates, has_lm_head: what its family is and can do (core.models.family);
    loaded_from: {name, path, architecture, title} — for a pretrained model what it was loaded from
    (model.loaded_from), else the qkv checkpoint `name` names (a directory; "bundled": the model inside
    qkv, path null); weights_bytes: the size of its weight files on disk (safetensors), or null."""
    cfg = model.cfg
    keys = (
        "n_layers",
        "n_heads",
        "d_model",
        "d_head",
        "d_mlp",
        "n_ctx",
        "d_vocab",
        "norm",
        "pos",
        "causal",
        "residual",
        "parallel_attn_mlp",  # GPT-NeoX's block: attention and MLP both read x, no resid_mid between them
        "values",
        "arch",
    )
    loaded_from, weights = _loaded_from(model, name)
    out = {
        **model_fields(model, keys),
        "tokenizer": tokenizer.kind if tokenizer is not None else None,
        "name": name,
        "parameters": model.num_params(),
        "loaded_from": loaded_from,
        "weights_bytes": _weights_bytes(weights),
    }
    for stack in model.family.stacks[:-1]:  # an encoder-decoder: n_layers counts the decoder's blocks
        out[stack.layers] = getattr(cfg, stack.layers)
    return Document(out, kind="model-info")  # a dict that shows itself in a notebook (no "kind" field)


def _loaded_from(model, name: str) -> tuple[dict, str | None]:
    """(where the model was loaded from, the directory its weights are in)."""
    src = model.loaded_from
    if isinstance(src, dict):
        out = {k: src.get(k) for k in ("name", "path", "architecture", "title")}
        weights = out["path"]
    else:
        path = str(Path(name).resolve()) if name and name != "bundled" and Path(name).is_dir() else None
        out = {"name": name or None, "path": path, "architecture": f"qkv {model.cfg.arch}", "title": None}
        if name == "bundled":
            from qkv.core.hub.bundled import BUNDLED

            path = str(BUNDLED)
        weights = path
    return out, weights


def _weights_bytes(path) -> int | None:
    """Bytes of the files the model's weights were read from in `path`: the one a qkv checkpoint's
    state.json names, or those a Hugging Face directory's layout names (no stray .safetensors file)."""
    from qkv.core.hub.weights import weight_files
    from qkv.core.train.checkpoint import read_state

    d = Path(path) if path else None
    if d is not None and d.is_file():  # a GGUF file: the one file it was read from
        return d.stat().st_size
    if d is None or not d.is_dir():
        return None
    try:
        files = [d / read_state(d)["model"]] if (d / "state.json").exists() else weight_files(d)
        return sum(f.stat().st_size for f in files) or None
    except (OSError, ValueError):
        return None
