"""Checkpoints: a directory that a kill at any moment leaves loadable.

    DIR/config.json                   model and training configuration, the data's origin, run id
    DIR/tokenizer.json                the tokenizer
    DIR/model-<step>.safetensors      the weights (safetensors: loading never runs code)
    DIR/optimizer-<step>.safetensors  AdamW's moments, for an exact resume
    DIR/state.json                    the step, and the names of the checkpoint's files
    DIR/log.jsonl                     one line per training step and per evaluation

Every file is written to a temporary name, flushed to disk (fsync) and renamed into place.
state.json is replaced last and names every file of the checkpoint, so until it names the new
files the previous checkpoint is the one that loads. A new run into a directory that holds a
checkpoint (`--force`, or `save` again) writes config.next.json, tokenizer.next.json and
log.next.jsonl beside the old files; its first state.json names those; then they are copied to
the usual names, state.json is pointed at them, and only then are the old files removed. Which
files qkv may remove at all: rundir.py; the lock on the directory: lock.py.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save as st_save

from qkv.core.hub.size import FLOAT_DTYPES, check_fits, param_shapes
from qkv.core.io.files import (
    JSON_LIMIT,
    TOKENIZER_LIMIT,
    atomic_write,
    check_regular,
    json_bytes,
    read_bytes,
    write_json,
)
from qkv.core.io.finite import weights_note, weights_phrase
from qkv.core.io.json_problem import json_problem
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.model import make_model
from qkv.core.model.encoder import Encoder
from qkv.core.model.gpt import GPT
from qkv.core.model.seq2seq import Seq2Seq
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.spec.family import family_of
from qkv.core.text.tokenizers import Tokenizer, tokenizer_from_bytes
from qkv.core.train.lock import locked
from qkv.core.train.rundir import FIXED, FORMAT, STAGED, WEIGHTS_RE, inspect, is_debris, weights_run

VERSION = 1


def read_json(path: Path, what) -> dict:
    """A JSON object from a regular file of at most JSON_LIMIT bytes: a missing file is "missing", a FIFO
    or a device "not a regular file" (files.read_bytes), either way one line naming it."""
    try:
        data = read_bytes(path, JSON_LIMIT, "JSON file")
    except FileNotFoundError:
        raise Refusal.of("errors.ckpt_file_missing", path=path, what=what) from None
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise Refusal.of("errors.ckpt_not_json", path=path, error=json_problem(e)) from None
    if not isinstance(obj, dict):
        raise Refusal.of("errors.ckpt_not_object", path=path)
    return obj


def _is_count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


_Check = Callable[..., object]  # a value -> is it right (truthy)?
_STATE_FIELDS: dict[str, _Check] = {  # state.json: field -> is this value right? (None: the field may be absent)
    "step": _is_count,
    "model": lambda v: isinstance(v, str) and v.startswith("model-") and WEIGHTS_RE.fullmatch(v),
    "optimizer": lambda v: v is None or isinstance(v, str) and v.startswith("optimizer-") and WEIGHTS_RE.fullmatch(v),
    "format": lambda v: v in (None, FORMAT),
    "run": lambda v: v is None or isinstance(v, str),
    "replaced": lambda v: v is None or isinstance(v, list) and all(isinstance(r, str) for r in v),
    **{k: lambda v, k=k: v in (None, FIXED[k], STAGED[k]) for k in FIXED},
    **{
        k: lambda v: v is None or isinstance(v, (int, float)) and not isinstance(v, bool)
        for k in ("train_loss", "val_loss")
    },
}


def read_state(d: Path) -> dict:
    """state.json, every field checked: the step, and the names of the checkpoint's files."""
    path = d / "state.json"
    state = read_json(path, phrase("errors.ckpt_no_state"))
    for key, ok in _STATE_FIELDS.items():
        if key in ("step", "model") and key not in state:
            raise Refusal.of("errors.ckpt_field_missing", path=path, field=repr(key))
        if not ok(state.get(key)):
            raise Refusal.of("errors.ckpt_field_bad", path=path, field=repr(key), value=repr(state.get(key)))
    return state


