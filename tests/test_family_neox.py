"""GPT-NeoX (Pythia) and Phi-3 directories (save_pretrained layout) against transformers and TransformerLens 4.

qkv reads each small random directory (neox_dirs.py) with load_pretrained (no transformers involved)
and must give transformers' logits, every layer's attention pattern and its 20 greedy tokens (float32,
1e-5); the checks pass (a parallel block's sum: resid_post = resid_pre + attn_out + mlp_out); decoding
from the KV cache gives the full forward's logits; TransformerLens 4's bridge sees the same activations
under every name both record, and edits them alike; the page's view document is made at their shapes.
(The config maps and the switches alone: test_family_switches.py.)
"""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")

from neox_dirs import ATOL, IDS, VARIANTS, family, tokenizer  # noqa: E402, F401 (fixtures)

from qkv.core.decode.sample import generate_batch, generate_ids  # noqa: E402
from qkv.core.hub.pretrained import load_pretrained  # noqa: E402
from qkv.core.model.nn.parallel import ParallelBlock  # noqa: E402
from qkv.core.see.invariants import check  # noqa: E402

# what each variant must have been read as: (rotary_dim, parallel_attn_mlp, n_kv_heads, n_ctx, tied)
READ_AS = {
    "pythia": (4, True, 4, 128, False),
    "neox-sequential": (8, False, 4, 128, False),
    "phi3": (16, False, 2, 128, False),
    "phi3-partial": (12, False, 1, 128, True),  # 0.75 of 16; a sliding window of 64 (WINDOWS), n_ctx kept
    "phi3-longrope": (8, False, 2, 64, False),  # n_ctx: the original context, where the short factors hold
}
WINDOWS = {"phi3-partial": 64}  # ModelConfig.sliding_window of each variant (None: no window)


def hf_forward(hf, ids=IDS):
    with torch.no_grad():
        return hf(ids, output_attentions=True)


# 1. logits, patterns, greedy tokens, checks


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_logits_patterns_and_greedy_tokens_are_transformers(variant, family):
    d, hf, model = family(variant)
    cfg = model.cfg
    assert (cfg.rotary_dim, cfg.parallel_attn_mlp, cfg.n_kv_heads, cfg.n_ctx, cfg.tie_embeddings) == READ_AS[variant]
    assert cfg.sliding_window == WINDOWS.get(variant)
    assert all(isinstance(b, ParallelBlock) == cfg.parallel_attn_mlp for b in model.blocks)
    out = hf_forward(hf)
    with torch.no_grad():
        fused = model(IDS)
    logits, trace = model.run_with_trace(IDS)
    assert out.logits.abs().max() > 1.0  # not a near-zero model, where any mistake hides under 1e-5
    torch.testing.assert_close(fused, out.logits, atol=ATOL, rtol=0)
    torch.testing.assert_close(logits, out.logits, atol=ATOL, rtol=0)
    for layer in range(cfg.n_layers):
        want = out.attentions[layer]
        assert want[..., 4:, :].max() > 0.3  # past the first rows, far from uniform (1/40): patterns worth comparing
        torch.testing.assert_close(trace["pattern", layer], want, atol=ATOL, rtol=0)

    prompt = IDS[0, :5].tolist()
    with torch.no_grad():
        want = hf.generate(
            IDS[:1, :5], max_new_tokens=20, do_sample=False, pad_token_id=0, attention_mask=torch.ones(1, 5)
        )
    want = want[0, 5:].tolist()
    assert len(want) == 20  # no EOS among them (transformers would stop there; generate_ids does not)
    assert list(generate_ids(model, prompt, 20, temperature=0)) == want

    report = check(trace, max_hull_points=64)
    assert report.passed, str(report)
    names = {item.name for item in report.items}
    parallel_sum = "resid_post = resid_pre + attn_out + mlp_out"
    assert (parallel_sum in names) == cfg.parallel_attn_mlp  # the parallel block's own sum is checked
    assert ("resid_mid = resid_pre + attn_out" in names) != cfg.parallel_attn_mlp
    assert ("blocks.0.hook_resid_mid" in trace) != cfg.parallel_attn_mlp  # TransformerLens: none in a parallel block


