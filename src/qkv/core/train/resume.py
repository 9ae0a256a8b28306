"""What a resume checks before it trusts a checkpoint: the data it was trained on, its log, and its
optimizer state against the model it continues. PyTorch's fused AdamW does not check the state it is
given, and crashes (or hangs) on one from another model, so every tensor is checked first.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch

from qkv.core.io.files import LOG_LIMIT, read_bytes
from qkv.core.io.refusal import Refusal
from qkv.core.train.muon import AnyOptimizer


def read_log(path: Path, upto: int, state: dict) -> list[str]:
    """The log lines of steps <= upto (a resumed run rewrites what came after its checkpoint).

    Only the last line may be cut short (by a kill); the evaluation line of step `upto`, if there
    is one, must give the loss state.json records, else the log is another run's. A FIFO or a device
    in its place, or a file past LOG_LIMIT, is a one-line ValueError (files.read_bytes)."""
    if not path.exists():
        return []
    try:
        lines = read_bytes(path, LOG_LIMIT, "training log").decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise Refusal.of("resume.log_not_utf8", path=path, byte=e.start) from None
    kept = []
    for n, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
            step = entry["step"]
            if not isinstance(step, int) or isinstance(step, bool):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            if n == len(lines):  # the last line, cut short by a kill (or the empty string after the last newline)
                continue
            raise Refusal.of("resume.log_line", path=path, n=n) from None
        if step <= upto:
            kept.append(line)
        loss = state.get("train_loss")
        if step == upto and "train_loss" in entry and loss is not None and entry["train_loss"] != round(loss, 6):
            raise Refusal.of("resume.log_other_run", path=path, step=upto, got=entry["train_loss"], want=round(loss, 6))
    return kept


def recorded_origin(config: dict, out: Path) -> dict:
    """Where the training data came from, as config.json's "data" records it: {"kind": "file" |
    "string" | "builtin", "path"? (a file's), "sha256", ...} (a task may add counts: tokens, pairs)."""
    origin = config.get("data")
    if (
        not isinstance(origin, dict)
        or (kind := origin.get("kind")) not in ("file", "string", "builtin")
        or not isinstance(origin.get("sha256"), str)
        or (kind == "file" and not isinstance(origin.get("path"), str))
    ):
        raise Refusal.of("resume.data_field", path=out / "config.json")
    return origin


def _same_kind(value, expected, key: str = "") -> bool:
    """Whether a saved optimizer hyper-parameter has the form of the one a fresh optimizer holds."""
    if isinstance(expected, bool) or expected is None:  # switches (fused, amsgrad, ...): exactly the same
        return value is expected
    if isinstance(expected, tuple):  # AdamW's betas (each in [0, 1)), Muon's ns_coefficients (any sign)
        numbers = isinstance(value, list) and len(value) == len(expected)
        if key != "betas":
            return numbers and all(isinstance(v, (int, float)) and math.isfinite(v) for v in value)
        return numbers and all(_same_kind(v, 0.5) and v < 1 for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


ADAMW_KEYS, MUON_KEYS = {"step", "exp_avg", "exp_avg_sq"}, {"momentum_buffer"}


def _state_keys(optimizer) -> list[set[str]]:
    """The state each parameter has once stepped, in the state_dict's order: AdamW's moments and step count,
    or Muon's momentum (a group with ns_steps: train/muon.py)."""
    return [MUON_KEYS if "ns_steps" in g else ADAMW_KEYS for g in optimizer.param_groups for _ in g["params"]]


def check_optimizer_state(saved: dict, optimizer: AnyOptimizer, path, step: int) -> None:
    """Check a saved AdamW state against `optimizer` (made for the model it resumes) before
    load_state_dict: parameter groups, their settings, and every tensor's parameter index, shape,
    dtype and step count. PyTorch's fused kernels do not check, and crash on a mismatch."""
    expected = optimizer.state_dict()["param_groups"]
    groups = saved["param_groups"]
    if not isinstance(groups, list) or len(groups) != len(expected) or not all(isinstance(g, dict) for g in groups):
        raise Refusal.of("resume.groups", path=path, n=len(expected))
    for n, (group, want) in enumerate(zip(groups, expected)):
        if group.get("params") != want["params"]:
            raise Refusal.of(
                "resume.group_params", path=path, n=n, got=len(group.get("params") or []), want=len(want["params"])
            )
        for key, value in group.items():
            if key != "params" and (key not in want or not _same_kind(value, want[key], key)):
                raise Refusal.of("resume.group_setting", path=path, n=n, key=key, value=repr(value))
    params = [p for g in optimizer.param_groups for p in g["params"]]
    kinds = _state_keys(optimizer)
    missing = sorted(set(range(len(params))) - set(saved["state"])) if step > 0 else []
    if missing:  # AdamW keeps moments (Muon a momentum) for every parameter once it has taken a step
        raise Refusal.of("resume.state_missing", path=path, i=missing[0], n=len(missing), total=len(params))
    for i, s in saved["state"].items():
        if i >= len(params):
            raise Refusal.of("resume.state_index", path=path, i=i, total=len(params))
        if set(s) != (keys := kinds[i]):
            raise Refusal.of("resume.state_keys", path=path, i=i, got=str(sorted(s)), want=str(sorted(keys)))
        for key, t in s.items():
            shape, dtype = ((), torch.float32) if key == "step" else (params[i].shape, params[i].dtype)
            if t.shape != shape or t.dtype != dtype:
                raise Refusal.of(
                    "resume.state_tensor", path=path, i=i, key=key, got=f"{t.dtype} {tuple(t.shape)}",
                    want=f"{dtype} {tuple(shape)}",
                )  # fmt: skip
            if not torch.isfinite(t).all() or (key in ("step", "exp_avg_sq") and (t < 0).any()):
                raise Refusal.of("resume.state_values", path=path, i=i, key=key)
        if "step" in s and s["step"].item() != step:
            raise Refusal.of("resume.state_step", path=path, i=i, got=f"{s['step'].item():g}", step=step)


def load_optimizer(optimizer: AnyOptimizer, saved: dict, path, step: int) -> None:
    """Load a checked state; its moments and step counts, that is: the hyper-parameters (betas, weight
    decay, eps; Muon's momentum, its lr_scale ...) stay those of the current settings (--set), whatever the
    file says (the loop sets lr at every step)."""
    check_optimizer_state(saved, optimizer, path, step)
    current = [{k: v for k, v in g.items() if k not in ("params", "lr")} for g in optimizer.param_groups]
    optimizer.load_state_dict(saved)
    for g, settings in zip(optimizer.param_groups, current):
        g.update(settings)
