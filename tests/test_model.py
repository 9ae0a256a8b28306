"""Tests for the GPT model: shapes, the KV cache, generation, context limits and gradients."""

import math

import pytest
import torch
import torch.nn.functional as F

from qkv import GPT, ModelConfig, lm_loss
from qkv.core.decode.sample import generate_ids
from qkv.core.model.nn.layernorm import LayerNorm, layer_norm
from qkv.core.see import tap
from qkv.core.spec.config import POS_KINDS


def make(seed: int = 0, **kw) -> GPT:
    torch.manual_seed(seed)
    base = dict(d_vocab=61, n_ctx=24, d_model=32, n_heads=4, n_layers=2)
    base.update(kw)
    return GPT(ModelConfig(**base)).eval()


def test_logit_shapes():
    model = make()
    for B, T in [(1, 1), (3, 7), (2, 24)]:
        ids = torch.randint(0, 61, (B, T))
        assert model(ids).shape == (B, T, 61)


def test_too_many_tokens_raise():
    model = make(n_ctx=8)
    with pytest.raises(ValueError, match="8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    model(torch.zeros(1, 8, dtype=torch.long))  # exactly n_ctx is fine
    cache = model.new_cache()
    model(torch.zeros(1, 6, dtype=torch.long), cache)
    with pytest.raises(ValueError):
        model(torch.zeros(1, 3, dtype=torch.long), cache)  # 6 cached + 3 > 8


@pytest.mark.parametrize("pos", POS_KINDS)
def test_kv_cache_matches_full_forward(pos):
    model = make(seed=1, pos=pos, init_std=0.2)
    ids = torch.randint(0, 61, (2, 20), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        full = model(ids)
        assert full.abs().max() > 0.1

        # prefill 5 tokens, then one token at a time
        cache = model.new_cache(batch_size=2)
        steps = [model(ids[:, :5], cache)]
        for t in range(5, 20):
            steps.append(model(ids[:, t : t + 1], cache))
        assert cache.length == 20
        torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=0)

        # chunks of 3 (the last one shorter)
        cache = model.new_cache(batch_size=2)
        chunks = [model(ids[:, s : s + 3], cache) for s in range(0, 20, 3)]
        torch.testing.assert_close(torch.cat(chunks, dim=1), full, atol=1e-5, rtol=0)

        # and the written-out attention agrees on the cached path too
        cache = model.new_cache(batch_size=2)
        chunks = [model(ids[:, s : s + 3], cache, explicit=True) for s in range(0, 20, 3)]
        torch.testing.assert_close(torch.cat(chunks, dim=1), full, atol=1e-5, rtol=0)


def _greedy(model, prompt, n, use_cache):
    return list(generate_ids(model, prompt, n, temperature=0, use_cache=use_cache))


@pytest.mark.parametrize("pos", POS_KINDS)
def test_greedy_generation_same_with_and_without_cache(pos):
    model = make(seed=3, pos=pos, n_ctx=110, init_std=0.4)
    prompt = [5, 17, 3, 42, 8]
    with_cache = _greedy(model, prompt, 100, True)
    without = _greedy(model, prompt, 100, False)
    assert len(with_cache) == 100
    assert with_cache == without
    assert len(set(with_cache)) > 3  # not a degenerate constant run
    # the first token is the arg max of the prompt's last logits
    with torch.no_grad():
        assert with_cache[0] == int(model(torch.tensor([prompt]))[0, -1].argmax())


@pytest.mark.parametrize("pos", POS_KINDS)
def test_generation_past_the_window_same_with_and_without_cache(pos):
    model = make(seed=4, pos=pos, n_ctx=10, init_std=0.4)
    prompt = [1, 2, 3, 4, 5, 6, 7]
    with_cache = _greedy(model, prompt, 30, True)
    without = _greedy(model, prompt, 30, False)
    assert len(with_cache) == 30
    assert with_cache == without
    # check one step past the window by hand: the model sees only the last n_ctx tokens
    seq = prompt + with_cache
    with torch.no_grad():
        for i in (5, 17, 29):  # token i was predicted from seq[: len(prompt) + i]
            window = seq[: len(prompt) + i][-10:]
            assert with_cache[i] == int(model(torch.tensor([window]))[0, -1].argmax())


def test_long_prompt_is_cropped():
    model = make(seed=5, n_ctx=8, init_std=0.4)
    prompt = list(range(20))
    got = _greedy(model, prompt, 4, True)
    assert got == _greedy(model, prompt[-8:], 4, True)
    assert got == _greedy(model, prompt, 4, False)


def test_tie_embeddings_shares_the_tensor():
    model = make(tie_embeddings=True)
    assert model.unembed.weight is model.embed.weight
    n_untied = make(tie_embeddings=False).num_params()
    assert model.num_params() == n_untied - 61 * 32
    with torch.no_grad():
        model.embed.weight[3, 0] = 123.0
    assert model.unembed.weight[3, 0].item() == 123.0


def test_untied_embeddings_are_separate():
    model = make(tie_embeddings=False)
    assert model.unembed.weight.data_ptr() != model.embed.weight.data_ptr()


def test_no_position_bidirectional_model_is_permutation_equivariant():
    model = make(seed=6, pos="none", causal=False, init_std=0.3)
    ids = torch.randint(0, 61, (2, 12), generator=torch.Generator().manual_seed(0))
    perm = torch.randperm(12, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out = model(ids)
        out_perm = model(ids[:, perm])
    torch.testing.assert_close(out_perm, out[:, perm], atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    "kw",
    [
        dict(pos="none", causal=True),
        dict(pos="learned", causal=False),
        dict(pos="rope", causal=False),
        dict(pos="sinusoidal", causal=False),
    ],
)
def test_order_matters_with_positions_or_causal_mask(kw):
    model = make(seed=6, init_std=0.3, **kw)
    ids = torch.randint(0, 61, (2, 12), generator=torch.Generator().manual_seed(0))
    perm = torch.randperm(12, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        diff = (model(ids[:, perm]) - model(ids)[:, perm]).abs().max()
    assert diff > 1e-3


@pytest.mark.parametrize("bias,dtype", [(True, torch.float32), (False, torch.float32), (True, torch.float64)])
def test_layer_norm_written_out_equals_the_fused_kernel(bias, dtype):
    """The explicit formula (the truth, taken while tracing) and F.layer_norm (taken otherwise) agree."""
    g = torch.Generator().manual_seed(0)
    ln = LayerNorm(20, eps=1e-5, bias=bias, name="x").to(dtype)
    with torch.no_grad():
        ln.weight.copy_(1 + torch.randn(20, generator=g, dtype=dtype))
        if bias:
            ln.bias.copy_(torch.randn(20, generator=g, dtype=dtype))
    x = torch.randn(3, 7, 20, generator=g, dtype=dtype) * 4 + 2  # not centred, not unit variance
    fused = ln(x)
    with tap.written_out():
        explicit = ln(x)
    out, normalized, scale = layer_norm(x, ln.weight, ln.bias, ln.eps)
    assert torch.equal(explicit, out)  # the module's written-out path is this function: the same ops
    tol = 1e-6 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(explicit, fused, atol=tol * 10, rtol=tol)
    torch.testing.assert_close(normalized.mean(-1), torch.zeros(3, 7, dtype=dtype), atol=tol * 10, rtol=0)
    torch.testing.assert_close(scale[..., 0], (x.var(-1, unbiased=False) + 1e-5).sqrt(), atol=tol * 10, rtol=tol)
    assert (fused - normalized).abs().max() > 0.5  # the learned scale and shift act


def test_layer_norm_loads_nn_layer_norm_weights():
    """Same parameter names as torch's LayerNorm: older checkpoints and GPT-2 weights still load."""
    theirs = torch.nn.LayerNorm(12)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    ours = LayerNorm(12)
    ours.load_state_dict(theirs.state_dict(), strict=True)
    x = torch.randn(2, 5, 12)
    torch.testing.assert_close(ours(x), theirs(x), atol=1e-6, rtol=1e-6)
    assert list(LayerNorm(12, bias=False).state_dict()) == list(torch.nn.LayerNorm(12, bias=False).state_dict())


def test_sinusoidal_embeddings_are_scaled_by_sqrt_d_model():
    model = make(seed=11, pos="sinusoidal")
    assert model.cfg.embed_scale is True and make(pos="learned").cfg.embed_scale is False
    ids = torch.randint(0, 61, (2, 9), generator=torch.Generator().manual_seed(0))
    _, trace = model.run_with_trace(ids)
    torch.testing.assert_close(trace["embed"], model.embed(ids) * math.sqrt(32), atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(trace["resid_pre", 0], trace["embed"] + trace["pos_embed"], atol=1e-6, rtol=0)
    plain = make(seed=11, pos="sinusoidal", embed_scale=False)
    _, old = plain.run_with_trace(ids)
    # unscaled: a lookup copies rows, and both models drew the same weights from seed 11 in this process
    torch.testing.assert_close(old["embed"], model.embed(ids), atol=0, rtol=0)
    with torch.no_grad():
        assert (plain(ids) - model(ids)).abs().max() > 1e-3


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_next_token_probs(dtype):
    logits = torch.randn(2, 3, 11, generator=torch.Generator().manual_seed(0), dtype=dtype) * 5
    probs = GPT.next_token_probs(logits)
    assert probs.dtype == dtype
    torch.testing.assert_close(probs, torch.softmax(logits, -1), atol=1e-6, rtol=0)
    torch.testing.assert_close(GPT.next_token_probs(logits, 2.0), torch.softmax(logits / 2, -1), atol=1e-6, rtol=0)
    cold = GPT.next_token_probs(logits * 1e30, 1e-30)  # softmax of huge numbers: no inf - inf, no nan
    assert torch.isfinite(cold).all()
    greedy = F.one_hot(logits.argmax(-1), 11).to(dtype)  # exact below: exp(0) = 1, exp(-inf) = 0, 1/2 = 0.5
    torch.testing.assert_close(cold, greedy, atol=0, rtol=0)
    torch.testing.assert_close(GPT.next_token_probs(logits, 0), greedy, atol=0, rtol=0)
    tie = GPT.next_token_probs(torch.tensor([1.0, 3.0, 3.0, -2.0], dtype=dtype), 0)
    torch.testing.assert_close(tie, torch.tensor([0.0, 0.5, 0.5, 0.0], dtype=dtype), atol=0, rtol=0)
    with pytest.raises(ValueError, match="temperature"):
        GPT.next_token_probs(logits, -1.0)


def test_post_norm_model():
    model = make(seed=7, norm="post")
    assert isinstance(model.ln_final, torch.nn.Identity)
    seen = {}

    def grab(mod, inp, out):
        seen["h"] = inp[0]

    model.unembed.register_forward_hook(grab)
    ids = torch.randint(0, 61, (2, 9))
    with torch.no_grad():
        logits = model(ids)
    assert logits.shape == (2, 9, 61) and torch.isfinite(logits).all()
    h = seen["h"]  # the last block ends in LayerNorm (scale 1, shift 0 at init)
    torch.testing.assert_close(h.mean(-1), torch.zeros(2, 9), atol=1e-5, rtol=0)
    torch.testing.assert_close(h.var(-1, unbiased=False), torch.ones(2, 9), atol=1e-3, rtol=0)
    # and it differs from the pre-norm model with the same weights
    pre = make(seed=7, norm="pre")
    with torch.no_grad():
        assert (pre(ids) - logits).abs().max() > 1e-3


def test_unembed_bias_flag():
    assert make(unembed_bias=False).unembed.bias is None
    assert make(unembed_bias=True).unembed.bias.shape == (61,)


def test_bias_false_removes_all_biases():
    model = make(bias=False, unembed_bias=False)
    assert not [n for n, _ in model.named_parameters() if n.endswith("bias")]


@pytest.mark.parametrize("pos", POS_KINDS)
def test_gradients_reach_every_parameter(pos):
    model = make(seed=8, pos=pos).train()
    ids = torch.randint(0, 61, (2, 24))  # all n_ctx positions, so every W_pos row is used
    logits = model(ids)
    loss = lm_loss(logits[:, :-1], ids[:, 1:])
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, name
        assert torch.isfinite(p.grad).all(), name
        assert p.grad.abs().max() > 0, name


def test_lm_loss_is_log_vocab_for_uniform_logits():
    logits = torch.zeros(2, 5, 61)
    targets = torch.randint(0, 61, (2, 5))
    assert lm_loss(logits, targets).item() == pytest.approx(torch.log(torch.tensor(61.0)).item(), abs=1e-5)


def test_init_follows_gpt2():
    model = make(seed=9, n_layers=3, d_model=64, d_vocab=500)
    assert model.blocks[0].attn.W_QKV.bias.abs().max() == 0
    assert torch.equal(model.blocks[0].ln1.weight, torch.ones(64))  # set to exactly 1, no arithmetic
    assert model.embed.weight.std().item() == pytest.approx(0.02, rel=0.1)
    # the residual-writing projections are scaled down by sqrt(2 * n_layers)
    assert model.blocks[0].mlp.fc_out.weight.std().item() == pytest.approx(0.02 / 6**0.5, rel=0.1)


def test_eval_is_deterministic_and_train_dropout_is_not():
    model = make(seed=10, dropout_embed=0.3, dropout_resid=0.3, dropout_attn=0.3)
    ids = torch.randint(0, 61, (1, 10))
    with torch.no_grad():
        torch.testing.assert_close(model(ids), model(ids), atol=0, rtol=0)  # same ops, same process: identical
        model.train()
        assert (model(ids) - model(ids)).abs().max() > 1e-4
