"""The Gemma / OLMo-2 switches of ModelConfig on their own: the sliding window, the attention scale and the
soft-caps, whose fused path must equal the written-out formula (the truth); the norms around each
sub-layer; each switch checked, settable with `qkv train --set` and trained; and the refusals of config.json
fields qkv does not build (Gemma 3 with images among them), each one line in English and Chinese."""

from __future__ import annotations

import json

import pytest
import torch
from cli_util import run_error, run_ok

from qkv.core.hub.adapters.gemma import gemma_config
from qkv.core.hub.adapters.olmo2 import olmo2_config
from qkv.core.model import make_model
from qkv.core.model.nn.attention import MultiHeadAttention, attention
from qkv.core.model.nn.sliding import window_mask
from qkv.core.see.invariants import check
from qkv.core.spec.config import ModelConfig, apply_overrides
from qkv.presentation.i18n import say_error

LLM = dict(pos="rope", rope_layout="halves", norm="rms", mlp="gated", n_kv_heads=2, bias=False, unembed_bias=False)
GEMMA = dict(
    LLM,
    activation="gelu_tanh",
    norm_placement="sandwich",
    embed_scale=True,
    qk_norm=True,
    attn_scale=5.0,
    attn_scores_soft_cap=2.0,
    output_logits_soft_cap=3.0,
    sliding_window=4,
    layer_types="lg",
    rope_base_local=100.0,
    rope_linear_factor=2.0,
)
OLMO2 = dict(LLM, activation="silu", norm_placement="output", qk_norm=True, qk_norm_width="all")
SMALL = dict(d_vocab=50, n_ctx=32, d_model=32, n_heads=4, n_layers=2, init_std=0.3)


def test_the_window_mask_reads_its_own_key_and_the_window_before():
    m = window_mask(5, 5, 2)
    assert m.tolist() == [
        [True, False, False, False, False],
        [True, True, False, False, False],
        [False, True, True, False, False],
        [False, False, True, True, False],
        [False, False, False, True, True],
    ]
    assert torch.equal(window_mask(2, 5, 3), window_mask(5, 5, 3)[3:])  # two queries after three cached keys
    assert torch.equal(window_mask(4, 4), torch.ones(4, 4, dtype=torch.bool).tril())  # no window: causal


def test_a_soft_cap_bounds_the_scores_and_leaves_small_ones():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 6, 8, generator=g) * 3 for _ in range(3))
    _, _, raw = attention(q, k, v, scale=1.0)
    _, _, capped = attention(q, k, v, scale=1.0, cap=2.0)
    assert raw.abs().max() > 5 and capped.abs().max() <= 2.0
    torch.testing.assert_close(capped, 2.0 * torch.tanh(raw / 2.0))


@pytest.mark.parametrize("cap", [None, 2.0])
@pytest.mark.parametrize("window", [None, 3])
def test_the_fused_path_equals_the_written_out_formula(cap, window):
    """Scale, window and soft-cap on the fused path (torch's kernel; with a cap, the formula untapped) equal the
    written-out one: a whole text, a padded batch, and a chunk after cached keys."""
    cfg = ModelConfig(
        **SMALL,
        **LLM,
        attn_scale=3.0,
        attn_scores_soft_cap=cap,
        sliding_window=window,
        layer_types="l" if window else None,
    )
    torch.manual_seed(0)
    attn = MultiHeadAttention(cfg).eval()
    x = torch.randn(2, 9, cfg.d_model)
    pad = torch.ones(2, 9, dtype=torch.bool)
    pad[1, :3] = False  # row 1 is left-padded
    from qkv.core.see.tap import forward_pass

    for key_mask in (None, pad):
        with torch.no_grad(), forward_pass(attn, False):
            fused = attn(x, None, key_mask)
        with torch.no_grad(), forward_pass(attn, True):
            explicit = attn(x, None, key_mask)
        real = pad  # a padding query reads no key at all (its row is undefined): the real ones are compared
        torch.testing.assert_close(fused[real], explicit[real], atol=1e-6, rtol=0)
    model = make_model(ModelConfig(**SMALL, **LLM, attn_scale=3.0, attn_scores_soft_cap=cap, sliding_window=window))
    ids = torch.randint(0, 50, (2, 12))
    with torch.no_grad():
        full = model(ids, explicit=True)
        cache = model.new_cache(2)
        model(ids[:, :5], cache)
        torch.testing.assert_close(model(ids[:, 5:], cache), full[:, 5:], atol=1e-5, rtol=0)


