"""GPT-NeoX's and Phi-3's switches on their own: parallel_attn_mlp and rotary_dim as ModelConfig fields (checked,
saved, trainable with `qkv train --set`), partial RoPE against transformers' rotation, every path of a
parallel / partial-RoPE GPT equal (fused, written out, traced, one token at a time), and what the two
config maps read and refuse (older field names, Phi-3's long-context RoPE, odd rotary dimensions) in
English and Chinese. (The directories against transformers and TransformerLens: test_family_neox.py.)"""

from __future__ import annotations

import json
import math
import os
import re

import pytest
import torch
from cli_util import run_ok

from qkv.core.hub import size
from qkv.core.hub.adapters.neox import neox_config, per_head_rows
from qkv.core.hub.adapters.phi3 import phi3_config
from qkv.core.io.refusal import Refusal
from qkv.core.model.gpt import GPT
from qkv.core.model.nn.position import RoPE
from qkv.core.see.invariants import check
from qkv.core.see.trace import trace_names
from qkv.core.spec.config import ModelConfig, apply_overrides
from qkv.presentation.i18n import say_error

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HAN = re.compile("[\u4e00-\u9fff]")


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------------------- 1. the ModelConfig fields


@pytest.mark.parametrize(
    "kw, words",
    [
        (dict(parallel_attn_mlp="yes"), "parallel_attn_mlp must be true or false"),
        (dict(parallel_attn_mlp=True, norm="post"), "parallel_attn_mlp is for a pre-norm GPT"),
        (dict(parallel_attn_mlp=True, arch="bert", norm="pre"), "parallel_attn_mlp is for a pre-norm GPT"),
        (dict(parallel_attn_mlp=True, mlp="none"), "needs an MLP and residual"),
        (dict(parallel_attn_mlp=True, residual=False), "needs an MLP and residual"),
        (dict(pos="rope", rotary_dim=5), "an even number"),
        (dict(pos="rope", rotary_dim=64), "rotary_dim must be between 1 and 32"),
        (dict(pos="learned", rotary_dim=8), "pos='rope'"),
        (dict(pos="rope", rotary_dim=0), "rotary_dim must be between 1 and 32"),
        (dict(pos="rope", rope_factors=[1.0, 2.0]), "rope_factors must be 16 numbers"),
        (dict(pos="learned", rope_factors=[1.0] * 16), "rope_factors must be 16 numbers (one per rotated pair)"),
        (dict(pos="rope", rope_factors="1,x"), "rope_factors must be numbers separated by commas"),
        (dict(pos="rope", rope_factors=[1.0] * 15 + [0.0]), "rope_factors[15] must be in"),
        (dict(pos="rope", rope_attention_factor=0.0), "rope_attention_factor must be in"),
        (dict(pos="learned", rope_attention_factor=1.2), "it needs pos='rope'"),
    ],
)
def test_bad_switches_are_refused_naming_their_field(kw, words):
    with pytest.raises(ValueError, match=re.escape(words)) as e:
        ModelConfig(**{"n_heads": 4, "d_model": 128, **kw})
    assert "\n" not in str(e.value)


def test_the_switches_are_saved_and_set_from_the_command_line():
    cfg = ModelConfig(n_heads=4, d_model=64, pos="rope", rotary_dim=4, parallel_attn_mlp=True)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg and cfg.to_dict()["rotary_dim"] == 4
    assert ModelConfig().rotary_dim == ModelConfig().d_head and ModelConfig().to_dict()["rotary_dim"] is None
    old = {k: v for k, v in ModelConfig().to_dict().items() if k not in ("rotary_dim", "parallel_attn_mlp")}
    assert ModelConfig.from_dict(old) == ModelConfig()  # a config saved before the fields existed
    model, _ = apply_overrides({}, {}, ["parallel_attn_mlp=true", "rotary_dim=6", "pos=rope"])
    assert model == dict(parallel_attn_mlp=True, rotary_dim=6, pos="rope")
    assert ModelConfig(**model).rotary_dim == 6
    with pytest.raises(Refusal):
        apply_overrides({}, {}, ["parallel_attn_mlp=maybe"])
    model, _ = apply_overrides({}, {}, ["pos=rope", "rotary_dim=4", "rope_factors=1,2.5", "rope_attention_factor=1.2"])
    cfg = ModelConfig(**model)
    assert (cfg.rope_factors, cfg.rope_attention_factor) == ([1.0, 2.5], 1.2)
    assert ModelConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg


