"""GPT-2 (model_type gpt2) and qkv's GPT, in both directions: a Hugging Face directory or a transformers
GPT2LMHeadModel read as a qkv GPT, and a qkv GPT written as a GPT2LMHeadModel (hub/export.py).

Two differences to mind. GPT-2 stores its projections as Conv1D, whose weight is (in, out): the
transpose of nn.Linear's (out, in). And GPT-2 has no unembedding bias (lm_head shares W_E), so a
loaded model gets unembed_bias=False. `transformers` is only needed by from_hf and to_hf.

A qkv model with an unembedding bias b still exports exactly: the bias is folded into the final
LayerNorm and an untied lm_head (`_fold_unembed_bias`). Its tokenizer is tokenizer.json or vocab.json
and merges.txt (byte-level BPE), or qkv's own (qkv-tokenizer.json), which `qkv export` writes beside them.
"""

from __future__ import annotations

import types
from pathlib import Path

import torch

from qkv.core.hub.adapter import Adapter
from qkv.core.hub.fields import BOOL, EPSILON, PROBABILITY, checked, integer, one_of, or_null
from qkv.core.io.files import read_json_object
from qkv.core.io.refusal import Refusal, phrase
from qkv.core.model.gpt import GPT
from qkv.core.model.nn.layernorm import LayerNorm
from qkv.core.spec.config import Activation, ModelConfig

QKV_TOKENIZER = "qkv-tokenizer.json"  # qkv's tokenizer, as `qkv export` writes it beside tokenizer.json
ACT_FROM_HF: dict[str, Activation] = {
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu": "gelu",
    "relu": "relu",
    "silu": "silu",
    "relu2": "relu2",  # transformers' ACT2FN has relu(x)^2 under this name
}
_ACT_TO_HF = {"gelu_tanh": "gelu_new", "gelu": "gelu", "relu": "relu", "silu": "silu", "relu2": "relu2"}

# ------------------------------------------------------------------ the config map

