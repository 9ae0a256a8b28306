"""The LLM switches of qkv's GPT in every combination (norm, MLP, key/value heads, RoPE layout, q/k
norm, biases, d_head): fused, written-out, traced and one-token-step paths equal, grouped-query
attention rebuilt by hand, the KV cache's capacity, config validation, and qkv train building a tiny
Llama. (The parts against transformers: test_llm_parts.py.)"""

from __future__ import annotations

import copy
import math

import pytest
import torch
from cli_util import run_ok
from test_llm_parts import LLAMA3, complex_rotation, gen

from qkv.core.decode.sample import generate_batch, generate_ids
from qkv.core.hub import size
from qkv.core.model.gpt import GPT
from qkv.core.model.nn.attention import KVCache
from qkv.core.model.nn.block import GatedMLP
from qkv.core.model.nn.layernorm import LayerNorm, RMSNorm
from qkv.core.see.invariants import check
from qkv.core.see.trace import trace_names
from qkv.core.spec.config import ModelConfig
from qkv.core.text import corpus
from qkv.core.train import checkpoint

transformers = pytest.importorskip("transformers")


# ---------------------------------------------------------------------------- 4. the variants


BASE = dict(d_vocab=23, n_ctx=24, d_model=32, n_heads=4, n_layers=2, init_std=0.25)
LLAMA = dict(norm="rms", mlp="gated", activation="silu", pos="rope", rope_layout="halves", bias=False)
VARIANTS = {
    "rms": dict(norm="rms"),
    "llama": dict(LLAMA, n_kv_heads=2, unembed_bias=False),
    "qwen2_mqa": dict(LLAMA, n_kv_heads=1, qkv_bias=True),
    "qwen3_dhead12_tied": dict(LLAMA, n_kv_heads=2, qk_norm=True, d_head=12, tie_embeddings=True),
    "ln_gated_gqa_learned": dict(norm="pre", mlp="gated", n_kv_heads=2),
    "ln_mqa_adjacent_qknorm": dict(norm="pre", n_kv_heads=1, pos="rope", rope_layout="adjacent", qk_norm=True),
    "rms_mha_adjacent_dhead6_tied": dict(
        norm="rms", n_kv_heads=4, pos="rope", d_head=6, tie_embeddings=True, mlp="gated"
    ),
    "ln_halves_qkvbias_dhead10": dict(
        norm="pre", pos="rope", rope_layout="halves", qkv_bias=True, bias=False, n_kv_heads=2, d_head=10
    ),
    "rms_llama3_scaling": dict(
        norm="rms",
        pos="rope",
        rope_layout="halves",
        n_kv_heads=2,
        rope_scaling=dict(LLAMA3, original_max_position_embeddings=16),
    ),
    "rms_learned_qknorm_mqa_noqkvbias": dict(
        norm="rms", qk_norm=True, n_kv_heads=1, mlp="gated", d_head=12, tie_embeddings=True, qkv_bias=False
    ),
}


