"""Gemma 2, Gemma 3 (text) and OLMo-2 directories (save_pretrained layout) against transformers and TransformerLens.

qkv reads each small random directory (gemma_olmo_dirs.py) with load_pretrained (no transformers involved)
and must give transformers' logits, every layer's attention pattern and 20 greedy tokens (past the sliding
window); decoding from the KV cache must give the full forward's logits, past the window too; TransformerLens
4's bridge must see the same activations under the names both record; the checks pass and the page's view
document is made. (The switches, trained from scratch, and the refusals: test_gemma_olmo2_switches.py.)
"""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")

from gemma_olmo_dirs import ATOL, IDS, VARIANTS, WINDOW, family  # noqa: E402, F401 (fixture)

from qkv.core.decode.sample import generate_ids  # noqa: E402
from qkv.core.see.invariants import check  # noqa: E402

pytestmark = pytest.mark.slow  # each builds and saves a transformers model


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_logits_patterns_and_greedy_tokens_are_transformers(variant, family):
    d, hf, model, _ = family(variant)
    with torch.no_grad():
        out = hf(IDS, output_attentions=True)
        fused = model(IDS)
    logits, trace = model.run_with_trace(IDS)
    assert out.logits.abs().max() > 2.0  # not a near-zero model (and Gemma 2's cap of 4 bites: tanh(0.5) = 0.46)
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
    assert len(want) == 20  # 25 tokens, past the window of 6
    assert list(generate_ids(model, prompt, 20, temperature=0)) == want

    report = check(trace, max_hull_points=64)
    assert report.passed, str(report)


