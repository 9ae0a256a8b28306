"""qkv's trace against TransformerLens 4 itself: the same random GPT-2, the same tokens, every shared name.

The reference is TransformerLens's TransformerBridge in compatibility mode (HookedTransformer's hook
names). Weight processing is off (`no_processing=True`) for the full comparison: TransformerLens's
default folds each LayerNorm's scale and shift into the next matrices and centres the residual
stream, which moves most activations to another coordinate system. A second test keeps that
default and compares the names it cannot move: a LayerNorm's hook_scale and hook_normalized (the
centring cancels in x - mean(x)), q, k, the scores, the pattern, the MLP and the log-probabilities.
Offline: the bridge gets a local config, the model object and a tokenizer built in memory.
"""

from __future__ import annotations

import copy
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")
pytest.importorskip("transformer_lens")
tokenizers = pytest.importorskip("tokenizers")

from transformer_lens.model_bridge import TransformerBridge  # noqa: E402

from qkv import from_hf, trace_names  # noqa: E402

transformers.logging.set_verbosity_error()

CONFIGS = {
    "gelu_new-3x16-tied": dict(
        n_embd=48,
        n_head=3,
        n_layer=2,
        n_positions=20,
        vocab_size=101,
        activation_function="gelu_new",
        tie_word_embeddings=True,
    ),
    "relu-4x8-untied-n_inner": dict(
        n_embd=32,
        n_head=4,
        n_layer=3,
        n_positions=24,
        vocab_size=67,
        n_inner=50,
        activation_function="relu",
        tie_word_embeddings=False,
    ),
}
QKV_ONLY = {"hook_dots", "logits", "probs"}  # names TransformerLens does not record (docs/trace-format.md)


def random_gpt2(seed: int, **kw):
    """A GPT2LMHeadModel with random weights, and LayerNorms whose scales and shifts are far from 1 and 0."""
    hc = transformers.GPT2Config(
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=None, eos_token_id=None, pad_token_id=None, **kw
    )
    model = transformers.GPT2LMHeadModel(hc)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g)
            is_ln = ".ln_" in name
            p.copy_(noise * 0.5 + 1.0 if is_ln and name.endswith("weight") else noise * (0.5 if is_ln else 0.3))
    return model.eval()


def bridge(hf_model, directory, processing: bool):
    """TransformerLens 4's bridge around hf_model, in compatibility mode, with per-head results."""
    hf_model.config.save_pretrained(directory)  # the bridge reads the config from a directory
    vocab = {str(i): i for i in range(hf_model.config.vocab_size)}
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="0"))
    )
    b = TransformerBridge.boot_transformers(str(directory), hf_model=hf_model, tokenizer=tok)
    b.enable_compatibility_mode(disable_warnings=True, no_processing=not processing)
    b.set_use_attn_result(True)
    return b


def tolerance(want: torch.Tensor) -> dict:
    """float32 rounding, relative to the size of the tensor's numbers (different matmul orders)."""
    finite = want[torch.isfinite(want)]
    size = max(1.0, finite.abs().max().item()) if finite.numel() else 1.0
    return dict(atol=2e-5 * size, rtol=1e-5)