# what transformers leaves out of config.json when a value is its default
_DEFAULTS = dict(
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
_FIELDS = {
    "vocab_size": integer(1, 10_000_000),
    "n_positions": integer(1, 1_000_000),
    "n_embd": integer(1, 65536),
    "n_layer": integer(1, 1024),
    "n_head": integer(1, 4096),
    "n_inner": or_null(integer(1, 1 << 20)),  # null: 4 * n_embd
    "activation_function": one_of(*ACT_FROM_HF),
    "resid_pdrop": PROBABILITY,
    "embd_pdrop": PROBABILITY,
    "attn_pdrop": PROBABILITY,
    "layer_norm_epsilon": EPSILON,
    "scale_attn_weights": BOOL,
    "scale_attn_by_inverse_layer_idx": BOOL,
    "tie_word_embeddings": BOOL,
}


def gpt2_config(hc: dict) -> ModelConfig:
    """A qkv ModelConfig for a transformers GPT2Config (as a dict), every field checked."""
    return config_from_hf(types.SimpleNamespace(**checked(hc, _FIELDS, _DEFAULTS, ("n_embd", "n_head"))))


def config_from_hf(hc) -> ModelConfig:
    if hc.activation_function not in ACT_FROM_HF:
        raise Refusal.of("hub.gpt2_activation", got=repr(hc.activation_function), choices=list(ACT_FROM_HF))
    if not hc.scale_attn_weights or hc.scale_attn_by_inverse_layer_idx:
        raise Refusal.of("hub.gpt2_scaling")
    return ModelConfig(
        d_vocab=hc.vocab_size,
        n_ctx=hc.n_positions,
        d_model=hc.n_embd,
        n_heads=hc.n_head,
        n_layers=hc.n_layer,
        d_mlp=hc.n_inner or 4 * hc.n_embd,
        pos="learned",
        norm="pre",
        dropout_embed=hc.embd_pdrop,
        dropout_resid=hc.resid_pdrop,
        dropout_attn=hc.attn_pdrop,
        bias=True,
        unembed_bias=False,
        tie_embeddings=bool(getattr(hc, "tie_word_embeddings", True)),
        activation=ACT_FROM_HF[hc.activation_function],
        ln_eps=hc.layer_norm_epsilon,
    )


# ------------------------------------------------------------------ the weight map, both ways


def gpt2_name_pairs(n_layers: int, tied: bool):
    """(qkv name, GPT-2 name, transposed?) for every weight."""
    pairs = [("embed.weight", "transformer.wte.weight", False), ("pos_embed.W_pos", "transformer.wpe.weight", False)]
    for i in range(n_layers):
        q, h = f"blocks.{i}.", f"transformer.h.{i}."
        pairs += [
            (q + "ln1.weight", h + "ln_1.weight", False),
            (q + "ln1.bias", h + "ln_1.bias", False),
            (q + "attn.W_QKV.weight", h + "attn.c_attn.weight", True),
            (q + "attn.W_QKV.bias", h + "attn.c_attn.bias", False),
            (q + "attn.W_O.weight", h + "attn.c_proj.weight", True),
            (q + "attn.W_O.bias", h + "attn.c_proj.bias", False),
            (q + "ln2.weight", h + "ln_2.weight", False),
            (q + "ln2.bias", h + "ln_2.bias", False),
            (q + "mlp.fc_in.weight", h + "mlp.c_fc.weight", True),
            (q + "mlp.fc_in.bias", h + "mlp.c_fc.bias", False),
            (q + "mlp.fc_out.weight", h + "mlp.c_proj.weight", True),
            (q + "mlp.fc_out.bias", h + "mlp.c_proj.bias", False),
        ]
    pairs += [("ln_final.weight", "transformer.ln_f.weight", False), ("ln_final.bias", "transformer.ln_f.bias", False)]
    if not tied:
        pairs.append(("unembed.weight", "lm_head.weight", False))
    return pairs


def weight_map(cfg: ModelConfig, names) -> dict:
    """qkv name -> (how, stored names) for a directory of GPT2LMHeadModel (GPT2Model: no "transformer." prefix);
    the unembedding, tied or lm_head.weight, is hub/read.unembedding's to decide."""
    plan = {}
    for q_name, h_name, transpose in gpt2_name_pairs(cfg.n_layers, tied=True):
        inner = h_name.startswith("transformer.")  # GPT2Model saves these without the prefix; lm_head has none
        prefixes = ("transformer.", "") if inner else ("",)
        plan[q_name] = ("T" if transpose else "", [names.take(h_name.removeprefix("transformer."), prefixes)])
    return plan


def from_hf(hf_model) -> GPT:
    """A qkv GPT with the weights of a transformers GPT2LMHeadModel; logits agree to float precision."""
    cfg = config_from_hf(hf_model.config)
    model = GPT(cfg)
    theirs = hf_model.state_dict()
    ours = {}
    for q_name, h_name, transpose in gpt2_name_pairs(cfg.n_layers, cfg.tie_embeddings):
        w = theirs[h_name]
        ours[q_name] = w.T.contiguous() if transpose else w.clone()
    missing, unexpected = model.load_state_dict(ours, strict=False)
    left = [m for m in missing if not (cfg.tie_embeddings and m == "unembed.weight")]
    if left or unexpected:
        raise Refusal.of("hub.gpt2_line_up", missing=str(left), unexpected=str(unexpected))
    return model.to(next(hf_model.parameters()).dtype).eval()


def to_hf(model: GPT):
    """Export to a transformers GPT2LMHeadModel. Only GPT-2's own architecture can be exported."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = model.cfg
    problems = _export_problems(cfg)
    if problems:
        raise Refusal.of("hub.gpt2_cannot_export", problems=_in_turn(problems))
    fold = cfg.unembed_bias and bool(torch.count_nonzero(model.unembed.bias).item())
    tied = cfg.tie_embeddings and not fold
    hc = GPT2Config(
        vocab_size=cfg.d_vocab,
        n_positions=cfg.n_ctx,
        n_embd=cfg.d_model,
        n_layer=cfg.n_layers,
        n_head=cfg.n_heads,
        n_inner=cfg.d_mlp,
        activation_function=_ACT_TO_HF[cfg.activation],
        resid_pdrop=cfg.dropout_resid,
        embd_pdrop=cfg.dropout_embed,
        attn_pdrop=cfg.dropout_attn,
        layer_norm_epsilon=cfg.ln_eps,
        tie_word_embeddings=tied,
        bos_token_id=None,
        eos_token_id=None,
    )
    hf_model = GPT2LMHeadModel(hc)
    ours = dict(model.state_dict())
    if fold:
        ours["ln_final.weight"], ours["ln_final.bias"], ours["unembed.weight"] = _fold_unembed_bias(model)
    theirs = {}
    for q_name, h_name, transpose in gpt2_name_pairs(cfg.n_layers, tied):
        w = ours[q_name]
        theirs[h_name] = w.T.contiguous() if transpose else w.clone()
    if tied:
        theirs["lm_head.weight"] = theirs["transformer.wte.weight"]
    hf_model.load_state_dict(theirs, strict=True)
    # transformers wraps PreTrainedModel.to in functools.wraps, which mypy reads as a function that wants `self`
    return hf_model.to(model.embed.weight.dtype).eval()  # type: ignore[arg-type]


def _export_problems(cfg: ModelConfig) -> list:
    """What of `cfg` GPT-2 cannot compute, each a phrase (none: it exports)."""
    problems = []
    if cfg.pos != "learned":
        problems.append(phrase("hub.gpt2_pos", pos=cfg.pos))
    if (
        cfg.norm != "pre"
        or not cfg.bias
        or not cfg.causal
        or not cfg.residual
        or cfg.values != "v"
        or cfg.parallel_attn_mlp
    ):
        problems.append(phrase("hub.gpt2_block"))
    if cfg.mlp != "plain" or cfg.n_kv_heads != cfg.n_heads or cfg.qk_norm or cfg.qkv_bias != cfg.bias:
        problems.append(phrase("hub.gpt2_parts"))
    if cfg.d_head * cfg.n_heads != cfg.d_model:
        problems.append(phrase("hub.gpt2_d_head"))
    if cfg.embed_scale:
        problems.append(phrase("hub.gpt2_embed_scale"))
    gemma = [n for n in cfg.GEMMA_OLMO_FIELDS if getattr(cfg, n) != ModelConfig.__dataclass_fields__[n].default]
    if gemma:  # norms after sub-layers, soft-caps, a window, another attention scale...: GPT-2 has none
        problems.append(phrase("gemma.gpt2_export", name=gemma[0]))
    if cfg.value_embeds:  # the speedrun's tables mixed into the values: GPT-2 has none
        problems.append(phrase("speedrun.gpt2_value_embeds"))
    return problems


def _in_turn(problems: list):
    """Several phrases as one, said one after another ("a; b; c")."""
    first, *rest = problems
    return phrase("hub.in_turn", first=first, rest=_in_turn(rest)) if rest else first


@torch.no_grad()
def _fold_unembed_bias(model: GPT):
    """(LN weight w', LN bias β', lm_head U') with LN'(x) U'ᵀ = LN(x) Uᵀ + b for every x, so GPT-2
    (no lm_head bias) computes qkv's logits.

    LN(x) = n ⊙ w + β, where n = (x − mean x) / scale has mean 0, so n · 1 = 0. Take w' = 1, β' = 1
    and U'_v = U_v ⊙ w + c_v 1 with c_v = (β·U_v + b_v − Σ_i U_vi w_i) / d_model. Then
    (n + 1)·U'_v = n·(U_v ⊙ w) + c_v (n·1) + Σ_i U_vi w_i + c_v d_model = n·(U_v ⊙ w) + β·U_v + b_v,
    which is (n ⊙ w + β)·U_v + b_v: the same logit. Computed in float64, returned in the model's dtype.
    """
    ln, dtype = model.ln_final, model.unembed.weight.dtype
    assert isinstance(ln, LayerNorm) and ln.bias is not None  # an exported model's: norm="pre" with bias
    w, beta = ln.weight.double(), ln.bias.double()  # (d_model,)
    U, b = model.unembed.weight.double(), model.unembed.bias.double()  # (d_vocab, d_model), (d_vocab,)
    d = w.shape[0]
    scaled = U * w  # (d_vocab, d_model): U_v ⊙ w
    c = (U @ beta + b - scaled.sum(1)) / d  # (d_vocab,)
    U_new = scaled + c[:, None]  # (d_vocab, d_model)
    return torch.ones_like(w).to(dtype), torch.ones_like(beta).to(dtype), U_new.to(dtype)


# ------------------------------------------------------------------ the tokenizer


def read_tokenizer(d: Path, cfg: ModelConfig):
    """qkv's own tokenizer where `qkv export` wrote it, else GPT-2's byte-level BPE from tokenizer.json, or
    from vocab.json and merges.txt."""
    from tokenizers.implementations import ByteLevelBPETokenizer

    from qkv.core.text.tokenizers import load_tokenizer
    from qkv.core.text.tokenizers.base import read_tokenizer_file, read_tokenizer_json
    from qkv.core.text.tokenizers.hf_config import as_transformers_reads
    from qkv.core.text.tokenizers.layout import from_hf

    # exists(), not is_file(): a FIFO or a device in a tokenizer's place is refused by name, not passed over
    if (d / QKV_TOKENIZER).exists():  # written by qkv's export beside tokenizer.json: qkv's own, exactly
        return load_tokenizer(d / QKV_TOKENIZER)
    vocab, merges = d / "vocab.json", d / "merges.txt"
    if (d / "tokenizer.json").exists():
        hf = read_tokenizer_json(d / "tokenizer.json")
    elif vocab.exists() and merges.exists():
        hf = read_tokenizer_file(vocab, lambda: ByteLevelBPETokenizer(str(vocab), str(merges))._tokenizer, [merges])
    else:
        raise Refusal.of("hub.no_bpe_tokenizer", path=d)
    if (d / "tokenizer_config.json").exists():  # its class's pipeline, as transformers reads it (hf_config.py)
        as_transformers_reads(hf, read_json_object(d / "tokenizer_config.json"))
    try:
        return from_hf(hf)  # byte-level BPE as GPT-2's, or another layout its file declares
    except Refusal as e:
        raise Refusal.of("hub.in_file", path=d, error=e) from None


ADAPTER = Adapter(
    titles=("GPT-2",),
    model_types=("gpt2",),
    config=gpt2_config,
    weights=weight_map,
    tokenizer=read_tokenizer,
    tokenizer_files=("tokenizer.json", "tokenizer_config.json", "vocab.*", "merges.txt"),
    ignored=r"(^|\.)(masked_bias|attn\.bias)$",  # GPT-2's causal mask, saved as a buffer by older versions
    order=0,
)