def test_the_gemma_switches_are_read_and_bite(family):
    """What config.json says is in the qkv config, and each part changes the numbers it should."""
    _, _, g2, _ = family("gemma2")
    c = g2.cfg
    assert (c.norm_placement, c.layer_types, c.sliding_window, c.d_head, c.activation) == (
        "sandwich",
        "lg",
        WINDOW,
        32,
        "gelu_tanh",
    )
    assert (c.attn_scale, c.attn_scores_soft_cap, c.output_logits_soft_cap, c.embed_scale) == (24**0.5, 3.0, 4.0, True)
    _, trace = g2.run_with_trace(IDS[:1])
    scores = trace["blocks.0.attn.hook_attn_scores"]
    assert scores[torch.isfinite(scores)].abs().max() <= 3.0  # capped at 3, and some near it
    assert scores[torch.isfinite(scores)].abs().max() > 2.0
    for layer, slides in enumerate((True, False, True, False)):  # Gemma 2: layer 0 slides, layer 1 is global
        seen = (trace["pattern", layer][0, :, -1] > 0).sum(-1)  # the last query's keys with weight, per head
        assert (seen == (WINDOW if slides else IDS.shape[1])).all(), (layer, seen)

    _, _, g3, _ = family("gemma3")
    c = g3.cfg
    # l, l, g, l: the shortest pattern that repeats to it is "llg"
    assert (c.layer_types, c.rope_base, c.rope_base_local, c.rope_linear_factor, c.qk_norm) == (
        "llg",
        1000.0,
        50.0,
        4.0,
        True,
    )
    assert g3.blocks[0].attn.window == WINDOW and g3.blocks[2].attn.window is None
    thetas = [g3.blocks[i].attn.rope.theta for i in (0, 2)]
    assert thetas[0][1].item() == pytest.approx(50.0 ** (-2 / 32)) and thetas[1][1].item() == pytest.approx(
        1000.0 ** (-2 / 32) / 4.0
    )
    assert not g3.cfg.tie_embeddings and g2.cfg.tie_embeddings

    _, _, olmo, _ = family("olmo2")
    c = olmo.cfg
    assert (c.norm_placement, c.qk_norm, c.qk_norm_width, c.sliding_window) == ("output", True, "all", None)
    assert olmo.blocks[0].attn.q_norm.weight.shape == (64,) and olmo.blocks[0].attn.k_norm.weight.shape == (32,)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_decoding_from_the_cache_gives_the_full_forward_past_the_window(variant, family):
    _, _, model, _ = family(variant)
    ids = IDS[:1, :30]
    with torch.no_grad():
        full = model(ids)  # (1, 30, d_vocab)
        cache = model.new_cache(1)
        torch.testing.assert_close(model(ids[:, :4], cache), full[:, :4], atol=ATOL, rtol=0)
        # a chunk after cached tokens whose window reaches back into them
        torch.testing.assert_close(model(ids[:, 4:13], cache), full[:, 4:13], atol=ATOL, rtol=0)
        step = model.stepper()
        for t in range(13, 30):  # one token at a time, the fused kernel (soft-capped: written out), far past the window
            torch.testing.assert_close(step(ids[:, t], cache), full[:, t], atol=ATOL, rtol=0)
    assert cache.length == 30


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_batched_generation_with_padding_is_each_prompt_alone(variant, family):
    from qkv.core.decode.sample import generate_batch

    _, _, model, _ = family(variant)
    prompts = [IDS[0, :3].tolist(), IDS[1, :9].tolist()]  # rows of different lengths: the short one is padded
    together = generate_batch(model, prompts, 12, temperature=0)
    alone = [list(generate_ids(model, p, 12, temperature=0)) for p in prompts]
    assert [list(r) for r in together] == alone


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_shared_hook_holds_transformer_lens_value(variant, family):
    pytest.importorskip("transformer_lens")
    from transformer_lens.model_bridge import TransformerBridge

    d, _, model, _ = family(variant)
    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(d / "tokenizer.json"))
    bridge = TransformerBridge.boot_transformers(str(d), tokenizer=tok, device="cpu")
    bridge.enable_compatibility_mode(disable_warnings=True, no_processing=True)
    bridge.set_use_attn_result(True)  # hook_result: each head's z_h W_O[h], as qkv records it
    ids = IDS[:, :16]  # longer than the window
    logits, trace = model.run_with_trace(ids)
    with torch.no_grad():
        tl_logits, cache = bridge.run_with_cache(ids)
    tl = {name: cache[name] for name in cache.keys()}
    torch.testing.assert_close(logits, tl_logits, atol=1e-4, rtol=0)
    L = model.cfg.n_layers
    shared = [name for name in trace if name in tl]
    assert set(trace) - set(shared) <= {f"blocks.{i}.attn.hook_dots" for i in range(L)} | {"logits", "probs"}
    # the post-sub-layer norms and the raw outputs before them are TransformerLens's names too
    own = ("ln1_post.hook_out", "ln2_post.hook_scale", "attn.hook_out", "mlp.hook_out", "hook_attn_out", "hook_mlp_out")
    assert {f"blocks.{i}.{n}" for i in range(L) for n in own} <= set(shared)
    if variant != "olmo2":
        assert {f"blocks.{i}.ln1.hook_normalized" for i in range(L)} <= set(shared)
    for name in shared:
        ours, theirs = trace[name], tl[name]
        if name.endswith(("hook_q_normed", "hook_k_normed")):
            # TransformerLens records a q/k norm's output as the norm gives it: OLMo-2's over the whole
            # projection (B, T, heads * d_head), Gemma 3's per head (B, heads, T, d_head); qkv's per head
            # (B, T, heads, d_head)
            theirs = theirs.view(ours.shape) if theirs.dim() == 3 else theirs.transpose(1, 2)
        assert ours.shape == theirs.shape, (name, ours.shape, theirs.shape)
        if name.endswith(
            "hook_attn_scores"
        ):  # the same mask (-inf: the causal one and the window), then the same numbers
            masked = torch.isneginf(theirs)
            assert torch.equal(torch.isneginf(ours), masked), name
            ours, theirs = ours.masked_fill(masked, 0.0), theirs.masked_fill(masked, 0.0)
        torch.testing.assert_close(ours, theirs, atol=1e-4, rtol=0, msg=lambda m, name=name: f"{name}: {m}")


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_page_view_document_is_made(variant, family):
    from qkv.apps.web.view import view

    _, _, model, tok = family(variant)
    text = "the cat sat on the mat. the dog ate an apple."
    doc = view(model, tok, text)
    n = len(tok.encode(text))
    assert n > WINDOW
    cfg = model.cfg
    assert doc["arrays"]["pattern"]["shape"] == [cfg.n_layers, cfg.n_heads, n, n]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_origin_document_rebuilds_the_traced_dots_within_the_window(variant, family):
    """The page's origin panel recomputes one head's q . k from x (OLMo-2: the q/k norm over every head at
    once): its dots are the trace's, and a sliding-window layer lists only the keys in its window."""
    from qkv.analysis.origin import origin

    _, _, model, tok = family(variant)
    doc = origin(model, tok, text="the cat sat on the mat. the dog ate an apple.", layer=0, head=1, token=-1)
    i = len(doc["ids"]) - 1
    assert i >= WINDOW
    _, trace = model.run_with_trace(torch.tensor([doc["ids"]]))
    dots = trace["blocks.0.attn.hook_dots"][0, 1, i]  # (T_key,)
    keys = [k["pos"] for k in doc["keys"]]
    assert keys == list(range(i + 1 - WINDOW if variant.startswith("gemma") else 0, i + 1))
    got = torch.tensor([k["dot"] for k in doc["keys"]], dtype=torch.float32)
    torch.testing.assert_close(got, dots[keys], atol=1e-5, rtol=0)
    assert doc["keys"][-1]["scaled"] == pytest.approx(doc["keys"][-1]["dot"] / (model.cfg.attn_scale or 4.0))


