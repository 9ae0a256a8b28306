"""The encoder-decoder: parity with torch.nn.Transformer, its trace names, and the KV cache."""

import pytest
import torch
from torch import nn

from qkv.core.hub.torch_transformer import load_torch_transformer, torch_name
from qkv.core.model.seq2seq import Seq2Seq
from qkv.core.see.trace import trace_names
from qkv.core.spec.config import ModelConfig

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor")


def _pair(norm_first: bool, activation: str, d_model=24, n_heads=3, enc=2, dec=3, d_mlp=40, seed=0):
    torch.manual_seed(seed)
    ref = nn.Transformer(
        d_model, n_heads, enc, dec, d_mlp, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
    ).eval()
    with torch.no_grad():  # LayerNorms away from (1, 0), so a swapped or skipped norm shows
        for name, p in ref.named_parameters():
            if "norm" in name:
                p.add_(0.3 * torch.randn_like(p))
    cfg = ModelConfig(
        arch="seq2seq",
        d_vocab=11,
        n_ctx=16,
        d_model=d_model,
        n_heads=n_heads,
        n_layers=dec,
        n_encoder_layers=enc,
        d_mlp=d_mlp,
        norm="pre" if norm_first else "post",
        activation=activation,
        pos="none",
    )
    ours = Seq2Seq(cfg).eval()
    load_torch_transformer(ours, ref)
    return ref, ours


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("explicit", [False, True])
def test_matches_torch_transformer(norm_first, activation, explicit):
    ref, ours = _pair(norm_first, activation)
    g = torch.Generator().manual_seed(1)
    src, tgt = torch.randn(3, 7, 24, generator=g), torch.randn(3, 5, 24, generator=g)
    real = torch.ones(3, 7, dtype=torch.bool)
    real[1, 4:], real[2, 6:] = False, False  # padding at the end of two sources
    causal = nn.Transformer.generate_square_subsequent_mask(5)
    want = ref(src, tgt, tgt_mask=causal, src_key_padding_mask=~real, memory_key_padding_mask=~real, tgt_is_causal=True)
    with torch.no_grad():
        from qkv.core.see.tap import written_out

        with written_out(explicit):
            memory = ours.encoder(src, real)
            got = ours.decoder(tgt, memory, real)
            want_memory = ref.encoder(src, src_key_padding_mask=~real)
    assert (got - want).abs().max() < 1e-5
    for b in range(3):  # torch's encoder may zero padded positions (nested tensors): compare the real ones
        assert (memory[b, real[b]] - want_memory[b, real[b]]).abs().max() < 1e-5


def test_every_torch_parameter_has_a_home_and_a_mismatch_is_named():
    ref, ours = _pair(False, "relu")
    names = {torch_name(n) for n in ref.state_dict()}
    assert names <= set(ours.state_dict())
    assert torch_name("decoder.layers.2.multihead_attn.in_proj_weight") == "decoder.blocks.2.cross_attn.W_QKV.weight"
    wrong = nn.Transformer(24, 3, 2, 2, 40, batch_first=True)  # one decoder layer fewer is fine; more is not
    cfg = ModelConfig(
        arch="seq2seq", d_vocab=11, n_ctx=16, d_model=24, n_heads=3, n_layers=1, n_encoder_layers=2, d_mlp=40
    )
    with pytest.raises(ValueError, match="no counterpart"):
        load_torch_transformer(Seq2Seq(cfg), wrong)


@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("pos", ["learned", "sinusoidal", "rope"])
def test_trace_names_are_what_the_model_records(norm, pos):
    cfg = ModelConfig(
        arch="seq2seq", d_vocab=13, n_ctx=12, d_model=16, n_heads=2, n_layers=2, n_encoder_layers=1, norm=norm, pos=pos
    )
    model = Seq2Seq(cfg).eval()
    src, tgt = torch.randint(0, 13, (2, 6)), torch.randint(0, 13, (2, 4))
    logits, trace = model.run_with_trace(src, tgt, torch.ones(2, 6))
    assert list(trace) == trace_names(cfg)
    assert trace["pattern", 1, "cross_attn"].shape == (2, 2, 4, 6)  # (B, n_heads, T_target, T_source)
    assert trace["pattern", 0, None, "encoder"].shape == (2, 2, 6, 6)
    assert (logits - model(src, tgt)).abs().max() < 1e-5  # the traced (written-out) path is the fused one's numbers