@pytest.mark.slow  # the hull's linear programs
@pytest.mark.parametrize("switches", [GEMMA, OLMO2], ids=["gemma", "olmo2"])
def test_a_model_of_the_switches_steps_as_it_runs_and_passes_the_checks(switches):
    model = make_model(ModelConfig(**SMALL, **switches)).eval()
    ids = torch.randint(0, 50, (1, 20), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        full = model(ids)
        torch.testing.assert_close(model(ids, explicit=True), full, atol=1e-5, rtol=0)
        cache, step = model.new_cache(1), model.stepper()
        for t in range(20):
            torch.testing.assert_close(step(ids[:, t], cache), full[:, t], atol=1e-5, rtol=0)
    _, trace = model.run_with_trace(ids)
    report = check(trace, max_hull_points=64)
    assert report.passed, str(report)
    said = str(report)
    assert "ln1_post" in said and "ln2_post" in said  # the post-sub-layer norms are checked by their formula


def test_the_switches_are_checked():
    bad = [
        dict(layer_types="lx", sliding_window=4),
        dict(layer_types="lg"),  # sliding layers without a window
        dict(layer_types=""),
        dict(sliding_window=0),
        dict(attn_scale=0.0),
        dict(attn_scores_soft_cap=-1.0),
        dict(output_logits_soft_cap=float("nan")),
        dict(rope_linear_factor=0.0),
        dict(norm_placement="middle"),
        dict(qk_norm_width="some"),
        dict(norm_placement="sandwich", norm="post"),
        dict(norm_placement="output", mlp="none"),
        dict(arch="bert", sliding_window=4),
    ]
    for fields in bad:
        with pytest.raises(ValueError):
            ModelConfig(**{"d_vocab": 50, "n_ctx": 32, "d_model": 32, "n_heads": 4, "n_layers": 2, **fields})
    cfg = ModelConfig(**SMALL, **GEMMA)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    assert [cfg.slides(i) for i in range(4)] == [True, False, True, False]
    model, _ = apply_overrides({}, {}, ["layer_types=lllg", "sliding_window=8", "attn_scale=none", "qk_norm_width=all"])
    assert model == dict(layer_types="lllg", sliding_window=8, attn_scale=None, qk_norm_width="all")


@pytest.mark.slow
@pytest.mark.parametrize("switches", [GEMMA, OLMO2], ids=["gemma", "olmo2"])
def test_qkv_train_sets_and_trains_the_switches(switches, tmp_path, capsys):
    from qkv.core.train import checkpoint

    text = tmp_path / "text.txt"
    text.write_text("the cat sat on the mat. the dog ate an apple. " * 40, encoding="utf-8")
    out = tmp_path / "run"
    tiny = ["n_layers=2", "d_model=32", "n_heads=4", "n_ctx=16", "steps=6", "batch_size=4", "eval_interval=3"]
    sets = (
        tiny + ["eval_steps=1"] + [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in switches.items()]
    )
    run_ok(capsys, ["train", "--text", str(text), "--out", str(out)] + [a for s in sets for a in ("--set", s)])
    loaded, tokenizer = checkpoint.load(out)
    for name, value in switches.items():
        assert getattr(loaded.cfg, name) == value, name
    assert hasattr(loaded.blocks[0], "ln1_post")
    ids = torch.tensor([tokenizer.encode("the cat sat on the mat")[:16]])
    _, trace = loaded.run_with_trace(ids)
    assert check(trace, max_hull_points=32).passed


@pytest.mark.slow
def test_a_bad_switch_is_one_line(tmp_path, capsys):
    text = tmp_path / "text.txt"
    text.write_text("the cat sat on the mat. " * 40, encoding="utf-8")
    line = run_error(capsys, ["train", "--text", str(text), "--out", str(tmp_path / "r"), "--set", "layer_types=lgx"])
    assert "layer_types" in line


GEMMA2_HC = dict(
    model_type="gemma2",
    vocab_size=320,
    hidden_size=64,
    intermediate_size=96,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=128,
)


def refusal(fn, hc) -> tuple[str, str]:
    with pytest.raises(ValueError) as e:
        fn(hc)
    return say_error(e.value, "en"), say_error(e.value, "zh")


def test_older_gemma_configs_read_as_transformers_reads_them():
    """A Gemma 2 config.json without layer_types (transformers 4) and a Gemma 3 one with rope_local_base_freq,
    rope_scaling and sliding_window_pattern: the same switches as transformers 5 writes."""
    cfg = gemma_config({**GEMMA2_HC, "sliding_window": 6, "rope_theta": 500.0})
    assert (cfg.layer_types, cfg.sliding_window, cfg.rope_base, cfg.attn_scale) == ("lg", 6, 500.0, 16.0)
    assert (cfg.attn_scores_soft_cap, cfg.output_logits_soft_cap, cfg.d_head, cfg.tie_embeddings) == (
        50.0,
        30.0,
        256,
        True,
    )
    old3 = {
        **GEMMA2_HC,
        "model_type": "gemma3_text",
        "num_hidden_layers": 12,
        "sliding_window": 512,
        "sliding_window_pattern": 6,
        "rope_local_base_freq": 10000.0,
        "rope_theta": 1000000.0,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0},
    }
    cfg = gemma_config(old3)
    assert (cfg.layer_types, cfg.rope_base_local, cfg.rope_base, cfg.rope_linear_factor) == ("lllllg", 1e4, 1e6, 8.0)
    assert cfg.attn_scores_soft_cap is None and cfg.qk_norm


