"""How large a model is before it is built: every weight's shape from the config, its bytes in the
dtype it is loaded in, and the memory this machine has for them.

A config whose fields are each within bounds can still describe terabytes: GPT-2 with n_layer 1024
and n_embd 4096 has 206 billion parameters, 825 GB as float32. Building it allocates until the
allocator fails or the OOM killer ends the process (and whatever else runs beside it). `check_fits`
refuses such a config in one line before anything is allocated, and the loaders compare a weight
file's header (names and shapes, no data) with `param_shapes` before they build the model.

`param_shapes` follows the modules (model/gpt.py, encoder.py, seq2seq.py and model/nn/): the tests build
every family and variant and compare it with `named_parameters()`, name for name.
"""

from __future__ import annotations

import math

from qkv.core.hub.weights import SAFETENSORS_FLOATS
from qkv.core.io.files import format_bytes
from qkv.core.io.refusal import Refusal
from qkv.core.machine.memory import available_memory
from qkv.core.spec.config import ModelConfig

DTYPES = {"float32": 4, "bfloat16": 2}  # the dtypes a model is loaded in, and the bytes of one number
FLOAT_DTYPES = tuple(SAFETENSORS_FLOATS)  # safetensors' names of the float types the loaders read


class _Shapes(dict):
    """name -> shape, filled module by module as the model's constructors make them (nn.Linear's (out, in))."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg

    def linear(self, name: str, d_in: int, d_out: int, bias: bool) -> None:
        self[name + ".weight"] = (d_out, d_in)
        if bias:
            self[name + ".bias"] = (d_out,)

    def layer_norm(self, name: str, always: bool = False) -> None:
        cfg = self.cfg
        if always or cfg.norm != "none":  # norm="none": the identity, no parameters
            self[name + ".weight"] = (cfg.d_model,)
            if cfg.bias and cfg.norm != "rms":  # RMSNorm has no shift
                self[name + ".bias"] = (cfg.d_model,)

    def attention(self, name: str, layer: int = 0) -> None:
        cfg, d = self.cfg, self.cfg.d_model
        d_attn, d_kv = cfg.n_heads * cfg.d_head, cfg.n_kv_heads * cfg.d_head
        self.linear(name + ".W_QKV", d, d_attn + (2 if cfg.values == "v" else 1) * d_kv, cfg.qkv_bias)  # "k": no W_V
        self.linear(name + ".W_O", d_attn, d, cfg.bias)
        if cfg.qk_norm and cfg.qk_norm_width == "all":  # OLMo-2: over the whole projection
            self[name + ".q_norm.weight"], self[name + ".k_norm.weight"] = (d_attn,), (d_kv,)
        elif cfg.qk_norm:
            self[name + ".q_norm.weight"] = self[name + ".k_norm.weight"] = (cfg.d_head,)
        if layer < cfg.value_embeds:  # the speedrun's value embedding: a table and its mix λ (nn/value_embed.py)
            self[name + ".value_embed.mix"], self[name + ".value_embed.table.weight"] = (), (cfg.d_vocab, d_kv)

    def blocks(self, prefix: str, n: int, cross: bool = False) -> None:
        cfg, d = self.cfg, self.cfg.d_model
        for i in range(n):
            p = f"{prefix}blocks.{i}."
            if cfg.norm_placement != "output":  # OLMo-2's blocks have no norm before a sub-layer
                self.layer_norm(p + "ln1")
            if cfg.norm_placement != "pre":  # Gemma's and OLMo-2's norms after each sub-layer (nn/sandwich.py)
                self.layer_norm(p + "ln1_post")
                self.layer_norm(p + "ln2_post")
            self.attention(p + "attn", i)
            if cfg.mlp != "none":  # an attention-only block has no ln2 and no MLP
                if cfg.norm_placement != "output":
                    self.layer_norm(p + "ln2")
                if cfg.mlp == "gated":
                    self.linear(p + "mlp.fc_gate", d, cfg.d_mlp, cfg.bias)
                self.linear(p + "mlp.fc_in", d, cfg.d_mlp, cfg.bias)
                self.linear(p + "mlp.fc_out", cfg.d_mlp, d, cfg.bias)
            if cross:  # a decoder block: cross-attention, and ln3 before the MLP
                self.attention(p + "cross_attn")
                self.layer_norm(p + "ln3")


def param_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """name -> shape of each of the model's parameters, as named_parameters() gives them: a tied
    unembedding is W_E, so it is not listed again (nor stored in a checkpoint)."""
    d, V = cfg.d_model, cfg.d_vocab
    shapes = _Shapes(cfg)
    shapes["embed.weight"] = (V, d)
    learned = cfg.pos == "learned"  # sinusoidal tables (buffers) and RoPE's angles are rebuilt, not stored
    if cfg.arch == "seq2seq":
        assert cfg.n_encoder_layers is not None  # ModelConfig fills it for seq2seq
        if not cfg.share_embeddings:
            shapes["src_embed.weight"] = (V, d)
        if learned:
            shapes["pos_embed.W_pos"] = shapes["src_pos_embed.W_pos"] = (cfg.n_ctx, d)
        shapes.blocks("encoder.", cfg.n_encoder_layers)
        shapes.layer_norm("encoder.ln_final")
        shapes.blocks("decoder.", cfg.n_layers, cross=True)
        shapes.layer_norm("decoder.ln_final")
    else:
        if learned:
            shapes["pos_embed.W_pos"] = (cfg.n_ctx, d)
        if cfg.arch == "bert":
            if cfg.n_token_types:
                shapes["token_type_embed.weight"] = (cfg.n_token_types, d)
            shapes.layer_norm("ln_embed", always=True)
        shapes.blocks("", cfg.n_layers)
        if cfg.arch == "gpt" and cfg.pre_norm:  # a post-norm block already ends in a LayerNorm
            shapes.layer_norm("ln_final")
    if cfg.arch != "bert":
        if not cfg.tie_embeddings:
            shapes["unembed.weight"] = (V, d)
        if cfg.unembed_bias:
            shapes["unembed.bias"] = (V,)
    return dict(shapes)


def param_count(cfg: ModelConfig) -> int:
    """sum(p.numel() for p in make_model(cfg).parameters()), without building it."""
    return sum(math.prod(s) for s in param_shapes(cfg).values())


def buffer_count(cfg: ModelConfig) -> int:
    """The numbers in the model's fixed tables (buffers): sinusoidal positions. (RoPE keeps its
    frequencies and the cos and sin of the positions a text reaches outside the buffers: nn.position.RoPE.)"""
    tables = {"gpt": 1, "bert": 1, "seq2seq": 2}[cfg.arch]  # position modules (Seq2Seq: source and target)
    if cfg.pos == "sinusoidal":
        return tables * cfg.n_ctx * cfg.d_model
    return 0


def check_fits(cfg: ModelConfig, source, dtype: str = "float32") -> None:
    """Refuse (a catalogued refusal, one line naming `source`, the config's file) a model whose weights (in `dtype`)
    and tables cannot fit in the memory available. Only what surely cannot fit is refused: no headroom
    is asked for, since the loaders read a weight file tensor by tensor with plain reads and need
    little beyond the model itself; a model just under the limit may still run short later (activations,
    a KV cache), and that is the allocator's one-line error, not a machine brought down."""
    n, tables = param_count(cfg), buffer_count(cfg)
    need, have = DTYPES[dtype] * n + 4 * tables, available_memory()
    if have is not None and need > have:
        raise Refusal.of(
            "hub.too_large_tables" if tables else "hub.too_large",
            **({"tables": f"{tables:,}"} if tables else {}),
            source=source,
            n=f"{n:,}",
            need=format_bytes(need),
            dtype=dtype,
            have=format_bytes(have),
        )
