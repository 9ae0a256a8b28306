"""Hook names declared once (see/names.py): what a real forward pass records against what the modules
declare, for every family and variant, in order; the written-out names, the key/value heads and the
shorthand, each read from the same declarations."""

from __future__ import annotations

import pytest
import torch

import qkv
from qkv.core.model import make_model
from qkv.core.see import tap
from qkv.core.see.names import hook_of, names_of, read
from qkv.core.see.trace import trace_names
from qkv.core.spec.config import ModelConfig

KINDS = {
    "gpt2": dict(pos="learned", norm="pre"),
    "llm": dict(
        pos="rope", norm="rms", mlp="gated", activation="silu", n_kv_heads=2, rope_layout="halves", qk_norm=True
    ),
    "post": dict(pos="sinusoidal", norm="post"),
    "attn-only": dict(mlp="none"),
    "no-norm": dict(norm="none", pos="none"),
    "no-residual": dict(norm="post", residual=False),
    "values-k": dict(pos="rope", values="k"),
    "bert": dict(arch="bert", norm="post", causal=False, n_token_types=2),
    "bert-no-types": dict(arch="bert", norm="post", causal=False),
    "seq2seq-pre": dict(arch="seq2seq", norm="pre", pos="sinusoidal", n_encoder_layers=3),
    "seq2seq-post": dict(arch="seq2seq", norm="post", share_embeddings=True),
}
SRC, TGT = torch.tensor([[3, 1, 4, 1, 5, 9, 2]]), torch.tensor([[2, 7, 1, 8, 2]])


def build(kind: str):
    torch.manual_seed(0)
    cfg = ModelConfig(**{"d_vocab": 23, "n_ctx": 16, "d_model": 32, "n_heads": 4, "n_layers": 2, **KINDS[kind]})
    return make_model(cfg).eval()


def inputs(model) -> tuple[tuple, dict]:
    """What a forward pass of this model reads: a GPT the ids; an encoder a padded batch; a seq2seq both sentences."""
    if model.cfg.arch == "bert":
        return (torch.cat([SRC, SRC]),), {"attention_mask": torch.tensor([[1] * 7, [1] * 5 + [0] * 2])}
    if model.cfg.arch == "seq2seq":
        return (SRC, TGT), {}
    return (SRC,), {}


def traced(model):
    args, kwargs = inputs(model)
    return model.run_with_trace(*args, **kwargs)[1]


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_forward_pass_records_what_trace_names_lists(kind):
    model = build(kind)
    assert list(traced(model)) == trace_names(model.cfg) == qkv.trace_names(model.cfg)  # every name, in order
    assert read(model) == names_of(model.cfg)  # the model itself declares what the one built on meta does


@pytest.mark.parametrize("kind", list(KINDS))
def test_hooks_run_where_the_declarations_say(kind):
    """A hook on every declared name: all of them run, in the declared order, on the written-out path; on the
    fused path all but the WRITTEN_OUT ones (hook_z is formed there too: it is written-out by choice)."""
    model = build(kind)
    names = names_of(model.cfg)
    args, kwargs = inputs(model)

    def seen_with(written_out: bool) -> list[str]:
        seen: list[str] = []
        hooks = {name: (lambda x, hook: seen.append(hook.name),) for name in names.order}
        with torch.no_grad(), tap.hooking(model, hooks, written_out):
            model(*args, **kwargs)
        return seen

    assert seen_with(True) == list(names.order)
    fused = [n for n in names.order if n not in names.written_out or hook_of(n) == "hook_z"]
    assert seen_with(False) == fused
    assert len(fused) < len(names.order)  # every family has a part only the written-out formulas form


def test_the_declared_key_value_names_are_those_with_n_kv_heads():
    model = build("llm")  # 4 query heads, 2 key/value heads; 7 tokens, so no other dimension is 2
    trace, names = traced(model), names_of(model.cfg)
    kv_shaped = {name for name, t in trace.items() if t.dim() == 4 and t.shape[2] == 2}
    assert kv_shaped == names.kv and len(names.kv) == 4 * 2  # k, v, k_normed, rot_k per layer
    assert trace["k", 0].shape[2] == trace["rot_k", 1].shape[2] == 4  # the shorthand repeats them per group
    assert trace["blocks.0.attn.hook_k"].shape[2] == 2  # the full name gives them as recorded


def test_the_shorthand_reads_the_blocks_declarations():
    trace = traced(build("seq2seq-pre"))
    assert trace["pattern", 0] is trace["decoder.blocks.0.attn.hook_pattern"]  # a bare name: the block's attn
    assert trace["pattern", 0, "cross_attn"] is trace["decoder.blocks.0.cross_attn.hook_pattern"]
    assert trace["pattern", 2, None, "encoder"] is trace["encoder.blocks.2.attn.hook_pattern"]
    assert trace["resid_mid_cross", 1] is trace["decoder.blocks.1.hook_resid_mid_cross"]
    assert trace["cross_attn_out", 1] is trace["decoder.blocks.1.hook_cross_attn_out"]
    assert trace["post", 0] is trace["decoder.blocks.0.mlp.hook_post"]
    assert trace["embed", None, None, "encoder"] is trace["encoder.hook_embed"]
    assert trace["logits"] is trace["logits"]
    with pytest.raises(KeyError, match="attn.hook_scale"):  # three LayerNorms have a scale: say which
        trace["scale", 0]
