"""Small GGUF files for the tests (test_gguf*.py), written as llama.cpp's converter writes them.

A random transformers model of a family (width 256, so that every quantisation type's blocks, 256
numbers for the K types, fit a row; 2 layers; 4 heads, 2 of them key/value heads) is written with
gguf.GGUFWriter: its config as `{arch}.*` metadata, its tensors under llama.cpp's names, W_Q's and
W_K's rows of a "llama" file reordered as llama.cpp does (each head's rotated halves interleaved),
the 2-D weights in the quantisation type asked for and the norms in F32. Types the gguf package can
quantize are quantized from the weights; the K types (which it cannot) are valid random blocks whose
float16 scales are small. A tokenizer goes in the metadata: byte-level BPE ("gpt2") trained here, or
SentencePiece-style pieces with scores and byte pieces ("llama").
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()

from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType  # noqa: E402

TEXT = "hello world, the cat sat on the mat. the dog ate an apple. 我昨天吃了苹果。 Привет, мир!\n" * 40
SAMPLE = "Hello world, the cat 我昨天吃了苹果。 Привет мир! 12345 ½ 🙂 <|endoftext|> done\n\ttabs"
WIDTH = 256
CLASSES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "mistral": ("MistralConfig", "MistralForCausalLM"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"),
}
# the raw block of each K type: (bytes, offsets of its float16 scales, their size: weights of at most ~0.1)
K_BLOCKS = {
    "Q2_K": (84, (80, 82), 2e-3),
    "Q3_K": (110, (108,), 8e-4),
    "Q4_K": (144, (0, 2), 1e-4),
    "Q5_K": (176, (0, 2), 5e-5),
    "Q6_K": (210, (208,), 2.5e-5),
}
NAMES = {
    "embed_tokens.weight": "token_embd.weight",
    "norm.weight": "output_norm.weight",
    "input_layernorm.weight": "attn_norm.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "self_attn.q_norm": "attn_q_norm",
    "self_attn.k_norm": "attn_k_norm",
}


def bpe_vocab():
    """(tokens, merges, token types) of a byte-level BPE trained on TEXT, <|endoftext|> first (control)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
    )
    tok.train_from_iterator([TEXT], trainer=trainer)
    import json

    model = json.loads(tok.to_str())["model"]
    tokens = [t for t, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1])]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return tokens, merges, [3, 3, 3] + [1] * (len(tokens) - 3)


def piece_vocab():
    """(tokens, scores, token types) of SentencePiece-style pieces: <unk>, <s>, </s>, the 256 byte pieces,
    then pieces from a BPE trained on TEXT with ▁ for a space, best first (scores -1, -2, ...)."""
    from tokenizers import SentencePieceBPETokenizer

    sp = SentencePieceBPETokenizer()
    sp.train_from_iterator([TEXT], vocab_size=300, show_progress=False, limit_alphabet=60)
    named = ("<unk>", "<s>", "</s>")
    learned = [t for t, _ in sorted(sp.get_vocab().items(), key=lambda kv: kv[1]) if t not in named]
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + learned
    scores = [0.0] * 259 + [-float(i) for i in range(len(learned))]
    return tokens, scores, [2, 3, 3] + [6] * 256 + [1] * len(learned)


def random_model(family: str, vocab: int, seed: int = 0, **extra):
    """A random transformers model of `family` (seeded), its norms far from 1, in eval mode."""
    config_class, model_class = CLASSES[family]
    fields = dict(
        vocab_size=vocab,
        hidden_size=WIDTH,
        intermediate_size=WIDTH,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        initializer_range=0.05,
        rms_norm_eps=1e-6,
        attn_implementation="eager",
    )
    config = getattr(transformers, config_class)(**{**fields, **extra})
    torch.manual_seed(seed)
    model = getattr(transformers, model_class)(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
            elif name.endswith("bias"):
                p.uniform_(-0.2, 0.2)
    return model


def llama_cpp_order(w: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's converter's reordering of W_Q's or W_K's rows (or a bias): in each head, the two
    halves of every rotated pair next to each other."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _blocks(w: np.ndarray, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, GGMLQuantizationType]:
    qtype = GGMLQuantizationType[kind]
    if kind not in K_BLOCKS:
        return gguf.quants.quantize(w, qtype), qtype
    size, scales, d = K_BLOCKS[kind]
    rows, n = w.shape[0], w.shape[1] // 256
    raw = rng.integers(0, 256, (rows, n, size), dtype=np.uint8)
    for at in scales:
        scale = rng.uniform(d / 2, d, (rows, n)).astype(np.float16)
        raw[:, :, at : at + 2] = scale.view(np.uint8).reshape(rows, n, 2)
    return raw.reshape(rows, n * size), qtype


def gguf_name(hf: str) -> str:
    hf = hf.removeprefix("model.")
    if hf == "lm_head.weight":
        return "output.weight"
    if hf in NAMES:
        return NAMES[hf]
    _, i, rest = hf.split(".", 2)
    for theirs, ours in NAMES.items():
        if rest.startswith(theirs):
            return f"blk.{i}.{ours}{rest[len(theirs) :]}"
    raise KeyError(hf)


def write_gguf(path: Path, model, arch: str, kind: str = "F32", tokenizer: str = "gpt2", name: str = "tiny", **md):
    """Write `model` as a GGUF file of architecture `arch`, its 2-D weights in `kind`."""
    cfg = model.config
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_freq_base(float(getattr(cfg, "rope_theta", None) or cfg.rope_parameters["rope_theta"]))
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    d_head = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    if arch == "qwen3":
        w.add_key_length(d_head)
        w.add_value_length(d_head)
    else:
        w.add_rope_dimension_count(d_head)
    _tokenizer(w, tokenizer, **md)
    rng = np.random.default_rng(0)
    for hf, p in model.state_dict().items():
        if hf == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        a = p.detach().float().numpy()
        if arch == "llama" and (".q_proj." in hf or ".k_proj." in hf):
            a = llama_cpp_order(a, cfg.num_attention_heads if ".q_proj." in hf else cfg.num_key_value_heads)
        if a.ndim == 2 and kind != "F32":
            data, qtype = _blocks(a, kind, rng)
            w.add_tensor(gguf_name(hf), data, raw_dtype=qtype)
        else:
            w.add_tensor(gguf_name(hf), np.ascontiguousarray(a))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _tokenizer(w, kind: str, pre: str = "default", add_bos: bool | None = None, template: str | None = None):
    if kind == "gpt2":
        tokens, merges, types = bpe_vocab()
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre(pre)
        w.add_token_list(tokens)
        w.add_token_merges(merges)
        w.add_token_types(types)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_eot_token_id(0)
    else:
        tokens, scores, types = piece_vocab()
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)
    if add_bos is not None:
        w.add_add_bos_token(add_bos)
    if template is not None:
        w.add_chat_template(template)


def vocab_size(tokenizer: str) -> int:
    return len(bpe_vocab()[0] if tokenizer == "gpt2" else piece_vocab()[0])


def row_bytes(kind: str, n: int) -> int:
    block, size = GGML_QUANT_SIZES[GGMLQuantizationType[kind]]
    return n // block * size
