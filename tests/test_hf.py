"""Loading Hugging Face GPT-2 weights and exporting them back (in the style of minGPT's import test)."""

import pytest
import torch

transformers = pytest.importorskip("transformers")

from qkv import GPT, ModelConfig, from_hf, to_hf  # noqa: E402
from qkv.core.decode.sample import generate_ids  # noqa: E402

transformers.logging.set_verbosity_error()

CONFIGS = {
    "gelu_new-tied": dict(
        n_embd=48,
        n_head=3,
        n_layer=2,
        n_positions=37,
        vocab_size=101,
        activation_function="gelu_new",
        tie_word_embeddings=True,
    ),
    "relu-untied-n_inner": dict(
        n_embd=64,
        n_head=4,
        n_layer=3,
        n_inner=100,
        n_positions=40,
        vocab_size=89,
        activation_function="relu",
        tie_word_embeddings=False,
    ),
    "gelu-untied": dict(
        n_embd=32,
        n_head=2,
        n_layer=2,
        n_positions=30,
        vocab_size=50,
        activation_function="gelu",
        tie_word_embeddings=False,
    ),
}


def random_hf(seed: int = 0, std: float = 0.5, **kw):
    """A GPT2LMHeadModel whose every parameter (biases and LayerNorm too) is normal noise."""
    hc = transformers.GPT2Config(
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=None, eos_token_id=None, pad_token_id=None, **kw
    )
    model = transformers.GPT2LMHeadModel(hc)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * std)
    return model.eval()


def hf_logits(hf_model, ids):
    with torch.no_grad():
        return hf_model(ids).logits


@pytest.fixture(scope="module", params=list(CONFIGS))
def pair(request):
    hf = random_hf(seed=len(request.param), **CONFIGS[request.param])
    return hf, from_hf(hf).eval()


def test_config_is_translated(pair):
    hf, ours = pair
    hc, cfg = hf.config, ours.cfg
    assert (cfg.d_vocab, cfg.n_ctx, cfg.d_model, cfg.n_heads, cfg.n_layers) == (
        hc.vocab_size,
        hc.n_positions,
        hc.n_embd,
        hc.n_head,
        hc.n_layer,
    )
    assert cfg.d_mlp == (hc.n_inner or 4 * hc.n_embd)
    assert cfg.tie_embeddings == hc.tie_word_embeddings
    assert (ours.unembed.weight is ours.embed.weight) == hc.tie_word_embeddings
    assert cfg.unembed_bias is False and ours.unembed.bias is None
    assert cfg.pos == "learned" and cfg.norm == "pre" and cfg.causal


def test_logits_match(pair):
    hf, ours = pair
    ids = torch.randint(0, hf.config.vocab_size, (3, hf.config.n_positions), generator=torch.Generator().manual_seed(0))
    expected = hf_logits(hf, ids)
    assert expected.abs().max() > 1.0
    with torch.no_grad():
        torch.testing.assert_close(ours(ids), expected, atol=1e-5, rtol=0)
        torch.testing.assert_close(ours(ids, explicit=True), expected, atol=1e-5, rtol=0)


def test_untied_lm_head_is_used():
    hf = random_hf(seed=3, **CONFIGS["gelu-untied"])
    assert not torch.equal(hf.lm_head.weight, hf.transformer.wte.weight)
    ours = from_hf(hf)
    assert torch.equal(ours.unembed.weight, hf.lm_head.weight)  # copied, not computed: exact
    assert torch.equal(ours.embed.weight, hf.transformer.wte.weight)


def test_greedy_generation_matches_hf(pair):
    hf, ours = pair
    prompt = [7, 3, 11, 2, 9]
    ours_ids = list(generate_ids(ours, prompt, 20, temperature=0))
    with torch.no_grad():
        out = hf.generate(
            torch.tensor([prompt]),
            attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
            max_new_tokens=20,
            min_new_tokens=20,
            do_sample=False,
            pad_token_id=0,
        )
    theirs = out[0, len(prompt) :].tolist()
    assert len(theirs) == 20
    assert ours_ids == theirs
    assert ours_ids == list(generate_ids(ours, prompt, 20, temperature=0, use_cache=False))


def test_round_trip_to_hf(pair):
    hf, ours = pair
    back = to_hf(ours)
    assert isinstance(back, transformers.GPT2LMHeadModel)
    assert not back.training
    a, b = hf.state_dict(), back.state_dict()
    assert set(a) == set(b)
    for name in a:
        assert torch.equal(a[name], b[name]), name  # copies and transposes only: exact
    ids = torch.randint(0, hf.config.vocab_size, (2, 17), generator=torch.Generator().manual_seed(1))
    # the same weights in the same HF code, in one process: identical by construction
    torch.testing.assert_close(hf_logits(back, ids), hf_logits(hf, ids), atol=0, rtol=0)
    # and loading the export again gives the same qkv model
    again = from_hf(back)
    assert again.cfg == ours.cfg
    for (n1, p1), (n2, p2) in zip(ours.state_dict().items(), again.state_dict().items()):
        assert n1 == n2 and torch.equal(p1, p2), n1  # copied there and back: exact


@pytest.mark.parametrize("activation", ["gelu_tanh", "silu", "relu2"])
def test_native_model_round_trip(activation):
    """A model built in qkv (not loaded) exports to HF with the same logits."""
    torch.manual_seed(0)
    cfg = ModelConfig(
        d_vocab=40,
        n_ctx=20,
        d_model=24,
        n_heads=3,
        n_layers=2,
        unembed_bias=False,
        activation=activation,
        init_std=0.3,
    )
    ours = GPT(cfg).eval()
    ids = torch.randint(0, 40, (2, 20))
    with torch.no_grad():
        torch.testing.assert_close(hf_logits(to_hf(ours), ids), ours(ids), atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    "kw",
    [
        dict(pos="rope"),
        dict(pos="sinusoidal"),
        dict(norm="post"),
        dict(causal=False),
        dict(bias=False),
        dict(d_head=4),
        dict(embed_scale=True),
        dict(norm="rms"),
        dict(mlp="gated"),
        dict(n_kv_heads=1),
        dict(qk_norm=True),
        dict(qkv_bias=False),
    ],
)
def test_to_hf_rejects_other_architectures(kw):
    model = GPT(ModelConfig(d_vocab=30, n_ctx=8, d_model=16, n_heads=2, n_layers=1, unembed_bias=False, **kw))
    with pytest.raises(ValueError, match="GPT-2"):
        to_hf(model)


def test_unsupported_activation_is_rejected():
    hf = random_hf(n_embd=16, n_head=2, n_layer=1, n_positions=8, vocab_size=20, activation_function="quick_gelu")
    with pytest.raises(ValueError, match="quick_gelu"):
        from_hf(hf)
