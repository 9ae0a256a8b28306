"""Export a qkv GPT of Llama's layout as a transformers LlamaForCausalLM (`qkv export --hf`).

Llama's layout, as llama.py reads it: RMSNorm before each sub-layer, a gated silu MLP (SwiGLU),
RoPE rotating each whole head in halves (rope_layout="halves"; Llama 3's scaling too), grouped-query
attention (n_kv_heads), head_dim of its own, biases on every projection or on none, and a tied or
untied unembedding without bias. A model loaded from any family of that layout (Llama, SmolLM2,
Mistral without a window, Phi-3 at its original context) and fine-tuned exports here; export.py then
runs both on a probe and compares the logits.

The weights map one to one: W_QKV's rows are q's (n_heads * d_head), then k's and v's
(n_kv_heads * d_head each), which become q_proj, k_proj and v_proj; fc_gate, fc_in and fc_out are
gate_proj, up_proj and down_proj; ln1, ln2 and ln_final are input_layernorm,
post_attention_layernorm and norm.
"""

from __future__ import annotations

import torch

from qkv.core.io.refusal import Phrase, Refusal, phrase
from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig


def is_llama_layout(cfg: ModelConfig) -> bool:
    """Whether export.py should write `cfg` as Llama (it has RMSNorm); to_hf then says what else it lacks."""
    return cfg.norm == "rms"


def _problems(cfg: ModelConfig) -> list[Phrase]:
    """What of `cfg` Llama cannot compute, each a phrase (none: it exports)."""
    problems = []
    whole_heads = cfg.rotary_dim == cfg.d_head and cfg.rope_factors is None and cfg.rope_attention_factor == 1.0
    if cfg.pos != "rope" or cfg.rope_layout != "halves" or not whole_heads or cfg.rope_linear_factor != 1.0:
        problems.append(phrase("finetune.llama_rope", pos=cfg.pos, layout=cfg.rope_layout))
    if (
        not cfg.causal
        or not cfg.residual
        or cfg.values != "v"
        or cfg.parallel_attn_mlp
        or cfg.norm_placement != "pre"
        or cfg.mlp != "gated"
        or cfg.activation != "silu"
    ):
        problems.append(phrase("finetune.llama_block"))
    if cfg.qk_norm or cfg.qkv_bias != cfg.bias or cfg.embed_scale or cfg.unembed_bias:
        problems.append(phrase("finetune.llama_parts"))
    if cfg.value_embeds:  # the speedrun's tables mixed into the values: Llama has none
        problems.append(phrase("speedrun.llama_value_embeds"))
    for name in ("sliding_window", "attn_scale", "attn_scores_soft_cap", "output_logits_soft_cap", "rope_base_local"):
        if getattr(cfg, name) is not None:
            problems.append(phrase("finetune.llama_window", name=name))
            break
    return problems


def _in_turn(problems: list[Phrase]) -> Phrase:
    first, *rest = problems
    return phrase("hub.in_turn", first=first, rest=_in_turn(rest)) if rest else first


def llama_hf_config(cfg: ModelConfig):
    """transformers' LlamaConfig of `cfg` (checked by to_hf first)."""
    from transformers import LlamaConfig

    rope = {"rope_type": "default", "rope_theta": cfg.rope_base}
    if cfg.rope_scaling is not None:  # Llama 3's stretch of the slow frequencies
        rope = {**cfg.rope_scaling, "rope_type": "llama3", "rope_theta": cfg.rope_base}
    return LlamaConfig(
        vocab_size=cfg.d_vocab,
        hidden_size=cfg.d_model,
        intermediate_size=cfg.d_mlp,
        num_hidden_layers=cfg.n_layers,
        num_attention_heads=cfg.n_heads,
        num_key_value_heads=cfg.n_kv_heads,
        head_dim=cfg.d_head,
        hidden_act="silu",
        max_position_embeddings=cfg.n_ctx,
        rms_norm_eps=cfg.ln_eps,
        tie_word_embeddings=cfg.tie_embeddings,
        rope_parameters=rope,
        attention_bias=cfg.bias,
        mlp_bias=cfg.bias,
        attention_dropout=cfg.dropout_attn,
        bos_token_id=None,
        eos_token_id=None,
    )


def _their_weights(model: GPT) -> dict[str, torch.Tensor]:
    """LlamaForCausalLM's state dict from qkv's parameters (W_QKV split into q, k, v by rows)."""
    cfg, ours = model.cfg, model.state_dict()
    sizes = [cfg.n_heads * cfg.d_head, cfg.n_kv_heads * cfg.d_head, cfg.n_kv_heads * cfg.d_head]
    theirs = {"model.embed_tokens.weight": ours["embed.weight"], "model.norm.weight": ours["ln_final.weight"]}
    parts = ("weight", "bias") if cfg.bias else ("weight",)
    for i in range(cfg.n_layers):
        q, h = f"blocks.{i}.", f"model.layers.{i}."
        theirs[h + "input_layernorm.weight"] = ours[q + "ln1.weight"]
        theirs[h + "post_attention_layernorm.weight"] = ours[q + "ln2.weight"]
        for part in parts:
            w_q, w_k, w_v = ours[q + f"attn.W_QKV.{part}"].split(sizes)  # (n_heads * d_head, ...), (n_kv * d_head, ...)
            theirs.update({h + f"self_attn.{m}_proj.{part}": w for m, w in zip("qkv", (w_q, w_k, w_v))})
            theirs[h + f"self_attn.o_proj.{part}"] = ours[q + f"attn.W_O.{part}"]
            for mine, hf in (("fc_gate", "gate_proj"), ("fc_in", "up_proj"), ("fc_out", "down_proj")):
                theirs[h + f"mlp.{hf}.{part}"] = ours[q + f"mlp.{mine}.{part}"]
    theirs["lm_head.weight"] = ours["embed.weight"] if cfg.tie_embeddings else ours["unembed.weight"]
    return {name: w.detach().clone().contiguous() for name, w in theirs.items()}


def to_hf(model: GPT):
    """A transformers LlamaForCausalLM computing `model`'s logits; a model of another layout is refused,
    naming what Llama cannot compute and the two layouts qkv exports."""
    from transformers import LlamaForCausalLM

    problems = _problems(model.cfg)
    if problems:
        raise Refusal.of("finetune.llama_cannot_export", problems=_in_turn(problems))
    hc = llama_hf_config(model.cfg)
    hc._attn_implementation = "eager"  # the same sums as qkv's attention, softmax over the whole row
    hf_model = LlamaForCausalLM(hc)
    hf_model.load_state_dict(_their_weights(model), strict=True)
    if model.cfg.tie_embeddings:
        hf_model.tie_weights()
    # transformers wraps PreTrainedModel.to in functools.wraps, which mypy reads as a function that wants `self`
    return hf_model.to(model.embed.weight.dtype).eval()  # type: ignore[arg-type]