# bfloat16 logits of qkv against transformers' bfloat16 forward, both of the same bfloat16 weights. Measured
# (4 layers, |logits| up to 3.9): max |diff| 0.086 (gemma2), 0.109 (gemma3), 0.102 (olmo2), mean 0.011 to 0.014;
# qkv's own error against the float32 forward 0.073 / 0.118 / 0.082, transformers' 0.046 / 0.086 / 0.110. The two
# round in different places (Gemma keeps 1 + w in float32 and rounds after the weight, qkv adds the 1 as it loads
# the weight; OLMo-2 also rounds after the weight), so no closer.
BF16_MAX, BF16_MEAN = 0.15, 0.02


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_bfloat16_directory_loads_as_bfloat16_or_float32(variant, tmp_path):
    from gemma_olmo_dirs import random_model, save_dir, tokenizer_for

    from qkv.core.hub.pretrained import load_pretrained

    d = save_dir(random_model(variant).to(torch.bfloat16), tmp_path / "bf16", tokenizer_for(variant))
    model, _ = load_pretrained(d, dtype="bfloat16")
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    load = transformers.AutoModelForCausalLM.from_pretrained
    hf = load(d, dtype=torch.bfloat16, attn_implementation="eager").eval()
    as32, _ = load_pretrained(d, dtype="float32")  # the bfloat16 numbers, exactly, as float32
    with torch.no_grad():
        got, want = model(IDS), hf(IDS).logits
        exact = load(d, dtype=torch.float32, attn_implementation="eager").eval()(IDS).logits
        torch.testing.assert_close(as32(IDS), exact, atol=ATOL, rtol=0)
    diff = (got.float() - want.float()).abs()
    assert diff.max().item() <= BF16_MAX and diff.mean().item() <= BF16_MEAN, (diff.max(), diff.mean())
    ours, theirs = ((x.float() - exact).abs().max().item() for x in (got, want))
    assert ours <= 2 * theirs, (ours, theirs)


def test_the_explanation_of_a_sliding_soft_capped_head_says_so(family, capsys):
    """qkv explain on a Gemma 2 head: only the window's keys are rows (no -inf among them), and the window, the
    scale and the soft-cap are each said, in English and in Chinese."""
    from cli_util import run_ok

    d, _, model, _ = family("gemma2")
    text = "the cat sat on the mat. the dog ate an apple."
    out, _ = run_ok(capsys, ["explain", text, "--ckpt", str(d), "--layer", "0", "--head", "1", "--lang", "en"])
    assert "sliding window" in out and "soft-capped" in out and "query_pre_attn_scalar" in out
    assert "inf" not in out and "NaN" not in out
    zh, _ = run_ok(capsys, ["explain", text, "--ckpt", str(d), "--layer", "0", "--head", "1", "--lang", "zh"])
    assert "滑动窗口" in zh and "软上限" in zh
    global_layer, _ = run_ok(capsys, ["explain", text, "--ckpt", str(d), "--layer", "1", "--head", "1"])
    assert "sliding window" not in global_layer and "soft-capped" in global_layer


@pytest.mark.parametrize("variant", ["gemma2", "olmo2"])
def test_the_tokenizer_reads_as_transformers(variant, family):
    """Gemma's layout (▁ pieces, byte fallback, <bos> first) and OLMo-2's byte-level BPE, read by qkv's own
    tokenizers (hub/adapters/llama.py's read_tokenizer): transformers' ids and decoded text."""
    d, _, _, tok = family(variant)
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(d / "tokenizer.json"))
    for text in ("hello world", "two  spaces", "我昨天吃了苹果。", "zq!\n"):
        ids = tok.encode(text)
        assert ids == hf.encode(text), text
        body = ids[1:] if variant.startswith("gemma") else ids  # Gemma's <bos> first, shown as its piece
        assert tok.decode(body) == hf.decode(body), text
    assert (tok.kind == "pieces") == variant.startswith("gemma")


def test_a_gemma_text_that_starts_with_a_space_decodes_with_it(family):
    d, _, _, tok = family("gemma2")
    body = tok.encode(" two")[1:]
    assert tok.decode(body) == transformers.PreTrainedTokenizerFast(tokenizer_file=str(d / "tokenizer.json")).decode(
        body
    )


def test_the_heads_summary_names_the_sliding_layers_smaller_spread(family, capsys):
    from cli_util import run_ok

    d = family("gemma2")[0]
    text = "the cat sat on the mat. the dog ate an apple."
    out, _ = run_ok(capsys, ["explain", text, "--ckpt", str(d), "--lang", "en"])
    assert f"Layers 0, 2 attend within a sliding window of {WINDOW} tokens" in out
    zh, _ = run_ok(capsys, ["explain", text, "--ckpt", str(d), "--lang", "zh"])
    assert f"层 0、2 只在 {WINDOW} 个词元的滑动窗口内" in zh
    short, _ = run_ok(capsys, ["explain", "the cat", "--ckpt", str(d)])  # within the window: nothing to say
    assert "sliding window" not in short
