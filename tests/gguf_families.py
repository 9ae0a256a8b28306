"""Small GGUF files of the families beyond Llama's (test_gguf_families.py), written as llama.cpp's
converter writes each architecture: its metadata keys, its tensors under the names gguf's own name map
gives them, and what the converter does to them (Gemma's norms stored as 1 + w, GPT-2's Conv1D matrices
transposed, GPT-NeoX's query_key_value regrouped as q's heads, k's, v's; a tied unembedding left out,
GPT-2's written again as output.weight). The tokenizer and the quantisation are gguf_files.py's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from gguf_files import WIDTH, _blocks, _tokenizer, gguf, transformers

ARCH = {"phi3": "PHI3", "gemma2": "GEMMA2", "gemma3": "GEMMA3", "gpt2": "GPT2", "gptneox": "GPTNEOX", "olmo2": "OLMO2"}
COMMON = dict(vocab_size=None, bos_token_id=1, eos_token_id=2, pad_token_id=None)
LLAMA_LIKE = dict(
    hidden_size=WIDTH,
    intermediate_size=WIDTH,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=128,
    rms_norm_eps=1e-6,
)
GEMMA = {**LLAMA_LIKE, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 256, "sliding_window": 16}
FAMILIES = {  # GGUF architecture -> (config class, model class, fields)
    "phi3": ("Phi3Config", "Phi3ForCausalLM", {**LLAMA_LIKE, "original_max_position_embeddings": 128}),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", {**GEMMA, "query_pre_attn_scalar": 256}),
    "gemma3": (
        "Gemma3TextConfig",
        "Gemma3ForCausalLM",
        {**GEMMA, "num_hidden_layers": 6, "query_pre_attn_scalar": 256},
    ),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", dict(n_positions=1024, n_embd=WIDTH, n_layer=2, n_head=4)),
    "gptneox": (
        "GPTNeoXConfig",
        "GPTNeoXForCausalLM",
        dict(
            hidden_size=WIDTH,
            intermediate_size=4 * WIDTH,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=128,
            rotary_pct=0.25,
            layer_norm_eps=1e-5,
        ),
    ),
    "olmo2": ("Olmo2Config", "Olmo2ForCausalLM", LLAMA_LIKE),
}


def family_model(arch: str, vocab: int, seed: int = 0):
    """A random transformers model of GGUF architecture `arch` (seeded), its norms far from 1, in eval mode."""
    config_class, model_class, fields = FAMILIES[arch]
    config = getattr(transformers, config_class)(**{**COMMON, **fields, "vocab_size": vocab})
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = getattr(transformers, model_class)(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or name.split(".")[-2].startswith("ln"):
                p.uniform_(0.5, 1.5) if name.endswith("weight") else p.uniform_(-0.2, 0.2)
            elif name.endswith("bias"):
                p.uniform_(-0.2, 0.2)
            elif p.dim() == 2:
                p.normal_(0, 0.05)
    return model


def _metadata(w, arch: str, cfg) -> None:
    """The keys llama.cpp's converter writes for `arch`."""
    if arch == "gpt2":
        w.add_context_length(cfg.n_positions)
        w.add_embedding_length(cfg.n_embd)
        w.add_feed_forward_length(4 * cfg.n_embd)
        w.add_block_count(cfg.n_layer)
        w.add_head_count(cfg.n_head)
        w.add_layer_norm_eps(cfg.layer_norm_epsilon)
        return
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_head_count(cfg.num_attention_heads)
    d_head = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    if arch == "gptneox":
        w.add_rope_dimension_count(int(cfg.rope_parameters["partial_rotary_factor"] * d_head))
        w.add_parallel_residual(cfg.use_parallel_residual)
        w.add_layer_norm_eps(cfg.layer_norm_eps)
        return
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    if arch in ("gemma2", "gemma3"):
        w.add_key_length(d_head)
        w.add_value_length(d_head)
        w.add_sliding_window(cfg.sliding_window)
    if arch == "gemma2":
        w.add_attn_logit_softcapping(cfg.attn_logit_softcapping)
        w.add_final_logit_softcapping(cfg.final_logit_softcapping)
    if arch in ("phi3", "gemma3", "olmo2"):
        params = cfg.rope_parameters.get("full_attention", cfg.rope_parameters)
        w.add_rope_freq_base(float(params["rope_theta"]))
    if arch == "phi3":
        w.add_rope_scaling_orig_ctx_len(cfg.original_max_position_embeddings)
        w.add_rope_dimension_count(d_head)
        w.add_sliding_window(cfg.sliding_window or 0)


def _converted(arch: str, hf: str, a: np.ndarray, cfg) -> np.ndarray:
    """What llama.cpp's converter does to tensor `hf` of `arch` before writing it."""
    if arch in ("gemma2", "gemma3") and hf.endswith("norm.weight"):
        return a + 1
    if arch == "gpt2" and hf.endswith((".c_attn.weight", ".c_proj.weight", ".c_fc.weight")):
        return a.T
    if arch == "gptneox" and ".query_key_value." in hf:  # [h][q, k, v][d] -> [q, k, v][h][d]
        heads = cfg.num_attention_heads
        return a.reshape(heads, 3, -1, *a.shape[1:]).swapaxes(0, 1).reshape(a.shape)
    return a


def write_family(path: Path, model, arch: str, kind: str = "F32", tokenizer: str = "gpt2", name: str = "tiny", **more):
    """Write `model` as a GGUF file of architecture `arch`, its 2-D weights in `kind`; `more`: tensors
    (name -> float32 array) written after its own."""
    cfg = model.config
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    _metadata(w, arch, cfg)
    _tokenizer(w, tokenizer)
    w.add_pad_token_id(0)  # transformers' Phi3Config pads with 32000 otherwise, beyond a tiny vocabulary
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[ARCH[arch]], cfg.num_hidden_layers)
    rng = np.random.default_rng(0)
    for hf, p in model.state_dict().items():
        if hf == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        stem, suffix = hf.rsplit(".", 1)
        gguf_name = names.get_name(stem)
        if gguf_name is None:  # a buffer the converter skips
            continue
        a = np.ascontiguousarray(_converted(arch, hf, p.detach().float().numpy(), cfg))
        _add(w, f"{gguf_name}.{suffix}", a, kind, rng)
        if arch == "gpt2" and gguf_name == "token_embd":  # GPT-2's unembedding is W_E, written again
            _add(w, "output.weight", a, kind, rng)
    for extra, a in more.items():
        w.add_tensor(extra, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _add(w, name: str, a: np.ndarray, kind: str, rng) -> None:
    if a.ndim == 2 and kind != "F32":
        data, qtype = _blocks(a, kind, rng)
        w.add_tensor(name, data, raw_dtype=qtype)
    else:
        w.add_tensor(name, a)


def round_trip(model, kind: str):
    """`model` with every 2-D weight quantized to `kind` and back (row by row, as a GGUF file stores a
    Linear's (out, in) weight): the weights a file of that type holds, for types the gguf package writes."""
    qtype = gguf.GGMLQuantizationType[kind]
    with torch.no_grad():
        for _, p in model.named_parameters():
            if p.dim() == 2:
                a = p.detach().float().numpy()
                back = gguf.quants.dequantize(gguf.quants.quantize(a, qtype), qtype)
                p.copy_(torch.from_numpy(np.ascontiguousarray(back, dtype=np.float32)).view(p.shape))
    return model
