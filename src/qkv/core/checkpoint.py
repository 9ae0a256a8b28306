"""Checkpoints: a directory that a kill at any moment leaves loadable.

    DIR/config.json              model and training configuration, text source
    DIR/tokenizer.json           the tokenizer
    DIR/model-<step>.safetensors      the weights (safetensors: loading never runs code)
    DIR/optimizer-<step>.safetensors  AdamW's moments, for an exact resume
    DIR/state.json               the step, and which weight files belong to it
    DIR/log.jsonl                one line per training step and per evaluation

Every file is written to a temporary name, flushed to disk (fsync) and renamed into place.
state.json is replaced last, so until it names the new files the previous checkpoint is the
one that loads; older weight files are deleted only after that.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from .config import ModelConfig, TrainConfig
from .models.gpt import GPT
from .tokenizers import Tokenizer, load_tokenizer

FORMAT = "qkv-checkpoint"
VERSION = 1


def atomic_write(path: Path, data: bytes) -> None:
    """Write bytes to path so that a reader sees either the old file or the whole new one."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # some platforms cannot open a directory
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_json(path: Path, obj) -> None:
    atomic_write(path, (json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


def read_json(path: Path, what: str) -> dict:
    if not path.is_file():
        raise ValueError(f"{path} is missing: not a qkv checkpoint ({what})")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path} must hold a JSON object")
    return obj


def model_tensors(model: GPT) -> dict[str, torch.Tensor]:
    """The weights to store: a tied unembedding is the embedding, so it is stored once."""
    tensors = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    if model.cfg.tie_embeddings:
        tensors.pop("unembed.weight")
    return tensors


def optimizer_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    sd = optimizer.state_dict()
    tensors = {f"state.{i}.{key}": t.contiguous() for i, s in sd["state"].items() for key, t in s.items()}
    return tensors, {"param_groups": json.dumps(sd["param_groups"])}


def write_config(out: Path, model_cfg: ModelConfig, train_cfg: TrainConfig | None, tokenizer: Tokenizer, extra: dict | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    config = {"format": FORMAT, "version": VERSION, "model": model_cfg.to_dict(),
              "train": train_cfg.to_dict() if train_cfg else None, "tokenizer": tokenizer.kind, **(extra or {})}
    write_json(out / "config.json", config)
    atomic_write(out / "tokenizer.json", (json.dumps(tokenizer.to_dict(), ensure_ascii=False) + "\n").encode("utf-8"))


def save_weights(out: Path, model: GPT, step: int, optimizer=None, info: dict | None = None) -> None:
    """Write the weights (and optimizer state) for `step`, then point state.json at them."""
    out = Path(out)
    model_file = f"model-{step:07d}.safetensors"
    atomic_write(out / model_file, st_save(model_tensors(model), {"step": str(step)}))
    state = {"step": step, "model": model_file, **(info or {})}
    if optimizer is not None:
        opt_file = f"optimizer-{step:07d}.safetensors"
        tensors, meta = optimizer_tensors(optimizer)
        atomic_write(out / opt_file, st_save(tensors, {"step": str(step), **meta}))
        state["optimizer"] = opt_file
    write_json(out / "state.json", state)
    keep = {model_file, state.get("optimizer")}
    for p in out.iterdir():  # older checkpoints and the debris of interrupted writes
        stale = p.name.startswith(("model-", "optimizer-")) and p.suffix == ".safetensors" and p.name not in keep
        if stale or (p.name.startswith(".") and ".tmp-" in p.name):
            p.unlink(missing_ok=True)


def save(out, model: GPT, tokenizer: Tokenizer, step: int = 0) -> None:
    """Save a model and its tokenizer as a checkpoint directory (no training state)."""
    out = Path(out)
    write_config(out, model.cfg, None, tokenizer)
    save_weights(out, model, step)


@dataclass
class Checkpoint:
    model: GPT
    tokenizer: Tokenizer
    config: dict
    state: dict
    train_config: TrainConfig | None = None
    optimizer_state: dict | None = field(default=None, repr=False)


def _read_safetensors(path: Path) -> tuple[dict[str, torch.Tensor], dict]:
    if not path.is_file():
        raise ValueError(f"{path} is missing: the checkpoint is incomplete")
    data = path.read_bytes()
    try:
        tensors = st_load(data)
        header_len = int.from_bytes(data[:8], "little")  # the header: its length, then JSON with "__metadata__"
        meta = json.loads(data[8 : 8 + header_len]).get("__metadata__", {}) or {}
    except (SafetensorError, ValueError, OSError) as e:
        raise ValueError(f"{path} is not a valid safetensors file: {e}") from None
    return tensors, meta


def load_checkpoint(path, with_optimizer: bool = False) -> Checkpoint:
    """Load a checkpoint directory; anything missing or inconsistent raises ValueError (one line)."""
    d = Path(path)
    if not d.is_dir():
        raise ValueError(f"checkpoint directory {d} does not exist")
    config = read_json(d / "config.json", "no config.json")
    if config.get("format") != FORMAT:
        raise ValueError(f"{d / 'config.json'} is not a qkv checkpoint config")
    if config.get("version") != VERSION:
        raise ValueError(f"{d / 'config.json'}: checkpoint version {config.get('version')} is not supported (this qkv reads {VERSION})")
    try:
        model_cfg = ModelConfig.from_dict(config.get("model"))
        train_cfg = TrainConfig.from_dict(config["train"]) if config.get("train") else None
    except ValueError as e:
        raise ValueError(f"{d / 'config.json'}: {e}") from None
    tokenizer = load_tokenizer(d / "tokenizer.json")
    if tokenizer.vocab_size > model_cfg.d_vocab:
        raise ValueError(f"{d}: the tokenizer has {tokenizer.vocab_size} tokens but the model only {model_cfg.d_vocab} (d_vocab)")
    state = read_json(d / "state.json", "no state.json: no finished checkpoint was written")
    if not isinstance(state.get("model"), str) or "/" in state["model"] or not isinstance(state.get("step"), int):
        raise ValueError(f"{d / 'state.json'} is malformed")
    tensors, _ = _read_safetensors(d / state["model"])
    model = GPT(model_cfg)
    expected = model_tensors(model)
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise ValueError(f"{d / state['model']} does not match config.json: missing {missing[:3]}, unexpected {unexpected[:3]}")
    for name, t in tensors.items():
        if t.shape != expected[name].shape:
            raise ValueError(f"{d / state['model']}: tensor {name} has shape {tuple(t.shape)} but config.json implies {tuple(expected[name].shape)}")
    model.load_state_dict(tensors, strict=not model_cfg.tie_embeddings)
    model.eval()
    optimizer_state = None
    if with_optimizer and state.get("optimizer"):
        t, meta = _read_safetensors(d / state["optimizer"])
        groups = json.loads(meta.get("param_groups", "[]"))
        opt_state: dict[int, dict] = {}
        for name, value in t.items():
            _, i, key = name.split(".", 2)
            opt_state.setdefault(int(i), {})[key] = value
        optimizer_state = {"state": opt_state, "param_groups": groups}
    return Checkpoint(model, tokenizer, config, state, train_cfg, optimizer_state)


def load(path) -> tuple[GPT, Tokenizer]:
    """(model, tokenizer) from a checkpoint directory, the model in eval mode."""
    ckpt = load_checkpoint(path)
    return ckpt.model, ckpt.tokenizer