def _live_state(d: Path) -> dict | None:
    """The state.json of the checkpoint in d, None if there is none or it cannot be read."""
    try:
        return read_state(d) if inspect(d) == "checkpoint" else None
    except ValueError:
        return None


def _files(state: dict | None) -> set[str]:
    """The file names a checkpoint's state.json names."""
    if state is None:
        return set()
    names = (state.get(k) or FIXED.get(k) for k in ("model", "optimizer", *FIXED))
    return {name for name in names if name is not None}


def read_config(d: Path) -> dict:
    """The checkpoint's config (the file its state.json names; config.json when there is none)."""
    name = (_live_state(d) or {}).get("config") or FIXED["config"]
    return read_json(d / name, phrase("errors.ckpt_no_config"))


# ---------------------------------------------------------------------------- writing


def to_cpu(t: torch.Tensor) -> torch.Tensor:
    """A tensor as a checkpoint stores it: detached, on the CPU, contiguous. A CPU tensor that is
    already contiguous is returned as it is (no copy); a CUDA or MPS tensor is copied to the CPU,
    so a checkpoint never depends on the device it was trained on."""
    if t.is_meta:
        raise Refusal.of("errors.ckpt_meta")
    return t.detach().to("cpu").contiguous()


def model_tensors(model: GPT) -> dict[str, torch.Tensor]:
    """The weights to store, on the CPU: a tied unembedding is the embedding, so it is stored once."""
    tensors = {k: to_cpu(v) for k, v in model.state_dict().items()}
    if model.cfg.tie_embeddings:
        tensors.pop("unembed.weight")
    return tensors


def optimizer_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    """AdamW's moments and step counts, on the CPU (loading moves them to the parameters' device)."""
    sd = optimizer.state_dict()
    tensors = {f"state.{i}.{key}": to_cpu(t) for i, s in sd["state"].items() for key, t in s.items()}
    return tensors, {"param_groups": json.dumps(sd["param_groups"])}


