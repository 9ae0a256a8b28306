"""Write a qkv GPT and its tokenizer as a Hugging Face model directory.

    export_hf(model, tokenizer, "runs/book-hf")
    AutoModelForCausalLM.from_pretrained("runs/book-hf")   # GPT-2, the same logits (to 1e-5)
    AutoTokenizer.from_pretrained("runs/book-hf")          # the same ids, the same decoded text

The model goes through `to_hf` (GPT-2's layout, adapters/gpt2.py; or Llama's for a model with
RMSNorm, adapters/llama_export.py: a fine-tuned SmolLM2 or Llama) and `save_pretrained` (config.json and
model.safetensors); the tokenizer through `to_hf_tokenizer` (tokenizer.json), with a
tokenizer_config.json that names `PreTrainedTokenizerFast` and n_ctx as `model_max_length`; qkv's
own tokenizer goes beside it (qkv-tokenizer.json), so `--ckpt out` reads the directory back exactly.
Everything is written into a hidden sibling directory first and renamed to `out` at the end, so a
failure leaves nothing behind; `out` must not exist or be an empty directory (nothing is replaced).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

import torch

from qkv.core.hub.adapters import llama_export
from qkv.core.hub.adapters.gpt2 import QKV_TOKENIZER, to_hf
from qkv.core.io.files import write_text
from qkv.core.io.refusal import Refusal, family_title
from qkv.core.model import evaluating
from qkv.core.text.tokenizers.to_hf import to_hf_tokenizer

# The exported model is run once on a probe sequence against qkv's own: a safety net for a setting
# the GPT-2 mapping would carry over wrongly. Relative to the logits' size; the tests check 1e-5.
PROBE_TOKENS, PROBE_TOLERANCE = 64, 1e-4


def export_hf(model, tokenizer, out) -> Path:
    """Write `model` (a qkv GPT) and `tokenizer` as a Hugging Face directory `out`; returns its path."""
    out = Path(out)
    _check_target(out)
    _check_exportable(model, tokenizer)
    llama = llama_export.is_llama_layout(model.cfg)
    try:
        hf_model = llama_export.to_hf(model) if llama else to_hf(model)
    except ImportError:
        raise Refusal.of("hub.export_needs_hf") from None
    hf_tokenizer = to_hf_tokenizer(tokenizer)
    _check_same_logits(model, hf_model, "finetune.export_differs" if llama else "hub.export_differs")

    where = Path(os.path.abspath(out))  # "." or "" has no name and its parent is itself: use the real path
    # hidden, on out's file system: beside a new directory, inside an empty one that exists (which may be a
    # mount point, or sit in a folder this user cannot write)
    inside = where.is_dir()
    tmp = (where if inside else where.parent) / f".{where.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()  # (mkdtemp would make it private to the user; this keeps the umask's permissions)
    except OSError as e:
        raise Refusal.of("hub.export_cannot_write", out=out, reason=e.strerror or e) from None
    try:
        _quietly(hf_model.save_pretrained, tmp)
        if not any(tmp.glob("*.safetensors")):
            raise Refusal.of("hub.export_no_safetensors")
        hf_tokenizer.save(str(tmp / "tokenizer.json"))
        tokenizer.save(tmp / QKV_TOKENIZER)  # so `--ckpt out` reads it back as qkv's own tokenizer
        config = {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "model_max_length": model.cfg.n_ctx,
            "clean_up_tokenization_spaces": False,
        }  # decode must not touch spaces: qkv's decode does not
        write_text(tmp / "tokenizer_config.json", json.dumps(config, indent=2) + "\n")
        _move_into(tmp, where, out, inside)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _move_into(tmp: Path, where: Path, out: Path, inside: bool) -> None:
    """Put the written files at `where`: a new directory is tmp renamed (atomic); an empty directory
    that exists (perhaps the shell's current one) keeps its identity and gets the files moved in."""
    if not inside:
        try:
            os.replace(tmp, where)
            return
        except OSError:
            _check_target(out)  # made meanwhile: the usual one-line refusal, else the error itself
            raise
    if any(p != tmp for p in where.iterdir()):  # filled meanwhile
        raise Refusal.of("hub.export_not_empty", out=out)
    moved = []
    try:
        for f in sorted(tmp.iterdir(), key=lambda f: f.name == "config.json"):  # config.json, which marks it, last
            os.replace(f, where / f.name)
            moved.append(where / f.name)
    except BaseException:
        for f in moved:
            f.unlink(missing_ok=True)
        raise
    tmp.rmdir()


def _quietly(f, *args):
    """Call f without transformers' progress bars (the command prints its own line)."""
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return f(*args)
    finally:
        if shown:
            hf_logging.enable_progress_bar()


def _check_target(out: Path) -> None:
    above = next((p for p in out.absolute().parents if p.exists()), None)  # the nearest folder that exists
    if above is not None and not above.is_dir():
        raise Refusal.of("hub.export_above_file", out=out, above=above)
    if out.is_symlink() or out.exists() and not out.is_dir():
        raise Refusal.of("hub.export_file_or_link", out=out)
    if out.is_dir() and any(out.iterdir()):
        raise Refusal.of("hub.export_not_empty", out=out)


def _check_exportable(model, tokenizer) -> None:
    """What `to_hf` does not check itself: a model with no next-token head, and a vocabulary larger
    than the model's."""
    if not model.family.exports_hf:
        raise Refusal.of("hub.export_not_gpt", family=family_title(model.family))
    if tokenizer.vocab_size > model.cfg.d_vocab:
        raise Refusal.of("hub.export_vocab_larger", n=tokenizer.vocab_size, d_vocab=model.cfg.d_vocab)


def _check_same_logits(model, hf_model, differs: str) -> None:
    n = min(model.cfg.n_ctx, PROBE_TOKENS)
    ids = torch.randint(0, model.cfg.d_vocab, (1, n), generator=torch.Generator().manual_seed(0))
    with evaluating(model):
        with torch.no_grad():
            ours, theirs = model(ids.to(model.embed.weight.device)).cpu(), hf_model(ids).logits
    gap = (ours - theirs).abs().max().item()
    if not gap <= PROBE_TOLERANCE * max(1.0, ours.abs().max().item()):
        raise Refusal.of(differs, gap=f"{gap:.3g}")


__all__ = ["export_hf"]