def randomised(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Every norm's weight (and LayerNorm's bias) and every bias drawn at random, so that each one matters."""
    g = gen(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:  # norm weights, and biases
                scale = 0.5 if name.endswith("weight") else 0.2
                centre = 1.0 if name.endswith("weight") else 0.0
                p.copy_(centre + scale * (2 * torch.rand(p.shape, generator=g) - 1))
    return model


def variant(kw: dict, seed: int = 0) -> GPT:
    torch.manual_seed(seed)
    return randomised(GPT(ModelConfig(**{**BASE, **kw})), seed).eval()


@pytest.mark.parametrize("kw", VARIANTS.values(), ids=VARIANTS.keys())
def test_variant_paths_agree(kw):
    model = variant(kw)
    cfg = model.cfg
    ids = torch.randint(0, cfg.d_vocab, (2, 14), generator=gen(11))
    with torch.no_grad():
        fused = model(ids)
        explicit = model(ids, explicit=True)
    traced, trace = model.run_with_trace(ids)
    torch.testing.assert_close(explicit, fused, rtol=0, atol=1e-5)
    torch.testing.assert_close(traced, fused, rtol=0, atol=1e-5)
    assert list(trace) == trace_names(cfg)
    report = check(trace, max_hull_points=60)
    assert report.passed, str(report)
    # the switches are what was built
    want_params = {n: tuple(p.shape) for n, p in model.named_parameters()}
    assert size.param_shapes(cfg) == want_params
    assert size.param_count(cfg) == model.num_params()
    norms = [model.ln_final] + [m for b in model.blocks for m in (b.ln1, b.ln2)]
    assert all(type(m) is (RMSNorm if cfg.norm == "rms" else LayerNorm) for m in norms)
    head_norms = [m for b in model.blocks for m in (b.attn.q_norm, b.attn.k_norm)]
    if cfg.qk_norm:  # Qwen3's q/k norm is an RMSNorm over d_head, whatever the blocks' norm
        assert all(type(m) is RMSNorm and m.weight.shape == (cfg.d_head,) for m in head_norms)
    else:
        assert head_norms == [None] * (2 * cfg.n_layers)
    n_norms = sum(isinstance(m, (RMSNorm, LayerNorm)) for m in model.modules())
    assert n_norms == 2 * cfg.n_layers + 1 + (2 * cfg.n_layers if cfg.qk_norm else 0)
    assert all(isinstance(b.mlp, GatedMLP) == (cfg.mlp == "gated") for b in model.blocks)
    assert trace["blocks.0.attn.hook_k"].shape == (2, 14, cfg.n_kv_heads, cfg.d_head)
    assert trace["blocks.0.attn.hook_q"].shape == (2, 14, cfg.n_heads, cfg.d_head)


@pytest.mark.parametrize("kw", VARIANTS.values(), ids=VARIANTS.keys())
def test_variant_steps_equal_forward(kw):
    model = variant(kw)
    ids = torch.randint(0, model.cfg.d_vocab, (2, 16), generator=gen(12))
    step = model.stepper()
    with torch.no_grad():
        # from an empty cache, one token at a time
        cache = model.new_cache(2, 16)
        for t in range(16):
            torch.testing.assert_close(step(ids[:, t], cache), model(ids[:, : t + 1])[:, -1], rtol=0, atol=1e-5)
        assert cache.length == 16
        # after a prefill by forward
        cache = model.new_cache(2)
        model(ids[:, :5], cache)
        for t in range(5, 16):
            torch.testing.assert_close(step(ids[:, t], cache), model(ids[:, : t + 1])[:, -1], rtol=0, atol=1e-5)


@pytest.mark.parametrize("kw", VARIANTS.values(), ids=VARIANTS.keys())
def test_variant_generation_batch_cache_and_no_cache_agree(kw):
    model = variant(kw)
    g = gen(13)
    # lengths 3, 20 and 7 with 8 new tokens: the second row outgrows n_ctx (24), so its window slides
    prompts = [torch.randint(0, model.cfg.d_vocab, (n,), generator=g).tolist() for n in (3, 20, 7)]
    alone = [list(generate_ids(model, p, 8, temperature=0)) for p in prompts]
    no_cache = [list(generate_ids(model, p, 8, temperature=0, use_cache=False)) for p in prompts]
    batched = generate_batch(model, prompts, 8, temperature=0)
    assert no_cache == alone
    assert batched == alone
    assert all(len(a) == 8 for a in alone)
    assert len({tuple(a) for a in alone}) > 1  # the rows are not all one constant continuation


# ---------------------------------------------------------------------------- 5. grouped-query attention by hand


@pytest.mark.parametrize("pos", ["rope", "learned"])
@pytest.mark.parametrize("n_kv_heads", [1, 2])
def test_grouped_query_attention_written_out_by_hand(pos, n_kv_heads):
    n_heads, d_head, d_model = 4, 6, 32
    kw = dict(norm="rms", n_kv_heads=n_kv_heads, pos=pos, d_head=d_head, qk_norm=pos == "rope")
    if pos == "rope":
        kw["rope_layout"] = "halves"
    model = variant(kw, seed=3)
    ids = torch.randint(0, 23, (2, 9), generator=gen(14))
    _, trace = model.run_with_trace(ids)
    B, T, group = 2, 9, n_heads // n_kv_heads
    assert model.cfg.group == group
    p = "blocks.1.attn."
    attn = model.blocks[1].attn

    # q, k, v from the block's normed input and W_QKV's rows: W_Q (n_heads heads), W_K, W_V (n_kv_heads each)
    x = trace["blocks.1.ln1.hook_out"].double()
    W, b = attn.W_QKV.weight.detach().double(), attn.W_QKV.bias.detach().double()
    assert W.shape == ((n_heads + 2 * n_kv_heads) * d_head, d_model)
    q_rows, kv_rows = n_heads * d_head, n_kv_heads * d_head
    q = (x @ W[:q_rows].T + b[:q_rows]).view(B, T, n_heads, d_head)
    k = (x @ W[q_rows : q_rows + kv_rows].T + b[q_rows : q_rows + kv_rows]).view(B, T, n_kv_heads, d_head)
    v = (x @ W[q_rows + kv_rows :].T + b[q_rows + kv_rows :]).view(B, T, n_kv_heads, d_head)
    torch.testing.assert_close(trace[p + "hook_q"].double(), q, rtol=0, atol=1e-5)
    torch.testing.assert_close(trace[p + "hook_k"].double(), k, rtol=0, atol=1e-5)
    torch.testing.assert_close(trace[p + "hook_v"].double(), v, rtol=0, atol=1e-5)
    assert trace[p + "hook_k"].shape == trace[p + "hook_v"].shape == (B, T, n_kv_heads, d_head)
    assert trace["k", 1].shape == trace["v", 1].shape == (B, T, n_heads, d_head)

    if pos == "rope":  # Qwen3's order: RMSNorm over each head's q and k, then the rotation
        qn, kn = (attn.q_norm.weight.detach().double(), attn.k_norm.weight.detach().double())
        rms = lambda t, w: t / (t.pow(2).mean(-1, keepdim=True) + model.cfg.ln_eps).sqrt() * w
        q, k = rms(q, qn), rms(k, kn)
        torch.testing.assert_close(trace[p + "hook_q_normed"].double(), q, rtol=0, atol=1e-5)
        torch.testing.assert_close(trace[p + "hook_k_normed"].double(), k, rtol=0, atol=1e-5)
        positions = torch.arange(T)
        q = complex_rotation(q.transpose(1, 2), positions, model.cfg.rope_base, halves=True).transpose(1, 2)
        k = complex_rotation(k.transpose(1, 2), positions, model.cfg.rope_base, halves=True).transpose(1, 2)
        torch.testing.assert_close(trace[p + "hook_rot_q"].double(), q, rtol=0, atol=1e-5)
        torch.testing.assert_close(trace[p + "hook_rot_k"].double(), k, rtol=0, atol=1e-5)
        assert trace[p + "hook_rot_k"].shape == (B, T, n_kv_heads, d_head)
        assert trace["rot_k", 1].shape == (B, T, n_heads, d_head)

    # query head h reads key/value head h // group, spelled out head by head
    pattern = torch.empty(B, n_heads, T, T, dtype=torch.float64)
    z = torch.empty(B, T, n_heads, d_head, dtype=torch.float64)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    for h in range(n_heads):
        kv = h // group
        scores = q[:, :, h] @ k[:, :, kv].transpose(-2, -1) / math.sqrt(d_head)  # (B, T, T)
        a = scores.masked_fill(future, -math.inf).softmax(-1)
        pattern[:, h] = a
        z[:, :, h] = a @ v[:, :, kv]
        for kind in ("k", "v"):  # the shorthand repeats the kv heads for their groups
            assert torch.equal(trace[kind, 1][:, :, h], trace[p + f"hook_{kind}"][:, :, kv])
    torch.testing.assert_close(trace[p + "hook_pattern"].double(), pattern, rtol=0, atol=1e-5)
    torch.testing.assert_close(trace[p + "hook_z"].double(), z, rtol=0, atol=1e-5)
    # head_weights shows each query head the key/value matrices it reads
    hw = attn.head_weights()
    for h in range(n_heads):
        kv = h // group
        rows = W[q_rows + kv * d_head : q_rows + (kv + 1) * d_head]  # (d_head, d_model)
        torch.testing.assert_close(hw["W_K"][h].double(), rows.T, rtol=0, atol=0)


# ---------------------------------------------------------------------------- 6. the cache's capacity


def test_a_cache_refuses_a_token_past_its_capacity():
    model = variant(dict(LLAMA, n_kv_heads=2), seed=4)
    ids = torch.randint(0, 23, (1, 6), generator=gen(15))
    cache = model.new_cache(1, 5)
    assert isinstance(cache, KVCache) and cache.capacity == 5
    assert cache.k[0].shape == (1, 2, 5, model.cfg.d_head)
    with torch.no_grad():
        model(ids[:, :5], cache)
        assert cache.length == 5
        with pytest.raises(ValueError, match="full"):
            model(ids[:, 5:], cache)
        with pytest.raises(ValueError, match="full"):
            model.stepper()(ids[0, 5:], cache)
        with pytest.raises(ValueError, match="full"):  # six at once into an empty one
            model(ids, model.new_cache(1, 5))
        # a capacity above n_ctx is n_ctx
        assert model.new_cache(1, 10_000).capacity == model.cfg.n_ctx == model.new_cache(1).capacity


def test_generation_allocates_the_room_the_text_needs(monkeypatch):
    kw = dict(LLAMA, n_kv_heads=2, n_ctx=4096)
    model = variant(kw, seed=5)
    made = []
    real = GPT.new_cache

    def recording_new_cache(self, batch_size=1, capacity=None):
        cache = real(self, batch_size, capacity)
        made.append((batch_size, cache.capacity, tuple(cache.k[0].shape)))
        return cache

    monkeypatch.setattr(GPT, "new_cache", recording_new_cache)
    prompt = torch.randint(0, 23, (11,), generator=gen(16)).tolist()
    got = list(generate_ids(model, prompt, 9, temperature=0))
    assert made == [(1, 20, (1, 2, 20, model.cfg.d_head))]  # prompt + max_new_tokens, not n_ctx
    monkeypatch.setattr(GPT, "new_cache", real)
    assert got == list(generate_ids(model, prompt, 9, temperature=0, use_cache=False))
    assert all(b.attn.rope._table[0].shape[0] < model.cfg.n_ctx for b in model.blocks)  # cos, sin: not 4096 rows
    # a batch: the shared cache holds the longest prompt and what is generated; each prefill its own prompt
    monkeypatch.setattr(GPT, "new_cache", recording_new_cache)
    made.clear()
    prompts = [prompt, prompt[:4], prompt[:7]]
    batched = generate_batch(model, prompts, 9, temperature=0)
    monkeypatch.setattr(GPT, "new_cache", real)
    assert max(capacity for _, capacity, _ in made) == 11 + 9
    assert (3, 20, (3, 2, 20, model.cfg.d_head)) in made
    assert sorted(capacity for b, capacity, _ in made if b == 1) == [4, 7, 11]
    assert batched == [list(generate_ids(model, p, 9, temperature=0)) for p in prompts]


# ---------------------------------------------------------------------------- 7. config validation


@pytest.mark.parametrize(
    "kw,field",
    [
        (dict(n_heads=4, n_kv_heads=3), "n_kv_heads"),
        (dict(n_heads=6, d_model=48, n_kv_heads=4), "n_kv_heads"),
        (dict(n_heads=4, n_kv_heads=8), "n_kv_heads"),
        (dict(n_kv_heads=0), "n_kv_heads"),
        (dict(pos="rope", rope_scaling=dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0)), "rope_scaling"),
        (dict(pos="rope", rope_scaling=dict(LLAMA3, factor=-1.0)), "rope_scaling.factor"),
        (dict(pos="rope", rope_scaling=dict(LLAMA3, high_freq_factor=0.5)), "rope_scaling.high_freq_factor"),
        (dict(pos="rope", rope_scaling=dict(LLAMA3, extra=1.0)), "rope_scaling"),
        (dict(norm="layer"), "norm"),
        (dict(mlp="swiglu"), "mlp"),
        (dict(rope_layout="interleaved"), "rope_layout"),
        (dict(qkv_bias="yes"), "qkv_bias"),
        (dict(qk_norm=1), "qk_norm"),
        (dict(arch="bert", norm="rms"), "norm"),
        (dict(arch="bert", mlp="gated"), "mlp"),
        (dict(arch="bert", n_kv_heads=2), "n_kv_heads"),
        (dict(arch="seq2seq", qk_norm=True), "qk_norm"),
    ],
)
def test_bad_llm_settings_name_their_field(kw, field):
    with pytest.raises(ValueError) as e:
        ModelConfig(**kw)
    message = str(e.value)
    assert field in message, message
    assert "\n" not in message


def test_good_llm_settings_are_kept():
    cfg = ModelConfig(n_heads=8, n_kv_heads=2, pos="rope", rope_scaling=dict(LLAMA3), bias=False)
    assert (cfg.group, cfg.qkv_bias, cfg.d_head) == (4, False, 16)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    assert ModelConfig().n_kv_heads == ModelConfig().n_heads and ModelConfig().qkv_bias is True
    assert ModelConfig(bias=False, qkv_bias=True).qkv_bias is True


# ---------------------------------------------------------------------------- 8. qkv train builds a tiny Llama


LLAMA_SET = ["norm=rms", "mlp=gated", "n_kv_heads=2", "pos=rope", "rope_layout=halves", "activation=silu"]
TINY_SET = [
    "n_layers=1",
    "d_model=32",
    "n_heads=4",
    "n_ctx=16",
    "steps=12",
    "batch_size=4",
    "eval_interval=6",
    "eval_steps=2",
]


def test_qkv_train_builds_a_tiny_llama(tmp_path, capsys, monkeypatch):
    text = tmp_path / "text.txt"
    text.write_text(corpus.generate(n_sentences=120, lang="en"), encoding="utf-8")
    out = tmp_path / "run"
    saved = {}
    real_save = checkpoint.Writer.save

    def keeping_save(self, model, step, *args, **kwargs):
        saved[step] = copy.deepcopy(model).eval()  # the model as it was written, step by step
        return real_save(self, model, step, *args, **kwargs)

    monkeypatch.setattr(checkpoint.Writer, "save", keeping_save)
    argv = ["train", "--text", str(text), "--out", str(out)] + [a for s in TINY_SET + LLAMA_SET for a in ("--set", s)]
    run_ok(capsys, argv)
    assert max(saved) == 12
    loaded, tokenizer = checkpoint.load(out)
    cfg = loaded.cfg
    assert (cfg.norm, cfg.mlp, cfg.n_kv_heads, cfg.pos, cfg.rope_layout, cfg.activation) == (
        "rms",
        "gated",
        2,
        "rope",
        "halves",
        "silu",
    )
    assert (cfg.n_heads, cfg.group, cfg.d_model, cfg.n_layers) == (4, 2, 32, 1)
    assert cfg == saved[12].cfg
    config = checkpoint.read_config(out)["model"]
    assert {k: config[k] for k in ("norm", "mlp", "n_kv_heads", "pos", "rope_layout", "activation")} == dict(
        norm="rms", mlp="gated", n_kv_heads=2, pos="rope", rope_layout="halves", activation="silu"
    )
    assert isinstance(loaded.blocks[0].ln1, RMSNorm) and isinstance(loaded.blocks[0].mlp, GatedMLP)
    assert loaded.blocks[0].attn.W_QKV.weight.shape == ((4 + 2 * 2) * 8, 32)
    # the weights moved from their initialisation (norm weights included) and load as saved
    assert not torch.all(loaded.blocks[0].ln1.weight == 1)
    ids = torch.tensor([tokenizer.encode("the cat sees the dog")[:16]])
    with torch.no_grad():
        assert torch.equal(loaded(ids), saved[12](ids))
    for name, p in saved[12].state_dict().items():
        assert torch.equal(loaded.state_dict()[name], p), name
    # and it generates, cached and uncached alike
    prompt = ids[0, :4].tolist()
    assert list(generate_ids(loaded, prompt, 20, temperature=0)) == list(
        generate_ids(loaded, prompt, 20, temperature=0, use_cache=False)
    )


def test_a_rope_model_trains_after_it_generated():
    """RoPE's cos and sin are made when a text first needs them; made under generation's inference_mode,
    they must still serve a training step's backward pass."""
    from qkv.core.model.gpt import lm_loss

    model = variant(LLAMA)
    list(generate_ids(model.eval(), [1, 2, 3], 4, temperature=0))  # the tables are made here, in inference mode
    ids = torch.randint(0, BASE["d_vocab"], (2, BASE["n_ctx"]), generator=gen(5))
    loss = lm_loss(model.train()(ids[:, :-1]), ids[:, 1:])
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())