class Writer:
    """Writes one run into a checkpoint directory whose lock the caller holds.

    A new run (resume=False) in a directory that holds a checkpoint is staged beside it (.next
    names) until its first `save`; `log_lines` (None: no log) start the log, e.g. those a resume keeps."""

    def __init__(
        self,
        out,
        model_cfg: ModelConfig,
        train_cfg: TrainConfig | None,
        tokenizer: Tokenizer,
        extra: dict | None = None,
        *,
        resume: bool = False,
        log_lines: list[str] | None = None,
    ):
        self.out = Path(out)
        self.live = _live_state(self.out)
        if self.live is not None:  # a switch that a kill interrupted: finish it first, its files stay its own
            self.live = self._unstage(self.live)
        self.previous = self.live  # a checkpoint of another run that this one replaces at its first save
        old_config = read_config(self.out) if resume else {}
        self.run_id = old_config.get("run") or secrets.token_hex(8)
        self.ours = resume
        staged = self.live is not None and not resume
        self.names = {k: (STAGED if staged else FIXED)[k] for k in FIXED if k != "log" or log_lines is not None}
        tok_bytes = json_bytes(tokenizer.to_dict(), indent=None)
        config = {
            "format": FORMAT,
            "version": VERSION,
            "run": self.run_id,
            "model": model_cfg.to_dict(),
            "train": train_cfg.to_dict() if train_cfg else None,
            "tokenizer": tokenizer.kind,
            "tokenizer_sha256": _sha256(tok_bytes),
            **(extra or {}),
        }
        self.out.mkdir(parents=True, exist_ok=True)
        write_json(self.out / self.names["config"], config)  # first: it marks the directory as qkv's
        atomic_write(self.out / self.names["tokenizer"], tok_bytes)
        self.log = None
        if log_lines is not None:
            atomic_write(self.out / self.names["log"], "".join(line + "\n" for line in log_lines).encode("utf-8"))
            self.log = open(self.out / self.names["log"], "a", encoding="utf-8")

    @property
    def kept(self) -> str:
        """What the directory holds now, for messages after a failure."""
        if self.live is None:
            return f"no checkpoint was saved in {self.out} yet"
        if not self.ours:
            step = self.live["step"]
            return f"no checkpoint of this run was saved; {self.out} still holds the previous one (step {step})"
        return f"the last checkpoint (step {self.live['step']}) is kept in {self.out}"

    @property
    def staged(self) -> bool:
        """A new run beside a checkpoint it has not replaced yet (it saved nothing so far)."""
        return not self.ours and self.previous is not None

    def write_log(self, line: str) -> None:
        assert self.log is not None  # only a writer made with log_lines keeps a log
        self.log.write(line + "\n")

    def save(self, model: GPT, step: int, optimizer=None, info: dict | None = None) -> None:
        """Write the weights (and optimizer state) of `step`, then point state.json at them."""
        if self.log:
            self.log.flush()
        taken, runs = _files(self.live), self._runs()
        meta = {"format": FORMAT, "run": self.run_id, "step": str(step)}
        state = {"format": FORMAT, "run": self.run_id, "step": step, **self.names}
        state["model"] = self._write_weights("model", step, st_save(model_tensors(model), meta), taken, runs)
        if optimizer is not None:
            tensors, groups = optimizer_tensors(optimizer)
            state["optimizer"] = self._write_weights(
                "optimizer", step, st_save(tensors, {**meta, **groups}), taken, runs
            )
        # the runs this one replaced whose weight files are still here: the sweep below removes them, and if a
        # kill stops it, the next save knows they were qkv's in this directory
        left = {weights_run(p) for p in self.out.iterdir()} & (runs - {self.run_id})
        if left:
            state["replaced"] = sorted(left)
        state.update(info or {})
        write_json(self.out / "state.json", state)  # the switch: from here on the new checkpoint loads
        self.live, self.ours = state, True
        self.live = self._unstage(state)
        if self.log and self.names.get("log") != FIXED["log"]:
            self.log.close()
            self.log = open(self.out / FIXED["log"], "a", encoding="utf-8")
        self.names = {key: FIXED[key] for key in self.names}
        self._sweep(taken, runs)

    def _write_weights(self, kind: str, step: int, data: bytes, taken: set[str], runs: set[str]) -> str:
        n = 0
        while True:  # a name the live checkpoint does not use, and no one else's file
            name = f"{kind}-{step:07d}{f'-{n}' if n else ''}.safetensors"
            if name not in taken and (not (self.out / name).exists() or weights_run(self.out / name) in runs):
                atomic_write(self.out / name, data)
                return name
            n += 1

    def _unstage(self, state: dict) -> dict:
        """Copy the staged files `state` names to their usual names, then point state.json at those."""
        staged = {key: FIXED[key] for key in FIXED if state.get(key) == STAGED[key]}
        if not staged:
            return state
        for key, name in staged.items():
            atomic_write(self.out / name, (self.out / STAGED[key]).read_bytes())
        state = {**state, **staged}
        write_json(self.out / "state.json", state)
        return state

    def _runs(self) -> set[str]:
        """The runs whose weight files this writer may replace or remove (by the run id in their header):
        its own, the live checkpoint's, and those the live checkpoint replaced. A qkv weight file of any
        other run was copied in by someone, and stays."""
        live = self.live or {}
        runs = {self.run_id, live.get("run")} | set(live.get("replaced") or [])
        return {run for run in runs if run is not None}

    def _sweep(self, previous: set[str], runs: set[str]) -> None:
        """Remove what qkv wrote and no longer needs: the previous checkpoint's weights, staged files, debris."""
        keep = _files(self.live)
        for p in self.out.iterdir():
            if p.name in keep:
                continue
            weights = WEIGHTS_RE.fullmatch(p.name) and (p.name in previous or weights_run(p) in runs)
            if weights or p.name in STAGED.values() or is_debris(p.name):
                p.unlink(missing_ok=True)

    def close(self) -> None:
        if self.log:
            self.log.close()
        if self.staged:  # a staged run that never saved: its files go
            for name in self.names.values():
                (self.out / name).unlink(missing_ok=True)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def save(out, model: GPT, tokenizer: Tokenizer, step: int = 0) -> None:
    """Save a model and its tokenizer as a checkpoint directory (no training state).

    `out` must be missing, empty or a qkv checkpoint (which is replaced, crash-safely). The weights
    may be on any device and in any float type; they are written from the CPU, as they are."""
    inspect(out)
    model_tensors(model)  # a model that cannot be saved (on the meta device) is refused before anything is written
    note = weights_note(model)
    if note:  # load_checkpoint would refuse the checkpoint: it is not written
        raise Refusal.of("errors.ckpt_not_written", why=weights_phrase(model), out=out)
    with locked(out):
        writer = Writer(out, model.cfg, None, tokenizer)
        try:
            writer.save(model, step)
        finally:
            writer.close()