# ---------------------------------------------------------------------------- 2. partial RoPE


@pytest.mark.slow  # importing transformers GPT-NeoX takes seconds
@pytest.mark.parametrize("offset", [0, 7])
def test_partial_rope_equals_transformers(offset):
    """GPT-NeoX's rotation of the first rotary_ndims of each head (rotate_half within them), frequencies over them."""
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding, apply_rotary_pos_emb

    d_head, pct, base, T = 16, 0.25, 500.0, 10
    hc = GPTNeoXConfig(hidden_size=4 * d_head, num_attention_heads=4, rotary_pct=pct, rotary_emb_base=base)
    x = torch.randn(2, 4, T, d_head, generator=gen(3))
    cos, sin = GPTNeoXRotaryEmbedding(hc)(x, torch.arange(offset, offset + T)[None])  # (1, T, rotary_ndims)
    want, _ = apply_rotary_pos_emb(x, x, cos, sin)
    rope = RoPE(64, int(d_head * pct), base, layout="halves")
    got = rope(x, offset)
    torch.testing.assert_close(got, want, rtol=0, atol=2e-5)
    assert torch.equal(got[..., 4:], x[..., 4:])  # the rest of each head passes through
    rows = torch.tensor([offset, offset + 3])  # one token per row at its own position (batched decoding)
    one = x[:, :, :1]
    c, s = GPTNeoXRotaryEmbedding(hc)(one, rows[:, None])
    torch.testing.assert_close(rope(one, rows), apply_rotary_pos_emb(one, one, c, s)[0], rtol=0, atol=2e-5)


# ---------------------------------------------------------------------------- 3. the paths of a GPT agree

BASE = dict(d_vocab=23, n_ctx=24, d_model=32, n_heads=4, n_layers=2, init_std=0.25)
VARIANTS = {
    "pythia": dict(parallel_attn_mlp=True, pos="rope", rope_layout="halves", rotary_dim=2, unembed_bias=False),
    "parallel_gated_rms_gqa": dict(parallel_attn_mlp=True, norm="rms", mlp="gated", activation="silu", n_kv_heads=2),
    "phi3_partial": dict(
        norm="rms", mlp="gated", pos="rope", rope_layout="halves", rotary_dim=6, n_kv_heads=2, bias=False
    ),
    "parallel_adjacent_partial_nonorm": dict(parallel_attn_mlp=True, norm="none", pos="rope", rotary_dim=4),
    "phi3_longrope": dict(
        norm="rms",
        mlp="gated",
        pos="rope",
        rope_layout="halves",
        rotary_dim=4,
        rope_factors=[1.5, 3.0],
        rope_attention_factor=1.2,
        n_kv_heads=2,
    ),
}


def variant(kw: dict, seed: int = 0) -> GPT:
    torch.manual_seed(seed)
    model = GPT(ModelConfig(**{**BASE, **kw}))
    g = gen(seed)
    with torch.no_grad():  # every norm weight and bias at random, so that each one matters
        for name, p in model.named_parameters():
            if p.dim() == 1:
                centre = 1.0 if name.endswith("weight") else 0.0
                p.copy_(centre + 0.4 * (2 * torch.rand(p.shape, generator=g) - 1))
    return model.eval()


