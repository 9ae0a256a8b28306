"""Hooks that edit (qkv.core.see.hooks, nn/tap.py): against raw torch hooks, the trace, generation, translation,
every family and both paths, threads, and bad hooks."""

from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest
import torch

from qkv.analysis.ablate import heads_off
from qkv.core.decode.beam import greedy
from qkv.core.decode.sample import generate_batch, generate_ids
from qkv.core.model import make_model
from qkv.core.see import tap
from qkv.core.spec.config import ModelConfig

IDS = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6, 5, 3]])
GPT_KINDS = {
    "gpt2": dict(pos="learned", norm="pre"),
    "llm": dict(
        pos="rope", norm="rms", mlp="gated", activation="silu", n_kv_heads=2, rope_layout="halves", qk_norm=True
    ),
    "post": dict(pos="sinusoidal", norm="post"),
    "attn-only": dict(pos="learned", norm="pre", mlp="none"),
}


def build(seed: int = 0, **kw):
    torch.manual_seed(seed)
    cfg = ModelConfig(**{"d_vocab": 23, "n_ctx": 24, "d_model": 32, "n_heads": 4, "n_layers": 3, **kw})
    model = make_model(cfg).eval()
    with torch.no_grad():  # weights far from GPT-2's small init, so that every edit shows
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.2)
    return model


@contextmanager
def registered(handle):
    """A raw torch hook (the handle register_forward_hook returns) for the length of the block."""
    try:
        yield handle
    finally:
        handle.remove()


def halve(x, hook):
    return x * 0.5


@pytest.fixture(params=list(GPT_KINDS))
def gpt(request):
    return build(**GPT_KINDS[request.param])


