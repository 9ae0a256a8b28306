"""Llama, Mistral, Qwen2 and Qwen3 directories (save_pretrained layout) against transformers and TransformerLens.

qkv reads each small random directory (llm_dirs.py) with load_pretrained (no transformers involved)
and must give transformers' logits, attention patterns and greedy tokens, in float32 and bfloat16,
from one file or shards; TransformerLens 4's bridge must see the same activations under the names
both record. (Hostile directories, the CLI and generation's end: test_llm_dirs.py.)
"""

from __future__ import annotations

import json
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from qkv.core.decode.sample import generate_ids  # noqa: E402
from qkv.core.hub import pretrained  # noqa: E402
from qkv.core.hub.pretrained import load_pretrained  # noqa: E402
from qkv.core.see.invariants import check  # noqa: E402

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()  # "Writing model shards", "Loading weights"
from llm_dirs import ATOL, IDS, VARIANTS, family, random_model, save_dir, tokenizer  # noqa: E402, F401 (fixtures)


def hf_forward(hf, ids=IDS):
    with torch.no_grad():
        return hf(ids, output_attentions=True)


# 1. logits, patterns, greedy tokens, checks


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_logits_patterns_and_greedy_tokens_are_transformers(variant, family):
    d, hf, model = family(variant)
    assert model.cfg.d_head == (24 if variant == "qwen3" else 16)
    assert (model.cfg.rope_scaling is not None) == (variant == "llama-rope3")
    out = hf_forward(hf)
    with torch.no_grad():
        fused = model(IDS)
    logits, trace = model.run_with_trace(IDS)
    assert out.logits.abs().max() > 1.0  # not a near-zero model, where any mistake hides under 1e-5
    torch.testing.assert_close(fused, out.logits, atol=ATOL, rtol=0)
    torch.testing.assert_close(logits, out.logits, atol=ATOL, rtol=0)
    for layer in range(model.cfg.n_layers):
        want = out.attentions[layer]
        assert want.max() > 0.5  # some query attends mostly to one key: patterns worth comparing
        torch.testing.assert_close(trace["pattern", layer], want, atol=ATOL, rtol=0)

    prompt = IDS[0, :5].tolist()
    with torch.no_grad():
        want = hf.generate(
            IDS[:1, :5], max_new_tokens=20, do_sample=False, pad_token_id=0, attention_mask=torch.ones(1, 5)
        )
    want = want[0, 5:].tolist()
    assert len(want) == 20  # no EOS among them (transformers would stop there; generate_ids does not)
    assert list(generate_ids(model, prompt, 20, temperature=0)) == want

    report = check(trace, max_hull_points=64)  # a hull LP per point: 64 of the 320 per layer keep it fast
    assert report.passed, str(report)


def test_the_directories_say_what_the_variants_are(family):
    """The switches the tests above rely on are in the saved config.json (not only in memory)."""
    read = lambda v: json.loads((family(v)[0] / "config.json").read_text(encoding="utf-8"))
    assert read("llama-rope3")["rope_parameters"]["rope_type"] == "llama3"
    assert read("llama-tied")["tie_word_embeddings"] is True
    assert read("qwen3")["head_dim"] == 24
    from safetensors import safe_open

    with safe_open(str(family("llama-tied")[0] / "model.safetensors"), framework="pt") as f:
        assert "lm_head.weight" not in f.keys()  # the tie is restored by qkv, not read from the file
    model = family("llama-tied")[2]
    assert model.unembed.weight is model.embed.weight
    assert model.stop_ids == (2,)  # generation_config.json's eos_token_id


# 2. sharded directories


@pytest.mark.parametrize("variant", ["llama", "qwen3"])
def test_a_sharded_directory_loads_the_same_model(variant, family, tokenizer, tmp_path):
    _, hf, model = family(variant)
    d = save_dir(hf, tmp_path / "sharded", tokenizer, max_shard_size="20KB")
    assert (d / pretrained.INDEX).exists() and not (d / "model.safetensors").exists()
    assert len(list(d.glob("model-*.safetensors"))) > 2
    sharded, _ = load_pretrained(d)
    with torch.no_grad():
        assert torch.equal(sharded(IDS), model(IDS))
        torch.testing.assert_close(sharded(IDS), hf_forward(hf).logits, atol=ATOL, rtol=0)


# 3. bfloat16

# bfloat16 logits of qkv against transformers' bfloat16 forward, both of the same bfloat16 weights. Measured
# over the seven variants (|logits| up to 3.8, where one bfloat16 step is 0.0156): max |diff| 0.041 to 0.070,
# mean |diff| 0.0059 to 0.0074; transformers' own bfloat16 logits are 0.041 to 0.067 from the float32 ones.
# The two round in different places (transformers' RMSNorm and softmax upcast to float32), so no closer.
BF16_MAX, BF16_MEAN = 0.1, 0.015


