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