@pytest.mark.parametrize("kw", VARIANTS.values(), ids=VARIANTS.keys())
def test_fused_written_out_traced_and_stepped_paths_agree(kw):
    model = variant(kw)
    cfg = model.cfg
    ids = torch.randint(0, cfg.d_vocab, (2, 14), generator=gen(11))
    with torch.no_grad():
        fused, explicit = model(ids), model(ids, explicit=True)
    traced, trace = model.run_with_trace(ids)
    torch.testing.assert_close(explicit, fused, rtol=0, atol=1e-5)
    torch.testing.assert_close(traced, fused, rtol=0, atol=1e-5)
    assert list(trace) == trace_names(cfg)
    assert ("blocks.0.hook_resid_mid" in trace) != cfg.parallel_attn_mlp
    report = check(trace, max_hull_points=40)
    assert report.passed, str(report)
    assert size.param_shapes(cfg) == {n: tuple(p.shape) for n, p in model.named_parameters()}
    step = model.stepper()
    with torch.no_grad():
        cache = model.new_cache(2, 14)
        for t in range(14):
            torch.testing.assert_close(step(ids[:, t], cache), model(ids[:, : t + 1])[:, -1], rtol=0, atol=1e-5)


def test_the_checks_see_a_parallel_block_that_does_not_add_up():
    """A trace whose resid_post is edited by a hook (what the model passes on is not the sum) fails the
    parallel block's check, at that layer."""
    model = variant(VARIANTS["pythia"])
    ids = torch.randint(0, 23, (1, 9), generator=gen(2))
    _, trace = model.run_with_trace(ids)
    trace.activations["blocks.1.hook_resid_post"] = trace["blocks.1.hook_resid_post"] + 0.01
    report = check(trace, max_hull_points=10)
    failed = [(i.layer, i.name) for i in report.failed()]
    assert failed == [(1, "resid_post = resid_pre + attn_out + mlp_out")]


def test_direct_logit_attribution_adds_up_through_parallel_blocks():
    """A parallel block writes attn_out and mlp_out into one stream as a sequential one does: the terms of
    embed, heads, b_O and MLPs sum to the logit (float64, so to 1e-9)."""
    from qkv.analysis.attribution import logit_attribution

    model = variant(VARIANTS["pythia"]).double()
    ids = torch.randint(0, 23, (10,), generator=gen(4))
    a = logit_attribution(model, ids, -1, 5)
    assert abs(a.total - a.logit) < 1e-9 and a.mlp is not None and a.mlp.abs().max() > 1e-3


def test_a_parallel_gpt_is_not_exported_as_gpt2(tmp_path):
    """GPT-2 computes its blocks in sequence: a parallel block (learned positions, else GPT-2's) is refused
    by name, in both languages, and nothing is written."""
    from qkv import export_hf, train_tokenizer

    tok = train_tokenizer("char", "the cat sat")
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=8, d_model=16, n_heads=2, n_layers=1, parallel_attn_mlp=True))
    with pytest.raises(ValueError) as err:
        export_hf(model, tok, tmp_path / "out")
    assert "parallel_attn_mlp=false" in say_error(err.value, "en") and "parallel_attn_mlp=false" in say_error(
        err.value, "zh"
    )
    assert not (tmp_path / "out").exists()