def from_dir(d, dtype):
    """transformers' own model of directory d, its weights in dtype (eager attention)."""
    return transformers.AutoModelForCausalLM.from_pretrained(d, dtype=dtype, attn_implementation="eager").eval()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_bfloat16_directory_loads_as_bfloat16_or_float32(variant, family, tokenizer, tmp_path):
    d = save_dir(random_model(variant).to(torch.bfloat16), tmp_path / "bf16", tokenizer)
    assert json.loads((d / "config.json").read_text(encoding="utf-8"))["dtype"] == "bfloat16"
    model, _ = load_pretrained(d, dtype="bfloat16")
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    hf = from_dir(d, torch.bfloat16)
    assert {p.dtype for p in hf.parameters()} == {torch.bfloat16}
    with torch.no_grad():
        got, want = model(IDS), hf(IDS).logits
    assert got.dtype == want.dtype == torch.bfloat16
    diff = (got.float() - want.float()).abs()
    assert diff.max().item() <= BF16_MAX and diff.mean().item() <= BF16_MEAN, (diff.max(), diff.mean())

    as32, _ = load_pretrained(d, dtype="float32")  # the bfloat16 numbers, exactly, as float32
    assert {p.dtype for p in as32.parameters()} == {torch.float32}
    with torch.no_grad():
        exact = from_dir(d, torch.float32)(IDS).logits
        torch.testing.assert_close(as32(IDS), exact, atol=ATOL, rtol=0)
    # qkv's bfloat16 error is of the size of transformers' own (measured: 0.87 to 1.70 times it)
    ours, theirs = ((x.float() - exact).abs().max().item() for x in (got, want))
    assert ours <= 2 * theirs, (ours, theirs)


# 4. TransformerLens 4's bridge


@pytest.mark.parametrize("variant", ["llama", "qwen2", "qwen3"])
def test_every_shared_hook_holds_transformer_lens_value(variant, family):
    pytest.importorskip("transformer_lens")
    from transformer_lens.model_bridge import TransformerBridge

    d, _, model = family(variant)
    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(d / "tokenizer.json"))
    # boot_transformers(model_name, ..., tokenizer=...): a local directory is read with from_pretrained, offline
    bridge = TransformerBridge.boot_transformers(str(d), tokenizer=tok, device="cpu")
    bridge.enable_compatibility_mode(disable_warnings=True, no_processing=True)
    bridge.set_use_attn_result(True)  # hook_result: each head's z_h W_O[h], as qkv records it
    ids = IDS[:, :16]
    logits, trace = model.run_with_trace(ids)
    with torch.no_grad():
        tl_logits, cache = bridge.run_with_cache(ids)
    tl = {name: cache[name] for name in cache.keys()}
    torch.testing.assert_close(logits, tl_logits, atol=1e-4, rtol=0)
    shared = [name for name in trace if name in tl]
    L = model.cfg.n_layers
    per_layer = ("hook_resid_pre", "attn.hook_pattern", "attn.hook_z", "hook_mlp_out")
    assert {f"blocks.{i}.{n}" for i in range(L) for n in per_layer} <= set(shared)
    qkv_only = {f"blocks.{i}.attn.hook_dots" for i in range(L)} | {"logits", "probs"}
    assert set(trace) - set(shared) == qkv_only
    # hook_embed; per block 23 (25 with Qwen3's hook_q_normed, hook_k_normed); ln_final's three
    assert len(shared) == 1 + (23 + 2 * model.cfg.qk_norm) * L + 3
    for name in shared:
        ours, theirs = trace[name], tl[name]
        if name.endswith(("hook_q_normed", "hook_k_normed")):
            # Qwen3's q/k norm: TransformerLens records (B, heads, T, d_head), qkv (B, T, heads, d_head)
            theirs = theirs.transpose(1, 2)
        assert ours.shape == theirs.shape, (name, ours.shape, theirs.shape)
        if name.endswith("hook_attn_scores"):  # the same mask (-inf), then the same numbers
            masked = torch.isneginf(theirs)
            assert torch.equal(torch.isneginf(ours), masked), name
            ours, theirs = ours.masked_fill(masked, 0.0), theirs.masked_fill(masked, 0.0)
        torch.testing.assert_close(ours, theirs, atol=1e-4, rtol=0, msg=lambda m, name=name: f"{name}: {m}")


# 5. hostile directories


def test_a_bfloat16_model_is_traced_checked_and_viewed_in_float32_numbers(family):
    """--dtype bfloat16: the trace holds float32 copies (exact), the checks pass at bfloat16's rounding
    (which float32's tolerance would not), and the page's view document is made."""
    from qkv.apps.web.view import view
    from qkv.core.see.invariants import TOL, tolerance

    d, _, _ = family("qwen2")
    model, tok = load_pretrained(d, dtype="bfloat16")
    logits, trace = model.run_with_trace(IDS[:1, :12])
    assert logits.dtype == torch.float32 and all(t.dtype == torch.float32 for t in trace.values())
    with torch.no_grad():
        # the written-out path's own bfloat16 numbers, widened exactly (the fused path rounds otherwise)
        assert torch.equal(logits, model(IDS[:1, :12], explicit=True).float())
    report = check(trace, max_hull_points=64)
    assert report.passed and report.tol == tolerance(model) == 2**-7
    assert max(item.worst for item in report.items) > TOL  # float32's bound would have failed it
    assert "half precision" in str(report).splitlines()[0]
    doc = view(model, tok, "the cat sat on the mat")
    assert doc["arrays"]["pattern"]["dtype"] == "float32"