def test_padding_changes_nothing_for_the_real_tokens():
    cfg = ModelConfig(arch="seq2seq", d_vocab=13, n_ctx=12, d_model=16, n_heads=2, n_layers=2)
    model = Seq2Seq(cfg).eval()
    src, tgt = torch.randint(3, 13, (1, 5)), torch.randint(3, 13, (1, 4))
    alone = model(src, tgt)
    padded = torch.cat([src, torch.zeros(1, 3, dtype=torch.long)], 1)
    mask = torch.tensor([[1] * 5 + [0] * 3])
    assert (model(padded, tgt, mask) - alone).abs().max() < 1e-5
    assert (model(padded, tgt) - alone).abs().max() > 1e-4  # unmasked, the padding is read


def test_shared_and_tied_embeddings():
    cfg = ModelConfig(
        arch="seq2seq",
        d_vocab=13,
        n_ctx=12,
        d_model=16,
        n_heads=2,
        n_layers=1,
        share_embeddings=True,
        tie_embeddings=True,
    )
    model = Seq2Seq(cfg)
    assert model.src_embed is None and model.unembed.weight is model.embed.weight
    separate = Seq2Seq(ModelConfig(arch="seq2seq", d_vocab=13, n_ctx=12, d_model=16, n_heads=2, n_layers=1))
    assert separate.num_params() - model.num_params() == 2 * 13 * 16


def test_config_refuses_what_an_encoder_decoder_cannot_be():
    with pytest.raises(ValueError, match="residual"):
        ModelConfig(arch="seq2seq", residual=False)
    with pytest.raises(ValueError, match="seq2seq"):
        ModelConfig(share_embeddings=True)
    with pytest.raises(ValueError, match="n_encoder_layers"):
        ModelConfig(arch="seq2seq", n_encoder_layers=0)
    assert ModelConfig(arch="seq2seq", n_layers=3).n_encoder_layers == 3


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_check_covers_every_attention_of_an_encoder_decoder(norm):
    from qkv.core.see.invariants import check

    torch.manual_seed(0)
    cfg = ModelConfig(
        arch="seq2seq",
        d_vocab=13,
        n_ctx=12,
        d_model=16,
        n_heads=2,
        n_layers=2,
        n_encoder_layers=1,
        norm=norm,
        init_std=0.3,
    )
    model = Seq2Seq(cfg).eval()
    src, tgt = torch.randint(3, 13, (2, 6)), torch.randint(3, 13, (2, 5))
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2])
    _, trace = model.run_with_trace(src, tgt, mask)
    report = check(trace)
    assert report.passed, str(report)
    sites = {(i.site, i.name) for i in report.items}
    assert ("decoder cross-attention", "z lies in the convex hull of the source's values") in sites
    assert ("decoder cross-attention", "source padding gets weight 0") in sites
    assert ("encoder", "padding keys get weight 0") in sites
    assert ("decoder", "masked weights are 0") in sites
    assert any(s == "decoder" and n.startswith("resid_mid_cross") for s, n in sites)
    hull = next(i for i in report.items if i.site == "decoder cross-attention" and i.name.startswith("z lies"))
    assert hull.checked == 2 * 2 * 5  # every (sequence, head, target position)
    # a z pushed out of the source's hull, and a pattern row that no longer sums to 1, are reported where they are
    name = "decoder.blocks.1.cross_attn.hook_z"
    trace.activations[name] = trace.activations[name] + 10.0
    trace.activations["decoder.blocks.0.cross_attn.hook_pattern"][1, 0, 2] *= 2
    failed = {(i.site, i.layer, i.name.split(" (")[0]) for i in check(trace).failed()}
    assert ("decoder cross-attention", 1, "z lies in the convex hull of the source's values") in failed
    assert ("decoder cross-attention", 0, "rows sum to 1") in failed
    assert all(site == "decoder cross-attention" for site, _, _ in failed)