def assert_same(name: str, got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.shape == want.shape, (name, tuple(got.shape), tuple(want.shape))
    if name.endswith("hook_attn_scores"):  # masked keys: -inf in both (compatibility mode masks with -inf)
        assert torch.equal(torch.isneginf(got), torch.isneginf(want)), name  # the same mask, not a number
        masked = torch.isneginf(want)
        got, want = got.masked_fill(masked, 0.0), want.masked_fill(masked, 0.0)
    torch.testing.assert_close(got, want, **tolerance(want), msg=lambda m: f"{name}: {m}")


def run_both(config: str, tmp_path, processing: bool = False):
    hf = random_gpt2(len(config), **CONFIGS[config])
    ours = from_hf(hf)
    theirs = bridge(copy.deepcopy(hf), tmp_path, processing)
    n_ctx, d_vocab = hf.config.n_positions, hf.config.vocab_size
    ids = torch.randint(0, d_vocab, (2, n_ctx), generator=torch.Generator().manual_seed(1))
    logits, trace = ours.run_with_trace(ids)
    with torch.no_grad():
        tl_logits, cache = theirs.run_with_cache(ids)
    return ours, logits, trace, tl_logits, {name: cache[name] for name in cache.keys()}


@pytest.mark.parametrize("config", list(CONFIGS))
def test_every_shared_hook_holds_transformer_lens_value(config, tmp_path):
    ours, logits, trace, tl_logits, tl = run_both(config, tmp_path)
    L = ours.cfg.n_layers
    shared = [name for name in trace if name in tl]
    assert shared == [n for n in trace_names(ours.cfg) if n.split(".")[-1] not in QKV_ONLY]
    ln = {
        f"{where}.{hook}"
        for where in [f"blocks.{i}.{s}" for i in range(L) for s in ("ln1", "ln2")] + ["ln_final"]
        for hook in ("hook_scale", "hook_normalized", "hook_out")
    }
    assert ln <= set(shared) and len(shared) == 2 + 20 * L + 3  # embed, pos; 20 per block; ln_final's three
    assert set(trace) - set(shared) == {f"blocks.{i}.attn.hook_dots" for i in range(L)} | {"logits", "probs"}
    for name in shared:
        assert_same(name, trace[name], tl[name])
    assert_same("logits", logits, tl_logits)
    # the LayerNorm scale and shift matter here, so a normalized taken after them would have failed above
    assert (trace["blocks.0.ln1.hook_out"] - trace["blocks.0.ln1.hook_normalized"]).abs().max() > 0.1


def test_transformer_lens_weight_processing_leaves_the_layer_norm_scale_and_normalized(tmp_path):
    """TransformerLens's default compatibility mode folds LN into W_Q, W_K, W_V, W_in and centres the
    stream: hook_scale and hook_normalized, q, k, the pattern and the MLP keep their values."""
    ours, logits, trace, tl_logits, tl = run_both("gelu_new-3x16-tied", tmp_path, processing=True)
    kept = (
        "hook_scale",
        "hook_normalized",
        "hook_q",
        "hook_k",
        "hook_attn_scores",
        "hook_pattern",
        "hook_pre",
        "hook_post",
    )
    names = [n for n in trace if n.endswith(kept)]
    assert len(names) == 2 * 10 + 2  # per block: ln1, ln2 (2 each), q, k, scores, pattern, mlp pre and post
    for name in names:
        assert_same(name, trace[name], tl[name])
    assert_same("log-probabilities", logits.log_softmax(-1), tl_logits.log_softmax(-1))  # the unembedding is centred
    moved = (trace["blocks.0.ln1.hook_out"] - tl["blocks.0.ln1.hook_out"]).abs().max()
    assert moved > 0.1  # folded: TransformerLens's LN output is its normalized vector, ours keeps scale and shift


def _hooks_both_ways(n_heads: int):
    """The same edits for both libraries: zero one head's z, halve a residual stream, make a pattern uniform,
    double a LayerNorm's scale, and swap two positions of the MLP's hidden units (in place)."""

    def zero_head(z, hook):  # (B, T, n_heads, d_head)
        out = z.clone()
        out[:, :, n_heads - 1] = 0
        return out

    def uniform(pattern, hook):  # (B, n_heads, T, T)
        visible = torch.ones_like(pattern).tril()
        return visible / visible.sum(-1, keepdim=True)

    def swap(post, hook):
        post[:, [0, 1]] = post[:, [1, 0]].clone()

    return [
        ("blocks.0.attn.hook_z", zero_head),
        ("blocks.1.hook_resid_pre", lambda x, hook: x * 0.5),
        ("blocks.1.attn.hook_pattern", uniform),
        ("blocks.0.ln2.hook_scale", lambda s, hook: s * 2.0),
        ("blocks.1.mlp.hook_post", swap),
    ]


@pytest.mark.parametrize("config", list(CONFIGS))
def test_run_with_hooks_edits_as_transformer_lens_does(config, tmp_path):
    hf = random_gpt2(len(config), **CONFIGS[config])
    ours = from_hf(hf)
    theirs = bridge(copy.deepcopy(hf), tmp_path, processing=False)
    ids = torch.randint(0, hf.config.vocab_size, (2, hf.config.n_positions), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        plain = ours(ids)
        for one in _hooks_both_ways(ours.cfg.n_heads):
            got, want = ours.run_with_hooks(ids, fwd_hooks=[one]), theirs.run_with_hooks(ids, fwd_hooks=[one])
            assert not torch.allclose(got, plain, atol=1e-3), one[0]  # each edit changes the logits
            assert_same(f"logits after an edit of {one[0]}", got, want)
        every = _hooks_both_ways(ours.cfg.n_heads)
        assert_same(
            "logits after every edit",
            ours.run_with_hooks(ids, fwd_hooks=every),
            theirs.run_with_hooks(ids, fwd_hooks=every),
        )


def test_activation_patching_gives_transformer_lens_patching_numbers(tmp_path):
    """qkv.patch against TransformerLens's own patching functions, on the same GPT-2 weights and tokens:
    the residual stream, attention and MLP outputs per (layer, position), and z per (layer, head)."""
    from transformer_lens import patching

    from qkv import logit_diff, patch

    hf = random_gpt2(3, **CONFIGS["gelu_new-3x16-tied"])
    ours = from_hf(hf)
    theirs = bridge(copy.deepcopy(hf), tmp_path, processing=False)
    clean = torch.randint(0, hf.config.vocab_size, (1, 10), generator=torch.Generator().manual_seed(0))
    corrupted = clean.clone()
    corrupted[0, 3] = (clean[0, 3] + 7) % hf.config.vocab_size
    corrupted[0, 6] = (clean[0, 6] + 1) % hf.config.vocab_size
    metric = lambda logits: logits[0, -1, 5] - logits[0, -1, 9]  # noqa: E731
    with torch.no_grad():
        _, cache = theirs.run_with_cache(clean)
    theirs_by_site = {
        "resid_pre": patching.get_act_patch_resid_pre,
        "attn_out": patching.get_act_patch_attn_out,
        "mlp_out": patching.get_act_patch_mlp_out,
        "z": patching.get_act_patch_attn_head_out_all_pos,
    }
    for site, tl_patch in theirs_by_site.items():
        want = tl_patch(theirs, corrupted, cache, metric).double()
        got = torch.as_tensor(patch(ours, clean, corrupted, site, logit_diff(5, 9)).values, dtype=torch.float64)
        assert got.shape == want.shape, site
        assert want.abs().max() > 0.1 and (want.max() - want.min()) > 0.1, site  # the pieces differ: a real test
        torch.testing.assert_close(got, want, atol=2e-5 * max(1.0, want.abs().max().item()), rtol=1e-5, msg=site)