def test_what_gemma_and_olmo2_configs_qkv_does_not_build_are_refused_in_one_line():
    cases = [
        ({**GEMMA2_HC, "model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"]}, "gemma3_text"),
        ({**GEMMA2_HC, "layer_types": ["full_attention"] * 3}, "layer_types"),
        ({**GEMMA2_HC, "rope_parameters": {"rope_type": "yarn", "factor": 2.0}}, "yarn"),
        ({**GEMMA2_HC, "attention_bias": True}, "attention_bias"),
        ({**GEMMA2_HC, "use_bidirectional_attention": True}, "use_bidirectional_attention"),
        ({**GEMMA2_HC, "hidden_activation": "relu"}, "hidden_activation"),
    ]
    for hc, named in cases:
        en, zh = refusal(gemma_config, hc)
        assert named in en and "\n" not in en, en
        assert any("\u4e00" <= c <= "\u9fff" for c in zh) and "\n" not in zh, zh
    en, zh = refusal(olmo2_config, {**GEMMA2_HC, "model_type": "olmo2", "attention_bias": True})
    assert "attention_bias" in en and "OLMo-2" in zh


def test_a_gemma3_with_images_directory_is_refused_by_the_cli(tmp_path, capsys):
    d = tmp_path / "gemma3"
    d.mkdir()
    hc = {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"], "text_config": {}}
    (d / "config.json").write_text(json.dumps(hc), encoding="utf-8")
    line = run_error(capsys, ["generate", "--ckpt", str(d), "--prompt", "hi", "--max-new-tokens", "2"])
    assert "gemma3_text" in line and "Gemma3ForConditionalGeneration" in line


@pytest.mark.slow
def test_export_to_gpt2_refuses_the_switches(tmp_path):
    pytest.importorskip("transformers")
    from qkv.core.hub.export import export_hf
    from qkv.core.text.tokenizers import train_tokenizer

    tok = train_tokenizer("char", "the cat sat on the mat")
    base = dict(d_vocab=tok.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=2, unembed_bias=False)
    for extra in (dict(norm_placement="sandwich"), dict(output_logits_soft_cap=5.0), dict(sliding_window=4)):
        model = make_model(ModelConfig(**base, **extra))
        with pytest.raises(ValueError, match=next(iter(extra))) as err:
            export_hf(model, tok, tmp_path / "hf")
        assert "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_the_lens_soft_caps_and_attribution_refuses_what_is_no_sum():
    """The logit lens's last row is the model's own output (soft-capped logits included); direct logit
    attribution refuses a model whose logit is no sum of parts (norms after sub-layers, a logit soft-cap)."""
    from qkv.analysis.attribution import logit_attribution
    from qkv.analysis.lens import logit_lens

    ids = torch.randint(0, 50, (12,), generator=torch.Generator().manual_seed(4)).tolist()
    for switches in (dict(LLM, output_logits_soft_cap=1.0), GEMMA, OLMO2):
        model = make_model(ModelConfig(**SMALL, **switches)).eval()
        with torch.no_grad():
            want = model(torch.tensor([ids]))[0].softmax(-1)
        torch.testing.assert_close(logit_lens(model, ids)[-1], want, atol=1e-6, rtol=0)
        with pytest.raises(ValueError) as e:
            logit_attribution(model, ids)
        said = say_error(e.value, "en")
        assert "no such sum" in said and "\n" not in said
        assert "归因" in say_error(e.value, "zh")


def test_only_global_layers_take_the_linear_rope_scaling():
    """Gemma 3 divides its global layers' RoPE frequencies by the factor, never its sliding ones (even when
    both share one base); the local base is the sliding layers' own."""
    base = ModelConfig(**SMALL, **LLM).d_head
    same = make_model(ModelConfig(**SMALL, **LLM, sliding_window=4, layer_types="lg", rope_linear_factor=4.0))
    theta = 10000.0 ** (-torch.arange(0, base, 2, dtype=torch.float64) / base)
    torch.testing.assert_close(same.blocks[0].attn.rope.theta, theta)
    torch.testing.assert_close(same.blocks[1].attn.rope.theta, theta / 4)
    two = make_model(ModelConfig(**SMALL, **LLM, sliding_window=4, layer_types="lg", rope_base_local=100.0))
    torch.testing.assert_close(
        two.blocks[0].attn.rope.theta, 100.0 ** (-torch.arange(0, base, 2, dtype=torch.float64) / base)
    )
    torch.testing.assert_close(two.blocks[1].attn.rope.theta, theta)


@pytest.mark.parametrize("switches", [GEMMA, OLMO2], ids=["gemma", "olmo2"])
def test_a_hook_on_the_new_names_edits_what_the_stream_adds(switches):
    """Zeroing blocks.1.hook_attn_out (LN1_post's output, what joins the stream) leaves resid_mid = resid_pre;
    zeroing blocks.1.attn.hook_out (the raw output) makes LN1_post's input 0, and so its output 0 too."""
    model = make_model(ModelConfig(**SMALL, **switches)).eval()
    ids = torch.randint(0, 50, (1, 10), generator=torch.Generator().manual_seed(5))
    zero = lambda t, hook: torch.zeros_like(t)
    for name in ("blocks.1.hook_attn_out", "blocks.1.attn.hook_out"):
        with model.hooks([(name, zero)]):
            logits, trace = model.run_with_trace(ids)
            with torch.no_grad():
                torch.testing.assert_close(model(ids), logits, atol=1e-5, rtol=0)  # the fused path, hooked too
        torch.testing.assert_close(trace["blocks.1.hook_resid_mid"], trace["blocks.1.hook_resid_pre"])
        with torch.no_grad():
            assert not torch.allclose(logits, model(ids))