def test_qkv_train_trains_a_tiny_pythia(tmp_path, capsys):
    from qkv.core.text import corpus
    from qkv.core.train import checkpoint

    text = tmp_path / "text.txt"
    text.write_text(corpus.generate(n_sentences=120, lang="en"), encoding="utf-8")
    out = tmp_path / "run"
    sets = ["n_layers=1", "d_model=32", "n_heads=4", "n_ctx=16", "steps=12", "batch_size=4", "eval_interval=6"]
    sets += ["eval_steps=2", "lr=0.01", "parallel_attn_mlp=true", "pos=rope", "rope_layout=halves", "rotary_dim=2"]
    sets += ["rope_factors=2", "rope_attention_factor=1.1"]  # LongRoPE's switches: trained as any other
    run_ok(capsys, ["train", "--text", str(text), "--out", str(out)] + [a for s in sets for a in ("--set", s)])
    loaded, _ = checkpoint.load(out)
    assert (loaded.cfg.parallel_attn_mlp, loaded.cfg.rotary_dim, loaded.cfg.d_head) == (True, 2, 8)
    assert (loaded.cfg.rope_factors, loaded.cfg.rope_attention_factor) == ([2.0], 1.1)
    assert loaded.blocks[0].attn.rope.theta.shape == (1,)  # one pair of dimensions turns
    losses = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    train = [r["loss"] for r in losses if "loss" in r]
    assert len(train) >= 10 and all(map(torch.isfinite, torch.tensor(train)))
    assert sum(train[-3:]) < sum(train[:3])  # it learns


# ---------------------------------------------------------------------------- 4. the config maps

NEOX = dict(
    model_type="gpt_neox",
    vocab_size=320,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=96,
    max_position_embeddings=128,
)
PHI3 = dict(
    model_type="phi3",
    vocab_size=320,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=96,
    max_position_embeddings=4096,
)


def test_older_and_newer_neox_fields_read_the_same():
    """Pythia's config.json (rotary_pct, rotary_emb_base) and transformers 5's (rope_parameters) mean one model."""
    old = neox_config({**NEOX, "rotary_pct": 0.5, "rotary_emb_base": 500})
    new = neox_config({**NEOX, "rope_parameters": {"partial_rotary_factor": 0.5, "rope_theta": 500.0}})
    assert old == new and (old.rotary_dim, old.rope_base, old.parallel_attn_mlp) == (8, 500.0, True)
    assert neox_config(NEOX).rotary_dim == 4  # transformers' default rotary_pct, 0.25
    assert neox_config({**NEOX, "use_parallel_residual": False}).parallel_attn_mlp is False
    assert neox_config({**NEOX, "hidden_act": "gelu_new"}).activation == "gelu_tanh"