@pytest.mark.slow  # the family fixture builds its transformers models
def test_the_partial_rotation_leaves_the_rest_of_each_head_alone(family):
    """Pythia rotates 4 of each head's 16 dimensions: hook_rot_q equals hook_q beyond them, and differs within."""
    _, _, model = family("pythia")
    _, trace = model.run_with_trace(IDS[:, :12])
    q, rot = trace["blocks.1.attn.hook_q"], trace["blocks.1.attn.hook_rot_q"]  # (B, T, n_heads, d_head)
    assert torch.equal(q[..., 4:], rot[..., 4:])
    assert torch.equal(q[:, 0], rot[:, 0])  # position 0 turns by angle 0
    assert (q[:, 1:, :, :4] - rot[:, 1:, :, :4]).abs().max() > 0.1


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["pythia", "phi3-partial"])
def test_a_bfloat16_directory_loads_as_bfloat16(variant, tokenizer, tmp_path):
    """The fused and regrouped tensors (read.Rows) in bfloat16: qkv's logits within the bounds of
    test_llm_families.py from transformers' own bfloat16 forward (measured: max 0.031 Pythia, 0.051 Phi-3),
    and as float32 the very same numbers as transformers' float32 model of those weights."""
    from llm_dirs import save_dir
    from neox_dirs import random_model

    d = save_dir(random_model(variant).to(torch.bfloat16), tmp_path / "bf16", tokenizer)
    model, _ = load_pretrained(d, dtype="bfloat16")
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    load = lambda dtype: transformers.AutoModelForCausalLM.from_pretrained(  # noqa: E731
        d, dtype=dtype, attn_implementation="eager"
    ).eval()
    with torch.no_grad():
        diff = (model(IDS).float() - load(torch.bfloat16)(IDS).logits.float()).abs()
        assert diff.max() <= 0.1 and diff.mean() <= 0.015, (diff.max(), diff.mean())
        as32, _ = load_pretrained(d, dtype="float32")
        torch.testing.assert_close(as32(IDS), load(torch.float32)(IDS).logits, atol=ATOL, rtol=0)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["pythia", "phi3"])
def test_a_sharded_directory_loads_the_same_model(variant, family, tokenizer, tmp_path):
    """The fused tensors read from shards: query_key_value and gate_up_proj wherever their shard puts them."""
    from llm_dirs import save_dir

    from qkv.core.hub import pretrained

    _, hf, model = family(variant)
    d = save_dir(hf, tmp_path / "sharded", tokenizer, max_shard_size="20KB")
    assert (d / pretrained.INDEX).exists() and len(list(d.glob("model-*.safetensors"))) > 2
    sharded, _ = load_pretrained(d)
    with torch.no_grad():
        assert torch.equal(sharded(IDS), model(IDS))


# 2. decoding from the KV cache


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_cached_steps_and_batches_equal_full_forwards(variant, family):
    _, _, model = family(variant)
    ids = IDS[:, :16]
    step = model.stepper()
    with torch.no_grad():
        cache = model.new_cache(2, 16)
        model(ids[:, :5], cache)  # a prefill by forward, then one token at a time
        for t in range(5, 16):
            torch.testing.assert_close(step(ids[:, t], cache), model(ids[:, : t + 1])[:, -1], atol=ATOL, rtol=0)
    prompts = [IDS[0, :3].tolist(), IDS[1, :9].tolist(), IDS[0, 10:17].tolist()]
    alone = [list(generate_ids(model, p, 8, temperature=0)) for p in prompts]
    assert [list(generate_ids(model, p, 8, temperature=0, use_cache=False)) for p in prompts] == alone
    assert generate_batch(model, prompts, 8, temperature=0) == alone


# 3. TransformerLens 4's bridge

# names qkv records and the bridge does not, for these two families: the raw dots, RoPE's rotated q and k (its
# GPT-NeoX and Phi-3 adapters record q and k before the rotation only), the logits and the probabilities
QKV_ONLY = ("attn.hook_dots", "attn.hook_rot_q", "attn.hook_rot_k")


