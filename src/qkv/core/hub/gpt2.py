"""Move weights between qkv's GPT and Hugging Face's GPT2LMHeadModel.

Two differences to mind. GPT-2 stores its projections as Conv1D, whose weight is (in, out): the
transpose of nn.Linear's (out, in). And GPT-2 has no unembedding bias (lm_head shares W_E), so a
loaded model gets unembed_bias=False. `transformers` is only needed when these functions run.

A qkv model with an unembedding bias b still exports exactly: the bias is folded into the final
LayerNorm and an untied lm_head (`_fold_unembed_bias`).
"""

from __future__ import annotations

import torch

from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig

ACT_FROM_HF = {
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu": "gelu",
    "relu": "relu",
    "silu": "silu",
}
_ACT_TO_HF = {"gelu_tanh": "gelu_new", "gelu": "gelu", "relu": "relu", "silu": "silu"}


def config_from_hf(hc) -> ModelConfig:
    if hc.activation_function not in ACT_FROM_HF:
        raise ValueError(f"activation {hc.activation_function!r} is not supported; use one of {', '.join(ACT_FROM_HF)}")
    if not hc.scale_attn_weights or hc.scale_attn_by_inverse_layer_idx:
        raise ValueError("only GPT-2's standard 1/sqrt(d_head) attention scaling is supported")
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
        raise ValueError(f"weights did not line up: missing {left}, unexpected {unexpected}")
    return model.to(next(hf_model.parameters()).dtype).eval()


def to_hf(model: GPT):
    """Export to a transformers GPT2LMHeadModel. Only GPT-2's own architecture can be exported."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = model.cfg
    problems = []
    if cfg.pos != "learned":
        problems.append(f"pos={cfg.pos} (GPT-2 uses learned positions)")
    if cfg.norm != "pre" or not cfg.bias or not cfg.causal or not cfg.residual or cfg.values != "v":
        problems.append("GPT-2 needs norm=pre, bias=true, causal=true, residual=true, values=v")
    if cfg.mlp != "plain" or cfg.n_kv_heads != cfg.n_heads or cfg.qk_norm or cfg.qkv_bias != cfg.bias:
        problems.append("GPT-2 has a plain MLP, one key/value head per head, no q/k norm and biases everywhere")
    if cfg.d_head * cfg.n_heads != cfg.d_model:
        problems.append("GPT-2 needs d_head * n_heads == d_model")
    if cfg.embed_scale:
        problems.append("embed_scale=true (GPT-2 does not multiply its token embeddings by sqrt(d_model))")
    if problems:
        raise ValueError("cannot export to GPT-2: " + "; ".join(problems))
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
    return hf_model.to(model.embed.weight.dtype).eval()


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
    w, beta = ln.weight.double(), ln.bias.double()  # (d_model,)
    U, b = model.unembed.weight.double(), model.unembed.bias.double()  # (d_vocab, d_model), (d_vocab,)
    d = w.shape[0]
    scaled = U * w  # (d_vocab, d_model): U_v ⊙ w
    c = (U @ beta + b - scaled.sum(1)) / d  # (d_vocab,)
    U_new = scaled + c[:, None]  # (d_vocab, d_model)
    return torch.ones_like(w).to(dtype), torch.ones_like(beta).to(dtype), U_new.to(dtype)