@pytest.mark.slow  # importing transformers.activations takes seconds
@pytest.mark.parametrize("name", ["gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "relu"])
def test_each_neox_activation_is_the_one_transformers_computes(name):
    """GPT-NeoX-20B's gelu_fast is GELU's tanh approximation, as gelu_new: the qkv activation it is read as
    gives transformers' numbers."""
    from transformers.activations import ACT2FN

    from qkv.core.model.nn.block import _ACTIVATIONS

    x = torch.linspace(-6, 6, 1001)
    ours = _ACTIVATIONS[neox_config({**NEOX, "hidden_act": name}).activation]
    torch.testing.assert_close(ours(x), ACT2FN[name](x), rtol=0, atol=1e-6)


def test_phi3_fields():
    cfg = phi3_config({**PHI3, "sliding_window": 2047, "num_key_value_heads": 2, "partial_rotary_factor": 0.75})
    assert (cfg.n_ctx, cfg.sliding_window, cfg.n_kv_heads, cfg.rotary_dim) == (4096, 2047, 2, 12)
    assert (cfg.norm, cfg.mlp) == ("rms", "gated")
    assert phi3_config(PHI3).n_ctx == 4096 and phi3_config(PHI3).rotary_dim == 16


def test_phi3_longrope_is_read_for_its_original_context():
    """Phi-3.5-mini's shape of LongRoPE: 131,072 positions stretched from 4,096; qkv reads the short factors and
    the attention factor sqrt(1 + ln 32 / ln 4096) that transformers uses up to 4,096 tokens, and n_ctx 4,096."""
    short = [1.0 + i / 8 for i in range(8)]
    rope = {"type": "longrope", "short_factor": short, "long_factor": [9.0] * 8}
    cfg = phi3_config(
        {**PHI3, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_scaling": rope}
    )
    assert (cfg.n_ctx, cfg.rope_factors) == (4096, short)
    assert abs(cfg.rope_attention_factor - (1 + math.log(32) / math.log(4096)) ** 0.5) < 1e-12
    given = phi3_config({**PHI3, "rope_parameters": {**rope, "rope_type": "longrope", "attention_factor": 1.25}})
    assert given.rope_attention_factor == 1.25 and given.n_ctx == 4096  # original_max_position_embeddings' default
    assert phi3_config(PHI3).rope_factors is None and phi3_config(PHI3).rope_attention_factor == 1.0


def test_per_head_rows_regroup_query_key_value():
    """Head h's q, k, v rows sit at h*3d .. h*3d+3d; W_QKV wants every head's q, then k, then v."""
    rows = per_head_rows(2, 3)
    assert rows == [(0, 3), (9, 12), (3, 6), (12, 15), (6, 9), (15, 18)]


@pytest.mark.parametrize(
    "read, fields, english, chinese",
    [
        (
            phi3_config,
            {**PHI3, "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 7, "long_factor": [1.0] * 8}},
            "field 'short_factor' must be a list of 8 positive numbers (one per rotated pair of dimensions)",
            "由 8 个正数组成的列表",
        ),
        (phi3_config, {**PHI3, "rope_scaling": {"type": "su"}}, "field 'short_factor' must be", "None"),
        (phi3_config, {**PHI3, "rope_scaling": {"type": "dynamic", "factor": 2.0}}, "field 'rope_type'", "'dynamic'"),
        (
            neox_config,
            {**NEOX, "attention_bias": False},
            "field 'attention_bias' must be true (qkv's GPT-NeoX has biases",
            "注意力和 MLP 上都带偏置",
        ),
        (
            neox_config,
            {**NEOX, "rotary_pct": 0.2},  # int(16 * 0.2) = 3 dimensions: no pairs
            "field 'rotary_pct' must be a fraction of d_head (16) that rotates an even number of dimensions",
            "偶数",
        ),
        (phi3_config, {**PHI3, "partial_rotary_factor": 0.0}, "field 'partial_rotary_factor' must be", "d_head（16）"),
        (neox_config, {**NEOX, "rope_scaling": {"type": "linear", "factor": 2.0}}, "field 'rope_type'", "'linear'"),
        (neox_config, {**NEOX, "hidden_act": "swish"}, "field 'hidden_act' must be one of", "'swish'"),
    ],
)
def test_what_the_config_maps_refuse_is_said_in_both_languages(read, fields, english, chinese):
    with pytest.raises(Refusal) as e:
        read(fields)
    en, zh = say_error(e.value, "en"), say_error(e.value, "zh")
    assert english in en and "\n" not in en, en
    assert chinese in zh and HAN.search(zh) and "\n" not in zh, zh


# ---------------------------------------------------------------------------- 5. the tokenizer


def test_a_pythia_style_tokenizer_json_reads_as_transformers_tokenizes(tmp_path):
    """GPT-NeoX-20B's tokenizer.json (Pythia's): byte-level BPE after an NFC normalizer, with ByteLevel's
    post-processor; qkv's ids and decoded text are the tokenizers library's, combining accents included."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    from qkv.core.hub.adapters.neox import ADAPTER

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=alphabet, show_progress=False, special_tokens=["<|endoftext|>", "<|padding|>"]
    )
    tok.train_from_iterator(["hello world, the cat sat on the mat. café 我昨天吃了苹果。\n" * 50], trainer=trainer)
    tok.save(str(tmp_path / "tokenizer.json"))
    ours = ADAPTER.tokenizer(tmp_path, None)
    for text in ["the cat sat", "café and cafe\u0301: 我昨天吃了苹果。", " spaced  out\n"]:
        ids = ours.encode(text)
        assert ids == tok.encode(text).ids
        assert ours.decode(ids) == tok.decode(ids)
    assert ours.encode("cafe\u0301") == ours.encode("café")  # NFC: one accented letter either way