def test_an_edit_of_the_residual_stream_is_a_raw_torch_pre_hook(gpt):
    with torch.no_grad():
        with registered(gpt.blocks[1].register_forward_pre_hook(lambda m, args: (args[0] * 0.5, *args[1:]))):
            want = gpt(IDS)
        got = gpt.run_with_hooks(IDS, fwd_hooks=[("blocks.1.hook_resid_pre", halve)])
        assert not torch.allclose(got, gpt(IDS), atol=1e-3)  # the edit mattered
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_zeroing_a_head_z_is_zeroing_its_columns_into_w_o(gpt):
    """A raw hook on W_O's input (the heads' z side by side) against a hook on hook_z, in place."""
    d = gpt.cfg.d_head

    def raw(module, args):
        z = args[0].clone()  # (B, T, n_heads * d_head)
        z[..., 2 * d : 3 * d] = 0
        return (z,)

    def zero_head_2(z, hook):  # (B, T, n_heads, d_head): edited in place, nothing returned
        z[:, :, 2] = 0

    with torch.no_grad():
        with registered(gpt.blocks[0].attn.W_O.register_forward_pre_hook(raw)):
            want = gpt(IDS)
        got = gpt.run_with_hooks(IDS, fwd_hooks=[("blocks.0.attn.hook_z", zero_head_2)])
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_an_edited_trace_is_consistent_and_is_what_was_computed(gpt):
    """resid_post of L is resid_pre of L+1 in the trace too, and the edited trace's logits are the hooked run's."""
    edit = [("blocks.1.hook_resid_pre", lambda x, hook: x.flip(1))]  # a replacement, not an in-place edit
    with torch.no_grad():
        hooked = gpt.run_with_hooks(IDS, fwd_hooks=edit)
        with gpt.hooks(edit):
            logits, trace = gpt.run_with_trace(IDS)
        _, clean = gpt.run_with_trace(IDS)
    torch.testing.assert_close(logits, hooked, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(trace["blocks.1.hook_resid_pre"], clean["blocks.0.hook_resid_post"].flip(1))
    assert torch.equal(trace["blocks.0.hook_resid_post"], trace["blocks.1.hook_resid_pre"])
    assert torch.equal(trace["blocks.0.hook_resid_pre"], clean["blocks.0.hook_resid_pre"])  # before the edit: as it was
    assert torch.equal(trace["logits"], logits)


def test_fused_and_written_out_paths_run_the_same_hooks(gpt):
    with torch.no_grad():
        plain = gpt(IDS)
    for name in ("blocks.1.hook_resid_mid", "blocks.0.hook_attn_out", "blocks.2.attn.hook_v", "hook_embed"):
        with torch.no_grad(), gpt.hooks([(name, halve)]):
            assert not tap.explicit()  # these names are formed on the fused path: it stays fused
            fused, written = gpt(IDS), gpt(IDS, explicit=True)
        assert not torch.allclose(fused, plain, atol=1e-3)
        torch.testing.assert_close(fused, written, rtol=1e-4, atol=1e-5)


def test_a_hook_on_the_pattern_takes_the_written_out_path():
    model = build()
    seen = []

    def uniform(pattern, hook):  # (B, n_heads, T, T): every visible key the same weight
        seen.append(tap.explicit())
        visible = torch.ones_like(pattern).tril()
        return visible / visible.sum(-1, keepdim=True)

    with torch.no_grad():
        got = model.run_with_hooks(IDS, fwd_hooks=[("blocks.0.attn.hook_pattern", uniform)])
        _, tr = model.run_with_trace(IDS, names=["blocks.0.attn.hook_v", "blocks.0.ln1.hook_out"])
        with model.hooks([("blocks.0.attn.hook_pattern", uniform)]):
            _, edited = model.run_with_trace(IDS, names=["blocks.0.attn.hook_z"])
    assert seen and all(seen)
    T = IDS.shape[1]
    v = tr["blocks.0.attn.hook_v"][0]  # (T, n_heads, d_head)
    means = v.cumsum(0) / torch.arange(1, T + 1)[:, None, None]  # z_i = the mean of v_0 .. v_i
    torch.testing.assert_close(edited["blocks.0.attn.hook_z"][0], means, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(got, model(IDS), atol=1e-3)


def test_a_head_result_edit_is_summed_into_the_attention_output():
    model = build()

    def drop(result, hook):  # (B, T, n_heads, d_model)
        out = result.clone()
        out[:, :, 1] = 0
        return out

    with torch.no_grad():
        got = model.run_with_hooks(IDS, fwd_hooks=[("blocks.1.attn.hook_result", drop)])
        with heads_off(model, [(1, 1)]):
            want = model(IDS)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_a_frozen_layer_norm_scale_divides_by_the_given_number():
    model = build()
    with torch.no_grad():
        _, tr = model.run_with_trace(IDS, names=["blocks.2.hook_resid_post"])
        x = tr["blocks.2.hook_resid_post"]
        two = lambda scale, hook: torch.full_like(scale, 2.0)
        got = model.run_with_hooks(IDS, fwd_hooks=[("ln_final.hook_scale", two)])
        ln = model.ln_final
        want = model.unembed((x - x.mean(-1, keepdim=True)) / 2.0 * ln.weight + ln.bias)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_generation_with_the_cache_runs_the_hooks_at_every_token(gpt):
    """Greedy tokens with hooks on (KV cache, one forward per new token) are the argmax of full hooked passes."""
    edit = [("blocks.1.attn.hook_z", lambda z, hook: z * torch.tensor([1.0, 0.0, 1.0, 0.0]).view(1, 1, 4, 1))]
    prompt = IDS[0, :4].tolist()
    with gpt.hooks(edit):
        got = list(generate_ids(gpt, prompt, 12, temperature=0.0))
        rows = generate_batch(gpt, [prompt, prompt[:2]], 6, temperature=0.0)
    context = list(prompt)
    with torch.no_grad():
        for _ in range(12):
            context.append(int(gpt.run_with_hooks(torch.tensor([context]), fwd_hooks=edit)[0, -1].argmax()))
    assert got == context[len(prompt) :]
    assert rows[0] == got[:6]
    assert got != list(generate_ids(gpt, prompt, 12, temperature=0.0))  # the hook changed what is written


def test_translation_runs_the_hooks_in_both_stacks():
    model = build(arch="seq2seq", n_layers=2, pos="sinusoidal", norm="pre")
    src = torch.tensor([[5, 6, 7, 8, 9]])
    edit = [
        ("encoder.blocks.0.hook_resid_post", halve),
        ("decoder.blocks.1.cross_attn.hook_z", lambda z, hook: z.flip(2)),
    ]
    with model.hooks(edit):
        got = greedy(model, src, max_len=8)[0].ids
        uncached = greedy(model, src, max_len=8, use_cache=False)[0].ids
    prefix = [1]  # <s>
    with torch.no_grad():
        for _ in range(len(got)):
            prefix.append(int(model.run_with_hooks(src, torch.tensor([prefix]), fwd_hooks=edit)[0, -1].argmax()))
    assert got == uncached == prefix[1:]
    assert got != greedy(model, src, max_len=8)[0].ids


def test_an_encoder_edit_is_a_raw_pre_hook_on_its_block():
    model = build(arch="bert", causal=False, norm="post", n_token_types=2)
    mask = torch.ones_like(IDS)
    mask[0, -3:] = 0
    with torch.no_grad():
        with registered(
            model.blocks[2].register_forward_pre_hook(lambda m, args, kw: ((args[0] + 1.0,), kw), with_kwargs=True)
        ):
            want = model(IDS, attention_mask=mask)
        got = model.run_with_hooks(
            IDS, attention_mask=mask, fwd_hooks=[("blocks.2.hook_resid_pre", lambda x, h: x + 1.0)]
        )
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_grouped_key_value_heads_are_edited_in_their_own_shape():
    model = build(**GPT_KINDS["llm"])
    d, n_q = model.cfg.d_head, model.cfg.n_heads * model.cfg.d_head

    def raw(module, args, out):  # W_QKV's output: q (n_heads), k (n_kv_heads), v (n_kv_heads) side by side
        out = out.clone()
        out[..., n_q + 2 * d + d : n_q + 2 * d + 2 * d] = 0  # v of key/value head 1
        return out

    def zero_kv_head_1(v, hook):
        assert v.shape[2] == model.cfg.n_kv_heads  # (B, T, n_kv_heads, d_head)
        v[:, :, 1] = 0

    with torch.no_grad():
        with registered(model.blocks[1].attn.W_QKV.register_forward_hook(raw)):
            want = model(IDS)
        got = model.run_with_hooks(IDS, fwd_hooks=[("blocks.1.attn.hook_v", zero_kv_head_1)])
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_hooks_are_removed_after_an_error_and_belong_to_their_model():
    model, other = build(0), build(1)
    with torch.no_grad():
        plain, plain_other = model(IDS), other(IDS)
        with pytest.raises(RuntimeError, match="boom"):
            with model.hooks([("hook_embed", halve)]):
                raise RuntimeError("boom")
        assert torch.equal(model(IDS), plain)

        def boom(x, hook):
            raise RuntimeError("boom in a hook")

        with pytest.raises(RuntimeError, match="boom in a hook"):
            model.run_with_hooks(IDS, fwd_hooks=[("blocks.0.hook_resid_post", boom)])
        assert torch.equal(model(IDS), plain) and not tap.hooked(model)
        with model.hooks([("hook_embed", halve)]):
            assert torch.equal(other(IDS), plain_other)  # another model inside the block is not touched
            _, tr = other.run_with_trace(IDS, names=["hook_embed"])
            assert not torch.equal(model(IDS), plain)
        torch.testing.assert_close(tr["hook_embed"], other.embed(IDS))


def test_threads_do_not_see_each_others_hooks_or_traces():
    model = build()
    with torch.no_grad():
        plain = model(IDS)
        edited = model.run_with_hooks(IDS, fwd_hooks=[("blocks.1.hook_resid_pre", halve)])
    results, errors = {"plain": [], "edited": [], "traced": []}, []
    start = threading.Barrier(3)

    def run(kind):
        try:
            start.wait()
            with torch.no_grad():
                for _ in range(30):
                    if kind == "edited":
                        with model.hooks([("blocks.1.hook_resid_pre", halve)]):
                            results[kind].append(model(IDS))
                    elif kind == "traced":
                        results[kind].append(model.run_with_trace(IDS, names=["blocks.1.hook_resid_pre"]))
                    else:
                        results[kind].append(model(IDS))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(torch.equal(x, plain) for x in results["plain"])
    assert all(torch.allclose(x, edited, atol=1e-6) for x in results["edited"])
    for logits, trace in results["traced"]:
        assert list(trace) == ["blocks.1.hook_resid_pre"] and torch.allclose(logits, plain, atol=1e-5)


def test_bad_hooks_are_refused_in_one_line():
    model = build()
    cases = [
        ([("blocks.0.attn.hook_patern", halve)], "did you mean 'blocks.0.attn.hook_pattern'"),
        ([("probs", halve)], "hook 'logits' instead"),
        ([("blocks.9.hook_resid_pre", halve)], "no activation named"),
        ([("hook_embed",)], "a hook is a pair"),
        ([(3, halve)], "a string or a function"),
        ([("hook_embed", lambda x, h: x[:, :2])], "must return None or a tensor of shape"),
        ([("hook_embed", lambda x, h: "x")], "returned str"),
    ]
    for fwd_hooks, message in cases:
        with pytest.raises(ValueError, match=message) as e:
            model.run_with_hooks(IDS, fwd_hooks=fwd_hooks)
        assert "\n" not in str(e.value)
    assert not tap.hooked(model)


def test_a_predicate_names_every_matching_activation_and_hook_knows_its_layer():
    model = build()
    layers = []

    def note(x, hook):
        layers.append((hook.name, hook.layer()))

    with torch.no_grad():
        model.run_with_hooks(IDS, fwd_hooks=[(lambda name: name.endswith("hook_resid_pre") or name == "logits", note)])
    assert layers == [(f"blocks.{L}.hook_resid_pre", L) for L in range(3)] + [("logits", None)]


def test_an_in_place_edit_of_a_heads_result_counts():
    model = build()

    def drop_in_place(result, hook):  # (B, T, n_heads, d_model), nothing returned
        result[:, :, 1] = 0

    with torch.no_grad():
        got = model.run_with_hooks(IDS, fwd_hooks=[("blocks.1.attn.hook_result", drop_in_place)])
        with heads_off(model, [(1, 1)]):
            want = model(IDS)
        assert not torch.allclose(got, model(IDS), atol=1e-3)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_bfloat16_edits_in_place_count_and_a_hook_that_changes_nothing_changes_nothing():
    model = build(**GPT_KINDS["llm"]).to(torch.bfloat16)
    with torch.no_grad():
        plain = model(IDS)
        same = model.run_with_hooks(IDS, fwd_hooks=[("blocks.1.ln1.hook_scale", lambda s, hook: s.clone())])
        assert torch.equal(same, model(IDS, explicit=True))  # the written-out path, with nothing changed
        torch.testing.assert_close(same.float(), plain.float(), rtol=0, atol=0.1)
        doubled = model.run_with_hooks(IDS, fwd_hooks=[("blocks.1.ln1.hook_scale", lambda s, hook: s * 2)])
        in_place = model.run_with_hooks(IDS, fwd_hooks=[("blocks.1.ln1.hook_scale", lambda s, hook: s.mul_(2))])
        assert torch.equal(in_place, doubled) and not torch.equal(doubled, same)

        def negate_last(x, hook):  # in place, on a bfloat16 stream the trace keeps float32 copies of
            x[:, -1] = -x[:, -1]

        with model.hooks([("blocks.1.hook_resid_pre", negate_last)]):
            _, tr = model.run_with_trace(IDS)
    assert torch.equal(tr["blocks.0.hook_resid_post"], tr["blocks.1.hook_resid_pre"])
    assert torch.equal(tr["blocks.1.hook_resid_pre"][0, -1], -tr["blocks.1.hook_resid_pre"][0, -1].neg())


def test_a_hook_that_reads_the_position_decodes_alike_alone_and_in_a_batch(gpt):
    def negate_last(x, hook):  # generation with the cache: the last position is the new token
        x[:, -1] = -x[:, -1]

    prompt = IDS[0, :4].tolist()
    with gpt.hooks([("blocks.1.hook_resid_pre", negate_last)]):
        alone = [list(generate_ids(gpt, p, 8, temperature=0.0)) for p in (prompt, prompt[:2])]
        rows, scores = zip(*generate_batch(gpt, [prompt, prompt[:2]], 8, temperature=0.0, return_logits=True))
    assert list(rows) == alone
    assert all(s.shape == (8, gpt.cfg.d_vocab) for s in scores)


def test_a_generator_asks_for_the_hooks_at_every_token():
    model = build()

    def seven(logits, hook):  # every next token becomes 7
        logits[..., 7] += 1e4

    tokens = generate_ids(model, IDS[0, :4].tolist(), 6, temperature=0.0)
    first = next(tokens)  # drawn before the hooks are on: the model's own choice
    with model.hooks([("logits", seven)]):
        rest = list(tokens)
    assert first == int(model(IDS[:, :4])[0, -1].argmax()) and first != 7
    assert rest == [7] * 5


def test_one_models_hooks_and_traces_live_inside_anothers():
    a, b = build(0), build(1)
    with torch.no_grad():
        b_plain, b_halved = b(IDS), b.run_with_hooks(IDS, fwd_hooks=[("hook_embed", halve)])
        seen = {}

        def run_b(x, hook):  # a hook of A that runs B, hooked and traced (kept from A's first pass, its trace)
            if not seen:
                seen["hooked"] = b.run_with_hooks(IDS, fwd_hooks=[("hook_embed", halve)])
                seen["traced"] = b.run_with_trace(IDS, names=["hook_embed"])
                seen["plain"] = b(IDS)

        with a.hooks([("blocks.0.hook_resid_post", run_b)]):
            _, trace_a = a.run_with_trace(IDS, names=["hook_embed"])
            with b.hooks([("hook_embed", halve)]):  # B's hooks inside A's: each model its own
                assert torch.equal(b(IDS), b_halved)
                assert not torch.equal(a(IDS), a.run_with_hooks(IDS, fwd_hooks=[("hook_embed", halve)]))
    assert torch.equal(seen["hooked"], b_halved) and torch.equal(seen["plain"], b_plain)
    logits_b, trace_b = seen["traced"]
    torch.testing.assert_close(logits_b, b_plain, rtol=1e-5, atol=1e-5)  # B's own trace, unedited (written out)
    assert torch.equal(trace_b["hook_embed"], b.embed(IDS))
    assert torch.equal(trace_a["hook_embed"], a.embed(IDS))