# ---------------------------------------------------------------------------- reading


@dataclass
class Checkpoint:
    model: GPT
    tokenizer: Tokenizer
    config: dict
    state: dict
    train_config: TrainConfig | None = None
    optimizer_state: dict | None = field(default=None, repr=False)


@contextmanager
def _open_weights(path: Path, state: dict):
    """A weight file named by state.json, opened by safetensors: its header read, its tensors mapped
    and read one at a time when asked (f.get_tensor), never the whole file into memory. It must be a
    regular file (opening a FIFO would wait forever) and belong to that state (its run and step)."""
    try:
        check_regular(path)
    except FileNotFoundError:
        raise Refusal.of("errors.ckpt_incomplete", path=path) from None
    try:
        f = safe_open(str(path), framework="pt")
    except (SafetensorError, OSError) as e:
        raise Refusal.of("errors.ckpt_not_safetensors", path=path, error=str(e)) from None
    with f:
        meta = f.metadata() or {}
        run, step = meta.get("run"), meta.get("step")
        if run is not None and state.get("run") is not None and run != state["run"]:
            raise Refusal.of("errors.ckpt_other_run", path=path, run=run, state_run=state["run"])
        if step is not None and step != str(state["step"]):
            raise Refusal.of("errors.ckpt_step", path=path, step=step, state_step=state["step"])
        yield f


def _check_model_tensors(path: Path, f, expected: dict[str, tuple[int, ...]]) -> None:
    """The names, shapes and dtypes in a weight file's header against the config's (size.param_shapes),
    before the model is built: nothing of a file that does not fit the config is allocated."""
    found = {name: f.get_slice(name) for name in f.keys()}
    missing = sorted(set(expected) - set(found))
    unexpected = sorted(set(found) - set(expected))
    if missing or unexpected:
        raise Refusal.of("errors.ckpt_tensors", path=path, missing=str(missing[:3]), unexpected=str(unexpected[:3]))
    for name, t in found.items():
        if tuple(t.get_shape()) != expected[name]:
            raise Refusal.of("errors.ckpt_shape", path=path, name=name, shape=tuple(t.get_shape()), want=expected[name])
        if t.get_dtype() not in FLOAT_DTYPES:
            raise Refusal.of("errors.ckpt_dtype", path=path, name=name, dtype=t.get_dtype())


@torch.no_grad()
def _load_model_tensors(path: Path, f, model) -> None:
    """Copy the checked tensors into the model's float32 parameters, one tensor in memory at a time."""
    params = dict(model.named_parameters())
    for name in f.keys():
        t = f.get_tensor(name)
        if not torch.isfinite(t).all():
            raise Refusal.of("errors.ckpt_tensor_not_finite", path=path, name=name)
        params[name].copy_(t)


