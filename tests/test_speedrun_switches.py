"""The speedrun's switches of a GPT (modded-nanogpt's changes): ReLU², zero-initialised output projections,
QK-norm, the logits' soft-cap, value embeddings and an untied head, each tested on a tiny model."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from qkv.core.model.gpt import GPT, lm_loss
from qkv.core.spec.config import ModelConfig, apply_overrides

TINY = dict(d_vocab=23, n_ctx=12, d_model=16, n_heads=2, n_layers=2, d_mlp=32)


def _model(**switches) -> GPT:
    torch.manual_seed(0)
    return GPT(ModelConfig(**{**TINY, **switches}))


def test_relu2_mlp_is_relu_squared():
    """activation=relu2: MLP(x) = relu(x W_in + b_in)^2 W_out + b_out."""
    model = _model(activation="relu2")
    mlp = model.blocks[0].mlp
    x = torch.randn(2, 5, 16)
    pre = x @ mlp.fc_in.weight.T + mlp.fc_in.bias
    want = torch.clamp(pre, min=0) ** 2 @ mlp.fc_out.weight.T + mlp.fc_out.bias
    torch.testing.assert_close(mlp(x), want, atol=1e-6, rtol=1e-5)
    assert not torch.allclose(mlp(x), _model(activation="relu").blocks[0].mlp(x))  # not relu itself


def test_relu2_from_set_and_gated():
    """`--set activation=relu2` is accepted; the gated MLP takes it too: (relu(x W_gate)^2 * x W_in) W_out."""
    model_fields, _ = apply_overrides(TINY, {}, ["activation=relu2"])
    assert ModelConfig(**model_fields).activation == "relu2"
    mlp = _model(activation="relu2", mlp="gated", bias=False).blocks[0].mlp
    x = torch.randn(3, 16)
    want = (F.relu(x @ mlp.fc_gate.weight.T) ** 2 * (x @ mlp.fc_in.weight.T)) @ mlp.fc_out.weight.T
    torch.testing.assert_close(mlp(x), want, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("tied", [False, True])
def test_zero_init_blocks_start_as_identity(tied):
    """zero_init: W_O and W_out (weights and biases) are 0, so the logits are LN_final(embeddings) W_out + b."""
    model = _model(zero_init=True, tie_embeddings=tied).eval()
    for block in model.blocks:
        for p in (block.attn.W_O.weight, block.attn.W_O.bias, block.mlp.fc_out.weight, block.mlp.fc_out.bias):
            assert torch.count_nonzero(p) == 0
    assert torch.count_nonzero(model.embed.weight) > 0 and torch.count_nonzero(model.unembed.weight) > 0
    ids = torch.randint(0, 23, (2, 12))
    with torch.no_grad():
        no_blocks = model.unembed(model.ln_final(model.embed_ids(ids)))  # (2, 12, 23)
        torch.testing.assert_close(model(ids), no_blocks, atol=0, rtol=0)
    default = _model()
    assert torch.count_nonzero(default.blocks[0].attn.W_O.weight) > 0  # off by default


def test_zero_init_still_learns():
    """The zeroed matrices get a gradient at the first step (dL/dW_O = z^T dL/dout), so they leave 0."""
    model = _model(zero_init=True)
    ids = torch.randint(0, 23, (4, 12))
    lm_loss(model(ids[:, :-1]), ids[:, 1:]).backward()
    assert model.blocks[0].attn.W_O.weight.grad.abs().sum() > 0
    assert model.blocks[1].mlp.fc_out.weight.grad.abs().sum() > 0


def test_switches_refused_where_they_cannot_apply():
    """One line naming the field where a switch cannot apply."""
    with pytest.raises(ValueError, match="zero_init is for a GPT"):
        ModelConfig(**{**TINY, "arch": "seq2seq", "zero_init": True})
    with pytest.raises(ValueError, match="value_embeds must be an integer from 0 to n_layers"):
        ModelConfig(**{**TINY, "value_embeds": 3})
    with pytest.raises(ValueError, match="values='v'"):
        ModelConfig(**{**TINY, "value_embeds": 1, "values": "k"})


def test_value_embeds_mix_the_tokens_row_into_v():
    """value_embeds=1: layer 0's hook_v is (1 - λ)(x W_V + b_V) + λ VE[token]; layer 1's is x W_V + b_V."""
    from qkv.core.see.trace import run_with_trace

    model = _model(value_embeds=1).eval()
    ve = model.blocks[0].attn.value_embed
    assert ve is not None and model.blocks[1].attn.value_embed is None
    assert float(ve.mix.detach()) == 0.5
    with torch.no_grad():
        ve.mix.fill_(0.3)
    ids = torch.randint(0, 23, (2, 12))
    with torch.no_grad():
        _, trace = run_with_trace(model, ids)
        for L in (0, 1):
            attn = model.blocks[L].attn
            x = trace[f"blocks.{L}.ln1.hook_normalized"]  # (2, 12, d_model)
            W_V, b_V = attn.W_QKV.weight[32:], attn.W_QKV.bias[32:]  # W_V's rows: after W_Q's and W_K's (16 each)
            plain = (x @ W_V.T + b_V).view(2, 12, 2, 8)  # (B, T, n_heads, d_head)
            rows = ve.table.weight[ids].view(2, 12, 2, 8)
            want = 0.7 * plain + 0.3 * rows if L == 0 else plain
            torch.testing.assert_close(trace[f"blocks.{L}.attn.hook_v"], want, atol=1e-5, rtol=1e-5)


def test_value_embeds_generation_and_export():
    """The stepper (one token at a time) gives forward's logits; GPT-2's export refuses in one line."""
    from qkv.core.hub.adapters.gpt2 import to_hf
    from qkv.core.hub.adapters.llama_export import to_hf as llama_to_hf
    from qkv.core.io.refusal import Refusal

    model = _model(value_embeds=2, pos="rope").eval()
    ids = torch.randint(0, 23, (3, 7))
    with torch.no_grad():
        full = model(ids)
        step, cache = model.stepper(), model.new_cache(3)
        for t in range(7):
            torch.testing.assert_close(step(ids[:, t], cache), full[:, t], atol=1e-5, rtol=1e-5)
    with pytest.raises(Refusal, match="value embeddings"):
        to_hf(_model(value_embeds=1))
    llama = dict(pos="rope", rope_layout="halves", norm="rms", mlp="gated", activation="silu", bias=False)
    llama_to_hf(_model(**llama, unembed_bias=False))  # the same shape without the tables exports
    with pytest.raises(Refusal, match="Llama has no value embeddings"):
        llama_to_hf(_model(**llama, unembed_bias=False, value_embeds=1))


def test_value_embeds_learn():
    """The table and λ get gradients (the table's rows of the tokens seen only)."""
    model = _model(value_embeds=1)
    ids = torch.randint(0, 20, (4, 12))  # tokens 20..22 unseen
    lm_loss(model(ids[:, :-1]), ids[:, 1:]).backward()
    ve = model.blocks[0].attn.value_embed
    assert ve.mix.grad != 0 and ve.table.weight.grad[:20].abs().sum() > 0
    assert ve.table.weight.grad[20:].abs().sum() == 0


def test_param_shapes_know_the_value_embeddings():
    """hub/size.param_shapes (what a checkpoint's header is checked against) lists the tables and their λ."""
    from qkv.core.hub.size import param_count, param_shapes

    model = _model(value_embeds=2, n_kv_heads=1)
    assert param_shapes(model.cfg) == {n: tuple(p.shape) for n, p in model.named_parameters()}
    assert param_count(model.cfg) == model.num_params()


def test_origin_shows_the_mixed_values():
    """The origin document's v (where q, k, v come from) is the v attention reads: hook_v, mixed."""
    from qkv.analysis.origin import origin
    from qkv.core.see.trace import run_with_trace
    from qkv.core.text.tokenizers import train_tokenizer

    tok = train_tokenizer("char", "abcdefghijklmnopqrstuvw")
    assert tok.vocab_size <= 23
    model = _model(value_embeds=1).eval()
    ids = tok.encode("abcabd")
    doc = origin(model, tok, ids=ids, layer=0, head=1)
    with torch.no_grad():
        _, trace = run_with_trace(model, torch.tensor([ids]))
    want = trace["blocks.0.attn.hook_v"][0, : len(doc["keys"]), 1]  # (visible keys, d_head)
    torch.testing.assert_close(
        torch.tensor([key["v"] for key in doc["keys"]], dtype=torch.float64), want.double(), atol=1e-5, rtol=1e-5
    )