def bridge(d):
    from transformer_lens.model_bridge import TransformerBridge

    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(d / "tokenizer.json"))
    b = TransformerBridge.boot_transformers(str(d), tokenizer=tok, device="cpu")
    b.enable_compatibility_mode(disable_warnings=True, no_processing=True)
    b.set_use_attn_result(True)  # hook_result: each head's z_h W_O[h], as qkv records it
    return b


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_shared_hook_holds_transformer_lens_value(variant, family):
    pytest.importorskip("transformer_lens")
    d, _, model = family(variant)
    theirs = bridge(d)
    ids = IDS[:, :16]
    logits, trace = model.run_with_trace(ids)
    with torch.no_grad():
        tl_logits, cache = theirs.run_with_cache(ids)
    tl = {name: cache[name] for name in cache.keys()}
    torch.testing.assert_close(logits, tl_logits, atol=1e-4, rtol=0)
    shared = [name for name in trace if name in tl]
    L, cfg = model.cfg.n_layers, model.cfg
    assert set(trace) - set(shared) == {f"blocks.{i}.{n}" for i in range(L) for n in QKV_ONLY} | {"logits", "probs"}
    # per block: resid_pre, 3 per norm, q k v, scores, pattern, z, result, attn_out, mlp pre, post, mlp_out,
    # resid_post (19); resid_mid unless parallel; the gated MLP's pre_linear
    per_block = 19 + (not cfg.parallel_attn_mlp) + (cfg.mlp == "gated")
    assert len(shared) == 1 + per_block * L + 3  # hook_embed, the blocks, ln_final's three
    for name in shared:
        ours, want = trace[name], tl[name]
        assert ours.shape == want.shape, (name, ours.shape, want.shape)
        if name.endswith("hook_attn_scores"):  # the same mask (-inf), then the same numbers
            masked = torch.isneginf(want)
            assert torch.equal(torch.isneginf(ours), masked), name
            ours, want = ours.masked_fill(masked, 0.0), want.masked_fill(masked, 0.0)
        torch.testing.assert_close(ours, want, atol=1e-4, rtol=0, msg=lambda m, name=name: f"{name}: {m}")


@pytest.mark.slow
def test_a_parallel_block_is_edited_as_transformer_lens_edits_it(family):
    """Hooks on Pythia's parallel block: LN2 reads resid_pre (not attention's sum), so doubling ln2's scale,
    zeroing a head's z or halving resid_pre change the logits as the bridge's own run_with_hooks does."""
    pytest.importorskip("transformer_lens")
    d, _, model = family("pythia")
    theirs = bridge(d)
    ids = IDS[:, :16]

    def zero_head(z, hook):  # (B, T, n_heads, d_head)
        out = z.clone()
        out[:, :, 1] = 0
        return out

    edits = [
        ("blocks.0.attn.hook_z", zero_head),
        ("blocks.1.hook_resid_pre", lambda x, hook: x * 0.5),
        ("blocks.0.ln2.hook_scale", lambda s, hook: s * 2.0),
        ("blocks.1.mlp.hook_post", lambda p, hook: p * 0.0),
    ]
    with torch.no_grad():
        plain = model(ids)
        for one in edits:
            got, want = model.run_with_hooks(ids, fwd_hooks=[one]), theirs.run_with_hooks(ids, fwd_hooks=[one])
            assert not torch.allclose(got, plain, atol=1e-3), one[0]  # each edit changes the logits
            torch.testing.assert_close(got, want, atol=1e-4, rtol=0, msg=lambda m, n=one[0]: f"{n}: {m}")