def _optimizer_state(path: Path, state: dict) -> dict:
    """AdamW's state as torch's state_dict() has it: {"state": {i: {key: tensor}}, "param_groups": [...]}.
    Only its form is checked here; resume.check_optimizer_state compares it with the model."""
    with _open_weights(path, state) as f:
        try:
            groups = json.loads((f.metadata() or {})["param_groups"])
        except (KeyError, TypeError, ValueError):
            raise Refusal.of("errors.ckpt_param_groups", path=path) from None
        opt_state: dict[int, dict] = {}
        for name in f.keys():
            parts = name.split(".")
            if len(parts) != 3 or parts[0] != "state" or not parts[1].isdigit():
                raise Refusal.of("errors.ckpt_optimizer_name", path=path, name=repr(name))
            opt_state.setdefault(int(parts[1]), {})[parts[2]] = f.get_tensor(name)
    return {"state": opt_state, "param_groups": groups}


def _read_config(cpath: Path) -> tuple[dict, ModelConfig, TrainConfig | None]:
    """config.json, checked: (the whole of it, its ModelConfig, its TrainConfig or None)."""
    config = read_json(cpath, phrase("errors.ckpt_no_config"))
    if config.get("format") != FORMAT:
        raise Refusal.of("errors.ckpt_not_config", path=cpath)
    if config.get("version") != VERSION:
        raise Refusal.of("errors.ckpt_version", path=cpath, version=config.get("version"), reads=VERSION)
    if "model" not in config:
        raise Refusal.of("errors.ckpt_no_model", path=cpath)
    # a field missing inside "model" or "train" takes its default (checkpoints of older versions lack newer fields)
    try:
        model_cfg = ModelConfig.from_dict(config["model"])
        train_cfg = TrainConfig.from_dict(config["train"]) if config.get("train") else None
    except ValueError as e:
        raise Refusal.of("errors.in", where=cpath, error=e) from None
    return config, model_cfg, train_cfg


def _read_model(wpath: Path, state: dict, model_cfg: ModelConfig, device):
    """The model of `model_cfg` with the weights of `wpath` (checked tensor by tensor), in eval mode, on
    `device` (None: the CPU)."""
    with _open_weights(wpath, state) as f:
        _check_model_tensors(wpath, f, param_shapes(model_cfg))  # a tied unembedding is not stored: W_E
        model = make_model(model_cfg)
        _load_model_tensors(wpath, f, model)
    model.eval()
    if device is not None:
        from qkv.core.machine.device import to_device

        to_device(model, device)
    return model


