"""Configuration: ModelConfig (the network's shape), TrainConfig (how to train it), PRESETS.

Both are validated dataclasses: a bad value raises ValueError with a one-line message that names
the field and the value. `apply_overrides` checks `--set key=value` pairs against field names
and types, so a typo is an error, never a silently ignored option.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from qkv.core.io.refusal import Refusal
from qkv.core.spec.family import FAMILIES, OWNED_FIELDS
from qkv.core.spec.speedrun import check_model_switches, check_train_switches

# The choices of a ModelConfig, each a type (a Literal) ...
Arch = Literal["gpt", "bert", "seq2seq"]  # the keys of FAMILIES (tests/test_config.py checks)
Pos = Literal["learned", "sinusoidal", "rope", "none"]
Norm = Literal["pre", "post", "rms", "none"]
Values = Literal["v", "k"]
Activation = Literal["gelu", "gelu_tanh", "relu", "silu", "relu2"]  # relu2: relu(x)^2 (the speedrun)
Mlp = Literal["plain", "gated", "none"]
RopeLayout = Literal["adjacent", "halves"]
NormPlacement = Literal["pre", "sandwich", "output"]  # Gemma / OLMo-2 (checked by _check_gemma_olmo)
QkNormWidth = Literal["head", "all"]

# ... and the one table of what each field allows, which ModelConfig.__post_init__ checks (in this order)
CHOICES: dict[str, tuple[str, ...]] = {
    "arch": typing.get_args(Arch),
    "pos": typing.get_args(Pos),
    "norm": typing.get_args(Norm),
    "values": typing.get_args(Values),
    "activation": typing.get_args(Activation),
    "mlp": typing.get_args(Mlp),
    "rope_layout": typing.get_args(RopeLayout),
}
# the names earlier versions exported
ARCHS, POS_KINDS, NORM_KINDS = CHOICES["arch"], CHOICES["pos"], CHOICES["norm"]
VALUE_KINDS, ACTIVATIONS, MLP_KINDS, ROPE_LAYOUTS = (CHOICES[k] for k in ("values", "activation", "mlp", "rope_layout"))
ROPE_SCALING_FIELDS = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")

# A field that __post_init__ fills in when it is None (d_head, d_mlp, n_kv_heads, qkv_bias, embed_scale) is
# declared `Resolved[T] = AUTO`: the constructor, from_dict and `--set key=none` take a T or None, and once
# the config is built the field always holds a T. At run time Resolved[T] is just `T | None` and AUTO is None,
# so the dataclass, its JSON and get_type_hints are those of a plain optional field. For the type checker
# Resolved[T] is a descriptor that is set with `T | None` and reads as T, which is what the rest of qkv relies on
# (inside __post_init__, before the fill, the checker's T is a step ahead of the truth).
_T = TypeVar("_T")
if TYPE_CHECKING:

    class Resolved(Generic[_T]):
        @overload
        def __get__(self, obj: None, owner: Any) -> Resolved[_T]: ...
        @overload
        def __get__(self, obj: object, owner: Any) -> _T: ...
        def __get__(self, obj: object, owner: Any) -> _T | Resolved[_T]: ...
        def __set__(self, obj: object, value: _T | None) -> None: ...

    AUTO: Any = None
else:

    class Resolved:
        def __class_getitem__(cls, item):
            return item | None

    AUTO = None


def _check_choice(name: str, value, choices) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def _check_int(name: str, value, low: int = 1, high: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer; got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"between {low} and {high}"
        raise ValueError(f"{name} must be {bound}; got {value}")


def _check_float(name: str, value, low: float, high: float, high_open: bool = False) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
        raise ValueError(f"{name} must be a number; got {value!r}")
    if value < low or value > high or (high_open and value == high):
        interval = f"[{low}, {high})" if high_open else f"[{low}, {high}]"
        raise ValueError(f"{name} must be in {interval}; got {value}")


@dataclass
class ModelConfig:
    """The shape of a Transformer: a decoder-only GPT (arch="gpt") or a BERT encoder (arch="bert").

    d_head defaults to d_model // n_heads and d_mlp to 4 * d_model. `pos` picks the positional
    encoding, `norm` where LayerNorm sits (pre: x + f(LN(x)); post: LN(x + f(x)); none: no
    LayerNorm at all). Two switches exist for experiments: `residual=False` drops the residual
    connections (x = f(LN(x))), and `values="k"` makes attention mix the keys (z = A k, no W_V).
    `embed_scale` multiplies the token embeddings by sqrt(d_model) before positions are added, as
    the 2017 paper does; None means "as the paper" for sinusoidal positions and off otherwise. A
    saved config without the field (written before it existed) loads with it off (from_dict).
    The parts of today's open LLMs (Llama, Mistral, Qwen2, Qwen3) are switches of a GPT: `mlp="gated"`
    (SwiGLU: (act(x W_gate) * x W_in) W_out, with activation="silu"), `n_kv_heads` (grouped-query
    attention: n_heads / n_kv_heads query heads share each key/value head; None: n_heads),
    `rope_layout` ("adjacent": rotate pairs (x_2i, x_2i+1); "halves": pairs (x_i, x_i+d_head/2), as
    Llama), `rope_scaling` (Llama 3's stretch of the slow frequencies: a dict of ROPE_SCALING_FIELDS),
    `qkv_bias` (biases on q, k, v only; None: as `bias`) and `qk_norm` (an RMSNorm over each head's q
    and k, as Qwen3). `mlp="none"` makes an attention-only model (x = x + Attn(LN1(x)) per block, no
    MLP), the toy model of the induction-heads papers.
    arch="bert" builds qkv.core.model.encoder.Encoder: the same blocks, plus `n_token_types`
    segment embeddings and a LayerNorm over the embeddings, and no unembedding (it outputs hidden
    states); BERT runs it with causal=False and norm="post".
    arch="seq2seq" builds qkv.core.model.seq2seq.Seq2Seq, an encoder-decoder (translation): an
    encoder of `n_encoder_layers` blocks (None: as many as the decoder) and a decoder of `n_layers`
    blocks with cross-attention; `share_embeddings` gives source and target one embedding table.
    GPT-NeoX / Pythia and Phi-3 add two switches of a GPT: `parallel_attn_mlp` (attention and MLP
    both read the block's input: x = x + Attn(LN1(x)) + MLP(LN2(x)), one residual sum per block, no
    resid_mid; pre-norm, residual, with an MLP) and `rotary_dim` (partial RoPE: only the first
    rotary_dim dimensions of each head's q and k are rotated, at frequencies base^(-2i/rotary_dim);
    the rest pass unchanged; even, at most d_head; None: d_head, the whole head; pos="rope" only).
    Phi-3's LongRoPE, as read for texts up to its original context: `rope_factors` (rotary_dim / 2
    numbers: theta_i is divided by rope_factors[i]; `--set rope_factors=1,1.5,...`) and
    `rope_attention_factor` (cos and sin multiplied by it, so the rotated part of q and k grows).
    Gemma 2 / Gemma 3 and OLMo-2 add switches of a GPT (the fields after `# Gemma / OLMo-2`):
    `norm_placement` ("pre": the norm before each sub-layer only; "sandwich": x = x + LN1_post(Attn(LN1(x))),
    x = x + LN2_post(MLP(LN2(x))), as Gemma; "output": x = x + LN1_post(Attn(x)), x = x + LN2_post(MLP(x)),
    as OLMo-2), `attn_scale` (scores = q k^T / attn_scale; None: sqrt(d_head); Gemma:
    sqrt(query_pre_attn_scalar)), `attn_scores_soft_cap` (scores = cap * tanh(scores / cap) before the
    mask: Gemma 2's attention soft-capping; None: off), `output_logits_soft_cap` (the same on the logits),
    `sliding_window` (a sliding-window layer's query at position i reads keys i - sliding_window + 1 .. i
    only), `layer_types` (which layers slide: one letter a layer, "l" sliding-window (local), "g" global,
    repeated over the layers as needed: Gemma 2 "lg", Gemma 3 "lllllg"; None: every layer slides when
    sliding_window is set), `rope_base_local` (RoPE's base on sliding-window layers; None: rope_base;
    Gemma 3: 10,000 there, 1,000,000 on global layers), `rope_linear_factor` (global layers' positions
    divided by it: RoPE's linear scaling, Gemma 3's rope_scaling; 1: none) and `qk_norm_width` (with
    qk_norm: "head" normalises each head's q and k over d_head, as Qwen3 and Gemma 3; "all" the whole
    projection, n_heads * d_head wide, before it is split into heads, as OLMo-2).
    The speedrun's switches of a GPT (modded-nanogpt; docs/training.md, spec/speedrun.py checks them):
    `activation="relu2"` (relu(x)^2), `qk_norm`, `output_logits_soft_cap`, `tie_embeddings=False` (above), and
    `zero_init` (W_O and the MLP's W_out start at 0, so each block starts as the identity: x + 0) and
    `value_embeds` (the first N layers each have a table VE of one row per token, mixed into the values:
    v = (1 - λ) v + λ VE[token], λ learned, 0.5 at first).
    """

    arch: Arch = "gpt"

    d_vocab: int = 256
    n_ctx: int = 64
    d_model: int = 128
    n_heads: int = 4
    d_head: Resolved[int] = AUTO
    n_layers: int = 4
    d_mlp: Resolved[int] = AUTO
    pos: Pos = "learned"
    norm: Norm = "pre"
    causal: bool = True
    residual: bool = True
    values: Values = "v"
    dropout_embed: float = 0.0
    dropout_resid: float = 0.0
    dropout_attn: float = 0.0
    bias: bool = True  # biases of the attention/MLP projections and of LayerNorm
    unembed_bias: bool = True  # the b in softmax(h W_out + b)
    tie_embeddings: bool = False  # W_out = W_E^T
    activation: Activation = "gelu"
    mlp: Mlp = "plain"  # "gated": SwiGLU's (act(x W_gate) * x W_in) W_out; "none": attention only
    n_kv_heads: Resolved[int] = AUTO  # grouped-query attention: key/value heads (None: n_heads)
    rope_layout: RopeLayout = "adjacent"  # "halves": rotate (x_i, x_{i + d_head/2}), as Llama and Qwen
    rope_scaling: dict | None = None  # Llama 3's: factor, low/high_freq_factor, original_max_position_embeddings
    qkv_bias: Resolved[bool] = AUTO  # biases of q, k, v (None: as bias); Qwen2: true with bias false
    qk_norm: bool = False  # an RMSNorm over each head's q and k before RoPE (Qwen3)
    embed_scale: Resolved[bool] = AUTO  # x = sqrt(d_model) * W_E[ids] + PE; None: True for pos="sinusoidal"
    ln_eps: float = 1e-5
    rope_base: float = 10000.0
    init_std: float = 0.02
    n_token_types: int = 0  # arch="bert": segment embeddings (sentence A / B); BERT has 2
    n_encoder_layers: int | None = None  # arch="seq2seq": the encoder's blocks (None: n_layers)
    share_embeddings: bool = False  # arch="seq2seq": the source and target tokens share W_E
    # GPT-NeoX / Phi-3
    parallel_attn_mlp: bool = False  # x = x + Attn(LN1(x)) + MLP(LN2(x)): both read x (GPT-NeoX, Pythia)
    rotary_dim: Resolved[int] = AUTO  # RoPE on each head's first rotary_dim dims only (None: d_head)
    rope_factors: list[float] | None = None  # LongRoPE (Phi-3): theta_i / rope_factors[i], rotary_dim / 2 of them
    rope_attention_factor: float = 1.0  # LongRoPE: RoPE's cos and sin multiplied by it
    # Gemma / OLMo-2 (see the docstring; each off by default)
    norm_placement: NormPlacement = "pre"  # "sandwich": norms before and after each sub-layer; "output": after only
    attn_scale: float | None = None  # scores = q k^T / attn_scale (None: sqrt(d_head))
    attn_scores_soft_cap: float | None = None  # scores = cap * tanh(scores / cap) (Gemma 2: 50)
    output_logits_soft_cap: float | None = None  # logits = cap * tanh(logits / cap) (Gemma 2: 30)
    sliding_window: int | None = None  # a sliding-window layer reads only this many keys: its own and those before
    layer_types: str | None = None  # "l" (sliding) or "g" (global) per layer, repeated: Gemma 2 "lg"
    rope_base_local: float | None = None  # RoPE's base on sliding-window layers (None: rope_base)
    rope_linear_factor: float = 1.0  # global layers' RoPE frequencies divided by it (linear scaling)
    qk_norm_width: QkNormWidth = "head"  # "all": q/k norm over n_heads * d_head, before the heads are split
    # the speedrun's (see the docstring; each off by default)
    zero_init: bool = False  # W_O and the MLP's W_out start at zero
    value_embeds: int = 0  # the first N layers: v = (1 - λ) v + λ VE[token]

    def __post_init__(self) -> None:
        _check_choice("arch", self.arch, CHOICES["arch"])
        family = FAMILIES[self.arch]
        self._check_sizes(family)
        self._check_family_fields(family)
        self._check_head_and_mlp()
        for name, allowed in CHOICES.items():
            if name != "arch":
                _check_choice(name, getattr(self, name), allowed)
        self._check_kv_heads()
        _check_rope_scaling(self.rope_scaling)
        self._check_parts(family)
        self._check_switches()
        self._check_neox_phi3(family)
        self._check_gemma_olmo(family)
        check_model_switches(self, family)

    def _check_sizes(self, family) -> None:
        """The counts: vocabulary, context, widths, heads, layers (n_encoder_layers: as n_layers by default)."""
        _check_int("n_token_types", self.n_token_types, 0, 1024)
        _check_int("d_vocab", self.d_vocab, 1, 10_000_000)
        _check_int("n_ctx", self.n_ctx, 1, 1_000_000)
        _check_int("d_model", self.d_model, 1, 65536)
        _check_int("n_heads", self.n_heads, 1, 4096)
        _check_int("n_layers", self.n_layers, 1, 1024)
        if "n_encoder_layers" in family.fields and self.n_encoder_layers is None:
            self.n_encoder_layers = self.n_layers
        if self.n_encoder_layers is not None:
            _check_int("n_encoder_layers", self.n_encoder_layers, 1, 1024)

    def _check_family_fields(self, family) -> None:
        """A field another family owns stays at its default; what the family needs is set."""
        for name in OWNED_FIELDS:
            if name not in family.fields and getattr(self, name) != self.__dataclass_fields__[name].default:
                owners = " or ".join(f"arch={f.arch!r}" for f in FAMILIES.values() if name in f.fields)
                raise ValueError(f"{name} is for {owners}; {family.title} has none (got {getattr(self, name)!r})")
        for name, why in family.needs:
            if getattr(self, name) is not True:
                raise ValueError(f"{family.title} needs {name}=true ({why}); got {getattr(self, name)!r}")

    def _check_head_and_mlp(self) -> None:
        """d_head (default d_model // n_heads) and d_mlp (default 4 * d_model)."""
        if self.d_head is None:
            if self.d_model % self.n_heads:
                raise ValueError(
                    f"d_model ({self.d_model}) is not divisible by n_heads ({self.n_heads}); "
                    "change one of them or set d_head explicitly"
                )
            self.d_head = self.d_model // self.n_heads
        _check_int("d_head", self.d_head, 1, 65536)
        if self.d_mlp is None:
            self.d_mlp = 4 * self.d_model
        _check_int("d_mlp", self.d_mlp, 1, 1 << 20)

    def _check_kv_heads(self) -> None:
        """n_kv_heads (default n_heads) divides n_heads; qkv_bias defaults to bias."""
        if self.n_kv_heads is None:
            self.n_kv_heads = self.n_heads
        _check_int("n_kv_heads", self.n_kv_heads, 1, self.n_heads)
        if self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"n_heads ({self.n_heads}) must be a multiple of n_kv_heads ({self.n_kv_heads}): "
                "each key/value head serves a group of query heads of one size"
            )
        if self.qkv_bias is None:
            self.qkv_bias = self.bias

    def _check_parts(self, family) -> None:
        """The LLM parts only where the family has them; an attention-only block is pre-norm and residual."""
        if not family.llm_parts:  # the encoder and the encoder-decoder are built of the 2017 paper's parts
            used = {
                "norm='rms'": self.norm == "rms",
                f"mlp={self.mlp!r}": self.mlp != "plain",
                "n_kv_heads": self.n_kv_heads != self.n_heads,
                "rope_layout='halves'": self.rope_layout != "adjacent",
                "rope_scaling": self.rope_scaling is not None,
                "qkv_bias": self.qkv_bias != self.bias,
                "qk_norm": self.qk_norm,
            }
            if any(used.values()):
                raise ValueError(f"{next(k for k, v in used.items() if v)} is for a GPT; {family.title} has none")
        if self.mlp == "none" and (self.norm == "post" or not self.residual):
            raise ValueError(
                "mlp='none' (attention only) is a block of pre-norm residual connections: x = x + Attn(LN1(x))"
            )

    def _check_switches(self) -> None:
        """Dropout rates, the boolean switches (embed_scale: by default on for sinusoidal positions), the floats."""
        for name in ("dropout_embed", "dropout_resid", "dropout_attn"):
            _check_float(name, getattr(self, name), 0.0, 1.0, high_open=True)
        if self.embed_scale is None:
            self.embed_scale = self.pos == "sinusoidal"
        booleans = ("causal", "residual", "bias", "unembed_bias", "tie_embeddings", "embed_scale", "share_embeddings")
        for name in (*booleans, "qkv_bias", "qk_norm"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false; got {getattr(self, name)!r}")
        _check_float("ln_eps", self.ln_eps, 0.0, 1.0)
        _check_float("rope_base", self.rope_base, 1.0, 1e12)
        _check_float("init_std", self.init_std, 0.0, 10.0)
        if self.pos == "rope" and self.d_head % 2:
            raise ValueError(f"pos='rope' rotates pairs of dimensions, so d_head must be even; got {self.d_head}")

    def _check_neox_phi3(self, family) -> None:
        """parallel_attn_mlp: a GPT's pre-norm residual block with an MLP; rotary_dim (default d_head): even,
        from 2 to d_head, and less than d_head only with pos="rope"."""
        if not isinstance(self.parallel_attn_mlp, bool):
            raise ValueError(f"parallel_attn_mlp must be true or false; got {self.parallel_attn_mlp!r}")
        if self.parallel_attn_mlp and (not family.llm_parts or self.norm == "post"):
            raise ValueError(f"parallel_attn_mlp is for a pre-norm GPT; got arch={self.arch!r}, norm={self.norm!r}")
        if self.parallel_attn_mlp and (self.mlp == "none" or not self.residual):
            raise ValueError(
                "parallel_attn_mlp adds attention and MLP to one residual stream: needs an MLP and residual"
            )
        if self.rotary_dim is None:
            self.rotary_dim = self.d_head
        _check_int("rotary_dim", self.rotary_dim, 1, self.d_head)
        if self.rotary_dim != self.d_head and (self.pos != "rope" or self.rotary_dim % 2):
            raise ValueError(
                f"rotary_dim rotates pairs of RoPE's dimensions: pos='rope', an even number; got {self.rotary_dim}"
            )
        self._check_longrope()

    def _check_longrope(self) -> None:
        """rope_factors: None or rotary_dim / 2 positive numbers (a list, or from --set the text "1,1.5,...");
        rope_attention_factor a positive number; either one only with pos="rope"."""
        if isinstance(self.rope_factors, str):  # `--set rope_factors=1,1.5,2`
            try:
                self.rope_factors = [float(x) for x in self.rope_factors.split(",")]
            except ValueError:
                raise ValueError(
                    f"rope_factors must be numbers separated by commas; got {self.rope_factors!r}"
                ) from None
        _check_float("rope_attention_factor", self.rope_attention_factor, 1e-3, 100.0)
        if self.rope_factors is None:
            if self.rope_attention_factor != 1.0 and self.pos != "rope":
                raise ValueError("rope_attention_factor scales RoPE's cos and sin: it needs pos='rope'")
            return
        pairs = self.rotary_dim // 2
        if self.pos != "rope" or not isinstance(self.rope_factors, list) or len(self.rope_factors) != pairs:
            raise ValueError(f"rope_factors must be {pairs} numbers (one per rotated pair) with pos='rope'")
        for i, factor in enumerate(self.rope_factors):
            _check_float(f"rope_factors[{i}]", factor, 1e-6, 1e9)
        self.rope_factors = [float(f) for f in self.rope_factors]

    @property
    def pre_norm(self) -> bool:
        """The blocks normalise before each sub-layer (LayerNorm or RMSNorm), so the stack ends in a final norm."""
        return self.norm in ("pre", "rms")

    @property
    def group(self) -> int:
        """How many query heads read each key/value head (1: ordinary multi-head attention)."""
        return self.n_heads // self.n_kv_heads

    def to_dict(self) -> dict:
        """The fields as saved; n_kv_heads and qkv_bias as None where they follow n_heads and bias (so a
        config edited by hand, n_heads changed, still means what it says)."""
        d = dataclasses.asdict(self)
        if self.n_kv_heads == self.n_heads:
            d["n_kv_heads"] = None
        if self.qkv_bias == self.bias:
            d["qkv_bias"] = None
        if self.rotary_dim == self.d_head:
            d["rotary_dim"] = None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ModelConfig:
        """A config as saved by to_dict. One saved before embed_scale existed keeps its unscaled embeddings."""
        if isinstance(d, dict) and "embed_scale" not in d:
            d = {**d, "embed_scale": False}
        return _from_dict(cls, d)

    def _check_gemma_olmo(self, family) -> None:
        """The Gemma / OLMo-2 switches: each a GPT's only, each within its bounds."""
        _check_choice("norm_placement", self.norm_placement, typing.get_args(NormPlacement))
        _check_choice("qk_norm_width", self.qk_norm_width, typing.get_args(QkNormWidth))
        if self.norm_placement != "pre" and self.parallel_attn_mlp:
            raise ValueError(
                f"parallel_attn_mlp has norms before its sub-layers only; got norm_placement={self.norm_placement!r}"
            )
        for name in ("attn_scale", "attn_scores_soft_cap", "output_logits_soft_cap", "rope_base_local"):
            if getattr(self, name) is not None:
                _check_float(name, getattr(self, name), 1e-6, 1e12)
        _check_float("rope_linear_factor", self.rope_linear_factor, 1e-6, 1e9)
        if self.sliding_window is not None:
            _check_int("sliding_window", self.sliding_window, 1, 10_000_000)
        if self.layer_types is not None:
            if not isinstance(self.layer_types, str) or not self.layer_types or set(self.layer_types) - set("lg"):
                raise ValueError(
                    f"layer_types must be letters l (sliding window) and g (global); got {self.layer_types!r}"
                )
            if "l" in self.layer_types and self.sliding_window is None:
                raise ValueError(
                    "layer_types has sliding-window layers (l); set sliding_window, how many keys they read"
                )
        if self.norm_placement != "pre" and (
            self.norm not in ("pre", "rms") or self.mlp == "none" or not self.residual
        ):
            raise ValueError(
                f"norm_placement={self.norm_placement!r} puts norms around residual sub-layers: it needs norm 'pre' or "
                "'rms', an MLP and residual connections"
            )
        used = [n for n in self.GEMMA_OLMO_FIELDS if getattr(self, n) != self.__dataclass_fields__[n].default]
        if used and not family.llm_parts:
            raise ValueError(f"{used[0]} is for a GPT; {family.title} has none")

    GEMMA_OLMO_FIELDS = (
        "norm_placement",
        "attn_scale",
        "attn_scores_soft_cap",
        "output_logits_soft_cap",
        "sliding_window",
        "layer_types",
        "rope_base_local",
        "rope_linear_factor",
        "qk_norm_width",
    )

    def slides(self, layer: int) -> bool:
        """Layer `layer` attends within a sliding window: sliding_window is set and layer_types (repeated) says "l"."""
        if self.sliding_window is None:
            return False
        return self.layer_types is None or self.layer_types[layer % len(self.layer_types)] == "l"


def _check_rope_scaling(scaling) -> None:
    """None, or Llama 3's RoPE scaling: every field of ROPE_SCALING_FIELDS a positive number, high > low."""
    if scaling is None:
        return
    if not isinstance(scaling, dict) or set(scaling) != set(ROPE_SCALING_FIELDS):
        raise ValueError(f"rope_scaling must be null or an object of {', '.join(ROPE_SCALING_FIELDS)}; got {scaling!r}")
    for name in ROPE_SCALING_FIELDS:
        _check_float(f"rope_scaling.{name}", scaling[name], 1e-6, 1e9)
    if scaling["high_freq_factor"] <= scaling["low_freq_factor"]:
        raise ValueError("rope_scaling.high_freq_factor must exceed low_freq_factor")


@dataclass
class TrainConfig:
    """How to train: AdamW, linear warmup then cosine decay to min_lr, gradient clipping.

    optimizer="muon" (the speedrun's): Muon for the blocks' matrices (W_Q, W_K, W_V, W_O, the MLP's), its update
    the momentum made orthogonal, at a peak learning rate of muon_lr; AdamW (lr) for the rest. Both follow the
    schedule: at each step Muon's lr is muon_lr * lr_at(step) / lr (train/muon.py).
    batch_size is the global batch of every step, whatever computes it: N processes take B/N rows
    each, and grad_accum = n cuts each process's rows into n micro-batches, backpropagated one after
    the other (loss_i / n each, so the gradients add up to those of the batch's mean loss) before one
    AdamW step. So grad_accum changes the memory a step needs, never the update (to rounding; dropout
    draws other masks). nanoGPT counts the other way (its batch_size is the micro-batch, the step's
    batch gradient_accumulation_steps times larger): its recipe's batch is qkv's batch_size = its
    batch_size x gradient_accumulation_steps."""

    steps: int = 300
    batch_size: int = 16
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_steps: int = 30
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    grad_clip: float = 1.0  # 0 turns clipping off
    eval_interval: int = 100  # also the checkpoint interval
    eval_steps: int = 20  # batches averaged per evaluation
    val_fraction: float = 0.1
    seed: int = 1337
    log_interval: int = 10
    optimizer: Literal["adamw", "muon"] = "adamw"  # "muon": Muon for the blocks' matrices, AdamW for the rest
    muon_lr: float = 0.02  # Muon's peak learning rate (optimizer="muon")
    block_size: int | None = None  # tokens per training window (None: the model's n_ctx); at most n_ctx
    # micro-batches per step: batch_size stays the global batch, computed in grad_accum pieces of
    # batch_size / grad_accum windows whose gradients add up to the whole batch's (one AdamW step)
    grad_accum: int = 1

    def __post_init__(self) -> None:
        _check_int("steps", self.steps, 1, 10_000_000)
        _check_int("batch_size", self.batch_size, 1, 1_000_000)
        _check_float("lr", self.lr, 0.0, 10.0)
        _check_float("min_lr", self.min_lr, 0.0, 10.0)
        if self.min_lr > self.lr:
            raise ValueError(f"min_lr ({self.min_lr}) must not exceed lr ({self.lr})")
        _check_int("warmup_steps", self.warmup_steps, 0)
        _check_float("weight_decay", self.weight_decay, 0.0, 10.0)
        _check_float("beta1", self.beta1, 0.0, 1.0, high_open=True)
        _check_float("beta2", self.beta2, 0.0, 1.0, high_open=True)
        _check_float("grad_clip", self.grad_clip, 0.0, 1e9)
        _check_int("eval_interval", self.eval_interval, 1)
        _check_int("eval_steps", self.eval_steps, 1, 100_000)
        _check_float("val_fraction", self.val_fraction, 0.0, 0.5)
        _check_int("seed", self.seed, 0, 2**63 - 1)
        _check_int("log_interval", self.log_interval, 1)
        check_train_switches(self)
        if self.block_size is not None:
            _check_int("block_size", self.block_size, 1, 1_000_000)
        _check_int("grad_accum", self.grad_accum, 1, 4096)
        if self.batch_size % self.grad_accum:
            raise ValueError(
                f"batch_size={self.batch_size} does not split into grad_accum={self.grad_accum} "
                f"micro-batches (choose a batch_size that is a multiple of {self.grad_accum})"
            )

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        return _from_dict(cls, d)


@dataclass(frozen=True)
class Preset:
    model: dict = field(default_factory=dict)
    train: dict = field(default_factory=dict)


PRESETS: dict[str, Preset] = {
    # trains in about half a minute on 2 CPU cores (2000 steps of 16 x 64 tokens)
    "tiny": Preset(
        model=dict(n_ctx=64, d_model=64, n_heads=4, n_layers=2),
        train=dict(steps=2000, batch_size=16, lr=3e-3, min_lr=3e-4, warmup_steps=100, eval_interval=500),
    ),
    # nanoGPT's "baby GPT" CPU recipe
    "baby": Preset(
        model=dict(n_ctx=64, d_model=128, n_heads=4, n_layers=4),
        train=dict(steps=2000, batch_size=12, lr=1e-3, min_lr=1e-4, warmup_steps=100, eval_interval=250),
    ),
    # baby's size trained for the time to a val loss (docs/recipe.md): RoPE, no biases, tied embeddings, a 2x MLP,
    # and the speedrun's Muon, ReLU^2, QK-norm, zero-initialised projections and logit soft-cap, a larger lr and
    # batch and a short schedule; reaches nanoGPT's val loss on tiny Shakespeare in about a quarter of its time
    "fast": Preset(
        model=dict(
            n_ctx=64,
            d_model=128,
            n_heads=4,
            n_layers=4,
            d_mlp=256,
            pos="rope",
            bias=False,
            tie_embeddings=True,
            unembed_bias=False,
            activation="relu2",
            qk_norm=True,
            zero_init=True,
            output_logits_soft_cap=30.0,
        ),
        train=dict(
            steps=600,
            batch_size=16,
            lr=4e-3,
            min_lr=4e-4,
            warmup_steps=60,
            eval_interval=200,
            eval_steps=10,
            optimizer="muon",
        ),
    ),
    # nanoGPT's shakespeare_char model: slow on a CPU, but the classic size
    "small": Preset(
        model=dict(
            n_ctx=256, d_model=384, n_heads=6, n_layers=6, dropout_embed=0.2, dropout_resid=0.2, dropout_attn=0.2
        ),
        train=dict(steps=5000, batch_size=64, lr=1e-3, min_lr=1e-4, warmup_steps=100, eval_interval=250, eval_steps=50),
    ),
    # `qkv train --init` (fine-tuning a pretrained model or a qkv run): training settings only, the model is the
    # init's. nanoGPT's finetune_shakespeare: a small lr, few steps, small batches, no weight decay; 128-token windows
    "finetune": Preset(
        train=dict(
            steps=200,
            batch_size=4,
            lr=3e-5,
            min_lr=3e-6,
            warmup_steps=10,
            weight_decay=0.0,
            eval_interval=50,
            eval_steps=10,
            block_size=128,
        ),  # fmt: skip
    ),
    # the translation model (arch="seq2seq"), the bundled one's shape: source and target share one word list,
    # so one embedding table serves the encoder, the decoder and the unembedding. 1.5 minutes on one CPU core.
    "translate": Preset(
        model=dict(
            arch="seq2seq",
            n_ctx=40,
            d_model=128,
            n_heads=4,
            n_layers=2,
            n_encoder_layers=2,
            d_mlp=256,
            share_embeddings=True,
            tie_embeddings=True,
        ),
        train=dict(steps=600, batch_size=32, lr=2e-3, min_lr=1e-4, warmup_steps=50, eval_interval=200, eval_steps=10),
    ),
}


def _field_types(cls) -> dict[str, type]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _from_dict(cls, d: dict):
    if not isinstance(d, dict):
        raise ValueError(f"{cls.__name__} must be a JSON object; got {type(d).__name__}")
    known = _field_types(cls)
    unknown = sorted(set(d) - set(known))
    if unknown:
        raise ValueError(f"unknown {cls.__name__} field(s): {', '.join(unknown)}")
    try:
        return cls(**d)
    except TypeError as e:  # a wrong type that the checks did not name
        raise ValueError(f"{cls.__name__}: {e}") from None


def parse_value(key: str, text: str, annotation):
    """Turn the text of `--set key=text` into a value of the field's declared type."""
    optional = typing.get_origin(annotation) in (typing.Union, getattr(__import__("types"), "UnionType", None))
    base = annotation
    if optional:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        base = args[0]
        if text.strip().lower() in ("none", "null", "auto"):
            return None
    t = text.strip()
    if base is bool:
        if t.lower() in ("true", "1", "yes", "on"):
            return True
        if t.lower() in ("false", "0", "no", "off"):
            return False
        raise Refusal.of("errors.set_not_bool", key=key, text=text)
    if base is int:
        try:
            return int(t)
        except ValueError:
            raise Refusal.of("errors.set_not_int", key=key, text=text) from None
    if base is float:
        try:
            return float(t)
        except ValueError:
            raise Refusal.of("errors.set_not_number", key=key, text=text) from None
    return t


def apply_overrides(model: dict, train: dict, pairs: list[str]) -> tuple[dict, dict]:
    """Apply `key=value` strings to the model and train field dicts (returns new dicts).

    `dropout=p` is shorthand for the three dropout fields.
    """
    model, train = dict(model), dict(train)
    model_types, train_types = _field_types(ModelConfig), _field_types(TrainConfig)
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise Refusal.of("errors.set_not_pair", pair=repr(pair))
        if key == "dropout":
            p = parse_value(key, text, float)
            model.update(dropout_embed=p, dropout_resid=p, dropout_attn=p)
        elif key in model_types:
            model[key] = parse_value(key, text, model_types[key])
        elif key in train_types:
            train[key] = parse_value(key, text, train_types[key])
        else:
            names = list(model_types) + list(train_types) + ["dropout"]
            close = difflib.get_close_matches(key, names, n=1)
            if close:
                raise Refusal.of("errors.set_unknown_close", key=key, close=close[0])
            raise Refusal.of("errors.set_unknown", key=key)
    return model, train