# 4. the commands and the page


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["pythia", "phi3-partial"])
def test_every_command_and_the_page_open_the_family(variant, family, tmp_path, capsys):
    """explain (a head's steps too), trace --check, generate, figure and the page's view document."""
    import json

    from fastapi.testclient import TestClient

    from qkv.apps.cli import main
    from qkv.apps.web.server import create_app
    from qkv.apps.web.view import view

    d, _, model = family(variant)
    ckpt = ["--ckpt", str(d)]
    assert main(["explain", "the cat sat", *ckpt, "--layer", "1", "--head", "2"]) in (0, None)
    said = capsys.readouterr().out
    assert "|x + attn_out|" in said and ("(= resid_mid)" in said) != model.cfg.parallel_attn_mlp
    assert main(["trace", "the cat sat", *ckpt, "--check"]) in (0, None)
    doc = json.loads(capsys.readouterr().out)
    assert doc["check"]["passed"] and doc["config"]["parallel_attn_mlp"] == model.cfg.parallel_attn_mlp
    assert main(["generate", *ckpt, "--prompt", "the cat", "--max-new-tokens", "4", "--temperature", "0"]) in (0, None)
    assert capsys.readouterr().out.startswith("the cat")
    out = tmp_path / "attention.png"
    assert main(["figure", "attention", *ckpt, "--text", "the cat sat", "--out", str(out)]) in (0, None)
    assert out.stat().st_size > 1000

    _, tok = load_pretrained(d)
    doc = view(model, tok, "the cat sat on the mat")
    cfg = model.cfg
    T = len(doc["tokens"])
    assert doc["model"]["parallel_attn_mlp"] == cfg.parallel_attn_mlp and doc["model"]["d_head"] == cfg.d_head
    assert doc["arrays"]["pattern"]["shape"][:2] == [cfg.n_layers, cfg.n_heads]
    assert doc["arrays"]["resid_mid_norm"]["shape"] == [cfg.n_layers, T]
    page = TestClient(create_app(model, tok, variant), base_url="http://127.0.0.1:8000")
    about = page.get("/api/model").json()["model"]
    assert about["parameters"] == sum(p.numel() for p in model.parameters())
    answer = page.post("/api/view", json={"text": "the cat sat"})
    assert answer.status_code == 200 and answer.json()["model"]["n_heads"] == cfg.n_heads


# 5. what older files hold, and files that lie


@pytest.mark.slow  # the family fixture builds its transformers models
def test_an_older_pythia_file_loads_the_same_model(family, tmp_path):
    """Pythia's own files store the causal mask (attention.bias, attention.masked_bias) and RoPE's inv_freq as
    buffers, and write rotary_pct and rotary_emb_base instead of rope_parameters: the same model loads."""
    import json
    import shutil

    from safetensors.torch import load_file, save_file

    d, _, model = family("pythia")
    d = shutil.copytree(d, tmp_path / "old")
    hc = json.loads((d / "config.json").read_text())
    rope = hc.pop("rope_parameters")
    hc.update(rotary_pct=rope["partial_rotary_factor"], rotary_emb_base=rope["rope_theta"])
    del hc["attention_bias"]
    (d / "config.json").write_text(json.dumps(hc))
    weights = load_file(str(d / "model.safetensors"))
    for i in range(2):
        weights[f"gpt_neox.layers.{i}.attention.bias"] = torch.ones(1, 1, 8, 8)
        weights[f"gpt_neox.layers.{i}.attention.masked_bias"] = torch.tensor(-1e9)
        weights[f"gpt_neox.layers.{i}.attention.rotary_emb.inv_freq"] = torch.ones(2)
    save_file(weights, str(d / "model.safetensors"))
    again, _ = load_pretrained(d)
    assert again.cfg == model.cfg
    with torch.no_grad():
        assert torch.equal(again(IDS), model(IDS))


@pytest.mark.slow
@pytest.mark.parametrize(
    "variant, tensor, shape",
    [
        ("pythia", "gpt_neox.layers.1.attention.query_key_value.weight", (190, 64)),
        ("pythia", "gpt_neox.layers.0.attention.query_key_value.bias", (96,)),
        ("phi3", "model.layers.0.mlp.gate_up_proj.weight", (96, 64)),  # one of the two halves only
    ],
)
def test_a_fused_tensor_of_the_wrong_shape_is_refused_by_its_name(variant, tensor, shape, family, tmp_path):
    import shutil

    from safetensors.torch import load_file, save_file

    from qkv.presentation.i18n import say_error

    d = shutil.copytree(family(variant)[0], tmp_path / "bad")
    weights = load_file(str(d / "model.safetensors"))
    weights[tensor] = torch.zeros(shape)
    save_file(weights, str(d / "model.safetensors"))
    with pytest.raises(Exception) as e:
        load_pretrained(d)
    said = say_error(e.value, "en")
    assert tensor in said and str(shape) in said and "\n" not in said, said