def load_checkpoint(path, with_optimizer: bool = False, device=None) -> Checkpoint:
    """Load a checkpoint directory; anything missing or inconsistent raises ValueError (one line).

    The weights are read onto the CPU as float32 (whatever device and float type saved them), then
    moved to `device` (a torch.device or a --device name such as "cuda"; None: stay on the CPU).
    The optimizer state stays on the CPU: optimizer.load_state_dict moves it to the parameters."""
    d = Path(path)
    if d.is_file():
        raise Refusal.of("errors.ckpt_is_file", path=d)
    if not d.is_dir():
        raise Refusal.of("errors.ckpt_no_dir", path=d)
    state = read_state(d) if (d / "state.json").exists() else None
    names = {k: (state or {}).get(k) or FIXED[k] for k in FIXED}
    cpath, tpath = d / names["config"], d / names["tokenizer"]
    config, model_cfg, train_cfg = _read_config(cpath)
    check_fits(model_cfg, cpath)  # before anything of its size is allocated
    try:
        tok_bytes = read_bytes(tpath, TOKENIZER_LIMIT, "tokenizer file")
    except FileNotFoundError:
        raise Refusal.of("errors.ckpt_no_tokenizer", path=tpath) from None
    tokenizer = tokenizer_from_bytes(tok_bytes, tpath)
    if config.get("tokenizer") not in (None, tokenizer.kind):
        raise Refusal.of(
            "errors.ckpt_tokenizer_kind",
            path=tpath,
            kind=tokenizer.kind,
            config=cpath,
            says=repr(config.get("tokenizer")),
        )
    digest = config.get("tokenizer_sha256")
    if digest is not None and digest != _sha256(tok_bytes):
        raise Refusal.of("errors.ckpt_tokenizer_sha", path=tpath, config=cpath)
    if tokenizer.vocab_size > model_cfg.d_vocab:
        raise Refusal.of("errors.ckpt_vocab", path=d, n=tokenizer.vocab_size, d_vocab=model_cfg.d_vocab)
    if state is None:
        state = read_state(d)  # raises: state.json is missing
    if None not in (state.get("run"), config.get("run")) and state["run"] != config["run"]:
        raise Refusal.of(
            "errors.ckpt_state_run", path=d / "state.json", config=cpath, run=state["run"], config_run=config["run"]
        )
    model = _read_model(d / state["model"], state, model_cfg, device)
    stops = (config.get("init") or {}).get("stop_ids") if isinstance(config.get("init"), dict) else None
    if isinstance(stops, list) and all(type(i) is int and 0 <= i < model_cfg.d_vocab for i in stops):
        model.stop_ids = tuple(stops)  # a fine-tuned pretrained model still ends where it did (train/init.py)
    task = config.get("task")
    if family_of(model_cfg).translates and isinstance(task, dict) and task.get("kind") == "translate":
        model.languages = (str(task.get("source")), str(task.get("target")))  # a translation model's direction
    optimizer_state = None
    if with_optimizer and state.get("optimizer"):
        optimizer_state = _optimizer_state(d / state["optimizer"], state)
    return Checkpoint(model, tokenizer, config, state, train_cfg, optimizer_state)


def load(path=None, device=None, dtype: str | None = None) -> tuple[GPT | Encoder | Seq2Seq, Tokenizer]:
    """(model, tokenizer) from a checkpoint directory (None: the bundled model, as the commands read it
    without --ckpt), the model in eval mode, on the CPU or on `device` (a torch.device or a --device
    name: "auto", "cuda", ...), its weights in `dtype` ("float32" or "bfloat16"; None: float32, or
    hub.pretrained.loading_dtype's, the CLI's --dtype). A pretrained model ("minilm", "hf:NAME", a Hugging
    Face directory) loads through models.pretrained."""
    from qkv.core.hub.bundled import default_ckpt
    from qkv.core.hub.pretrained import is_pretrained_ref, load_pretrained, wanted_dtype
    from qkv.core.machine.device import to_device

    if path is None:
        path = default_ckpt()
    dtype = wanted_dtype(dtype)
    if is_pretrained_ref(path):
        model, tokenizer = load_pretrained(path, dtype)
        if device is not None:
            to_device(model, device)  # in place (Module.to)
        return model, tokenizer
    ckpt = load_checkpoint(path, device=device)
    if dtype != "float32":  # a run is saved in float32: its weights cast, its fixed tables kept (weights_in)
        weights_in(ckpt.model, getattr(torch, dtype))
    ckpt.model.checkpoint = "bundled" if Path(path).resolve() == default_ckpt().resolve() else Path(path).name
    return ckpt.model, ckpt.tokenizer


def weights_in(model: torch.nn.Module, dtype: torch.dtype) -> torch.nn.Module:
    """The model with every floating-point parameter cast to `dtype`, in place; its buffers (a sinusoidal
    table) stay float32, as a pretrained model loaded in that dtype keeps them (hub/read.py)."""
    with torch.no_grad():
        for p in model.parameters():  # a tied parameter is met once
            if p.is_floating_point():
                p.data = p.data.to(dtype)
    return model
