"""Fine-tuning: a new run that starts from a trained model instead of random weights (`qkv train --init`).

    train(text_path="shakespeare.txt", out="runs/ft", init="smollm2")   # SmolLM2, fine-tuned

The init is anything qkv opens as a GPT: a qkv run directory, a Hugging Face directory of any family
that generates (GPT-2, Llama, Mistral, Qwen2/3, Gemma, GPT-NeoX, Phi-3, OLMo-2), a GGUF file, "smollm2"
or "hf:NAME". The run takes its config, weights and tokenizer as they are (the tokenizer is not
retrained, d_vocab and n_ctx do not change) and trains them with float32 master weights; everything
else (the schedule, checkpoints, exact resume, processes, devices, precision) is a fresh run's.
Its settings: the preset "finetune" (config.PRESETS: lr 3e-5, 200 steps of 4 windows of 128 tokens)
or another preset's training fields, then --set; of the model's fields only the dropout rates may be
set (they change no weight). TrainConfig.block_size caps the training window below the model's
n_ctx (8192 for SmolLM2), so a window fits in memory while the exported model keeps its n_ctx.
config.json records where the run started: "init": {"ref", "kind", "path", and "sha256" of a file or
"run" and "step" of a qkv run, and "stop_ids", the ids that end its generation, which a checkpoint
loads back as GPT.stop_ids}. A chat template of the init is not kept (the checkpoint's tokenizer
file holds the vocabulary and pipeline only).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from qkv.core.hub.gguf.find import gguf_file, names_gguf
from qkv.core.hub.pretrained import is_pretrained_ref, load_pretrained
from qkv.core.hub.size import param_count
from qkv.core.io.files import format_bytes
from qkv.core.io.refusal import Refusal, family_title
from qkv.core.machine.memory import available_memory
from qkv.core.model import make_model
from qkv.core.spec.config import PRESETS, ModelConfig, TrainConfig, apply_overrides

FINETUNE = "finetune"  # the preset of a run with an init (training fields only)
SETTABLE = ("dropout_embed", "dropout_resid", "dropout_attn")  # the model fields --set may change with an init
TRAIN_BYTES = 16  # float32 bytes per parameter while training: the weight, its gradient, AdamW's two moments


def init_settings(kind: str, overrides, preset: str | None, given: dict) -> tuple[dict, TrainConfig]:
    """(the model fields --set changes, the TrainConfig) of a run with an init: the preset's training
    fields (default "finetune"), then --set. Refused: a task other than a GPT's, a new run's tokenizer
    options (`given`, by option name), --set of a model field other than the dropout rates."""
    if kind != "lm":
        raise Refusal.of("finetune.task")
    flags = [f"--{name.replace('_', '-')}" for name, value in given.items() if value is not None]
    if flags:
        raise Refusal.of("finetune.flags", flags=flags)
    preset = preset or FINETUNE
    if preset not in PRESETS:
        raise Refusal.of("errors.preset_unknown", preset=repr(preset), choices=list(PRESETS))
    model_fields, train_fields = apply_overrides({}, PRESETS[preset].train, list(overrides))
    shaped = [name for name in model_fields if name not in SETTABLE]
    if shaped:
        raise Refusal.of("finetune.model_settings", names=shaped, allowed=list(SETTABLE))
    return model_fields, TrainConfig(**train_fields)


def load_init(ref: str, model_fields: dict, tc: TrainConfig):
    """(model in train mode, float32, on the CPU; its tokenizer; config.json's "init" record) for `ref`,
    with the dropout rates of `model_fields`. Refused: a path that is not there, a model that is not a
    GPT (an encoder, a translation model), one whose training state cannot fit in memory."""
    from qkv.core.train.checkpoint import load_checkpoint

    s = str(ref)
    if not (names_gguf(s) or s.startswith("hf:") or Path(s).exists() or is_pretrained_ref(s)):
        raise Refusal.of("finetune.missing", ref=s)
    if is_pretrained_ref(s):
        model, tokenizer = load_pretrained(s, dtype="float32")  # master weights in float32, whatever was stored
        record = _pretrained_record(s, model)
    else:
        ckpt = load_checkpoint(s)
        model, tokenizer = ckpt.model, ckpt.tokenizer
        record = {"ref": s, "kind": "run", "path": str(Path(s).resolve()), "run": ckpt.config.get("run")}
        record["step"] = ckpt.state["step"]
    if model.family.trains != "lm":
        raise Refusal.of("finetune.not_gpt", ref=s, family=family_title(model.family))
    _check_memory(model.cfg, tc, s)
    if model_fields:  # new dropout rates: the same weights in a model built with them
        cfg = ModelConfig.from_dict({**model.cfg.to_dict(), **model_fields})
        rebuilt = make_model(cfg)
        rebuilt.load_state_dict(model.state_dict())
        rebuilt.stop_ids = getattr(model, "stop_ids", ())
        model = rebuilt
    model.float().requires_grad_(True).train()
    record["stop_ids"] = list(getattr(model, "stop_ids", ()))  # where its generation ends: the checkpoint keeps it
    return model, tokenizer, record


def _pretrained_record(ref: str, model) -> dict:
    """Where a pretrained init came from: its path, and the sha256 of a single file (GGUF)."""
    if names_gguf(ref):
        path = gguf_file(ref)
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return {"ref": ref, "kind": "gguf", "path": str(path.resolve()), "sha256": digest.hexdigest()}
    loaded = getattr(model, "loaded_from", None) or {}
    return {"ref": ref, "kind": "pretrained", "path": loaded.get("path"), "architecture": loaded.get("architecture")}


def _check_memory(cfg: ModelConfig, tc: TrainConfig, ref: str) -> None:
    """Refuse a fine-tune that surely cannot fit: TRAIN_BYTES per parameter, plus one window's logits
    three times over (the logits, their softmax and its gradient)."""
    window = min(tc.block_size or cfg.n_ctx, cfg.n_ctx)
    need = TRAIN_BYTES * param_count(cfg) + 3 * 4 * tc.batch_size * window * cfg.d_vocab
    have = available_memory()
    if have is not None and need > have:
        raise Refusal.of("finetune.too_large", ref=ref, need=format_bytes(need), have=format_bytes(have))


def fit_window(tc: TrainConfig, n_ctx: int, overrides) -> TrainConfig:
    """`tc` with a preset's block_size cut to the init's n_ctx (the finetune preset's 128 is longer than a
    qkv run's 64); a block_size given with --set is kept, and block_size() refuses it if it is too long."""
    given = any(pair.partition("=")[0].strip() == "block_size" for pair in overrides)
    if given or tc.block_size is None or tc.block_size <= n_ctx:
        return tc
    return TrainConfig.from_dict({**tc.to_dict(), "block_size": n_ctx})


def check_same_tokenizer(data_tokenizer, init_tokenizer, ref: str) -> None:
    """Refuse token ids written with another tokenizer than the init's (`data_tokenizer` None: a text,
    which the init's tokenizer encodes itself)."""
    if data_tokenizer is not None and data_tokenizer.to_dict() != init_tokenizer.to_dict():
        raise Refusal.of("finetune.data_tokenizer", ref=ref)


def block_size(tc: TrainConfig, n_ctx: int) -> int:
    """The tokens of a training window: tc.block_size (None: the model's n_ctx), at most n_ctx."""
    if tc.block_size is not None and tc.block_size > n_ctx:
        raise Refusal.of("finetune.block_size", block_size=tc.block_size, n_ctx=n_ctx)
    return tc.block_size or n_ctx
