"""Activation patching (qkv.analysis.patch) against patching by hand: with qkv's hooks one piece at a time,
and with plain torch hooks on the blocks and on W_O (no qkv hook involved); and the properties that must
hold whatever the weights (the clean run restored, nothing changed when the texts are equal)."""

from __future__ import annotations

import pytest
import torch

from qkv import GPT, ModelConfig, WordTokenizer
from qkv.analysis.patch import SITES, logit_diff, patch, patch_text, token_id
from qkv.core.hub.bundled import default_ckpt
from qkv.core.train.checkpoint import load
from qkv.presentation.i18n import say_error

CLEAN, CORRUPT = "我 昨天 吃了 苹果 ，", "我 上周 投资了 苹果 ，"
BASE = dict(d_vocab=23, n_ctx=12, d_model=32, n_heads=4, n_layers=3, init_std=0.3)
LLM = dict(norm="rms", mlp="gated", activation="silu", pos="rope", rope_layout="halves", bias=False, n_kv_heads=2)
CLEAN_IDS, CORRUPT_IDS = [1, 5, 7, 2, 9, 4], [1, 6, 8, 2, 9, 4]
A, W = 3, 11  # the answer and the wrong token of the random models


@pytest.fixture(scope="module")
def bundled():
    model, tokenizer = load(default_ckpt())
    return model.eval(), tokenizer


def gpt(**kw) -> GPT:
    torch.manual_seed(0)
    return GPT(ModelConfig(**{**BASE, **kw})).eval()


def metric_of(logits) -> float:
    """logit(A) - logit(W) at the last position of the one sequence, written out."""
    return float(logits[0, -1, A] - logits[0, -1, W])


def by_hand(model, clean_ids, corrupted_ids, name, put, answer=A, wrong=W) -> float:
    """The metric of the corrupted run with put(activation, clean activation) at `name`, one run."""
    _, tr = model.run_with_trace(torch.tensor([clean_ids]), names=[name])
    clean = tr[name]

    def hook(act, hook):
        act = act.clone()
        put(act, clean)
        return act

    with torch.no_grad():
        logits = model.run_with_hooks(torch.tensor([corrupted_ids]), fwd_hooks=[(name, hook)])
    return float(logits[0, -1, answer] - logits[0, -1, wrong])


def at_position(p):
    def put(act, clean):
        act[:, p] = clean[:, p]

    return put


def at_head(h):
    def put(act, clean):
        act[:, :, h] = clean[:, :, h]

    return put


@pytest.mark.parametrize("kw", [{}, LLM, dict(norm="post"), dict(mlp="none")], ids=["gpt2", "llm", "post", "attn_only"])
def test_each_piece_is_what_patching_it_by_hand_gives(kw):
    model = gpt(**kw)
    m = logit_diff(A, W)
    sites = [s for s in SITES if not (s == "mlp_out" and model.cfg.mlp == "none")]
    for site in sites:
        r = patch(model, CLEAN_IDS, CORRUPT_IDS, site, m)
        assert r.values.shape == (3, 4 if site == "z" else 6)
        name = {"z": "blocks.{L}.attn.hook_z"}.get(site, "blocks.{L}.hook_" + site)
        pieces = [(0, 1), (1, 2), (2, 3)] if site == "z" else [(0, 1), (1, 2), (2, 5), (2, 0)]
        for L, i in pieces:
            put = at_head(i) if site == "z" else at_position(i)
            want = by_hand(model, CLEAN_IDS, CORRUPT_IDS, name.format(L=L), put)
            assert r.values[L, i].item() == pytest.approx(want, rel=1e-4, abs=1e-4), (site, L, i)
        with torch.no_grad():
            assert r.clean == pytest.approx(metric_of(model(torch.tensor([CLEAN_IDS]))), abs=1e-4)
            assert r.corrupted == pytest.approx(metric_of(model(torch.tensor([CORRUPT_IDS]))), abs=1e-4)
    assert abs(r.clean - r.corrupted) > 0.1  # the two texts are told apart, so the test can fail


def everything(act, clean):
    act.copy_(clean)


@pytest.mark.parametrize("kw", [{}, LLM, dict(mlp="none")], ids=["gpt2", "llm", "attn_only"])
def test_a_whole_layer_is_what_patching_it_by_hand_gives(kw):
    """whole=True: one value per layer, the corrupted run with that layer's whole activation (every
    position, every head) from the clean run, as a hook that copies all of it gives."""
    model = gpt(**kw)
    sites = [s for s in SITES if not (s == "mlp_out" and model.cfg.mlp == "none")]
    for site in sites:
        r = patch(model, CLEAN_IDS, CORRUPT_IDS, site, logit_diff(A, W), whole=True)
        assert r.values.shape == (3,) and r.whole
        name = {"z": "blocks.{L}.attn.hook_z"}.get(site, "blocks.{L}.hook_" + site)
        for L in range(3):
            want = by_hand(model, CLEAN_IDS, CORRUPT_IDS, name.format(L=L), everything)
            assert r.values[L].item() == pytest.approx(want, rel=1e-4, abs=1e-4), (site, L)
        assert r.values[0].item() != pytest.approx(r.corrupted, abs=1e-3)  # each layer moves it: the test can fail
    assert abs(r.clean - r.corrupted) > 0.1


def test_a_whole_layer_of_z_matches_a_plain_torch_hook_on_W_O():
    """No qkv hook: all of what W_O reads (every head's z side by side, every position) from the clean run."""
    model = gpt(**LLM)
    r = patch(model, CLEAN_IDS, CORRUPT_IDS, "z", logit_diff(A, W), whole=True, batch=2)  # groups across layers
    for L in range(model.cfg.n_layers):
        W_O = model.blocks[L].attn.W_O
        clean = module_input(model, W_O, CLEAN_IDS)  # (1, T, n_heads * d_head)
        want = metric_with_input(model, W_O, CORRUPT_IDS, lambda z, clean=clean: clean.clone())
        assert r.values[L].item() == pytest.approx(want, rel=1e-4, abs=1e-4), L


def test_a_whole_layer_read_as_a_result():
    """resid_pre whole at layer 0 is the clean run; one forward per layer or batched agree; the document
    has one axis, and strongest names the layer (index 0)."""
    model = gpt(**LLM)
    r = patch(model, CLEAN_IDS, CORRUPT_IDS, "resid_pre", logit_diff(A, W), whole=True)
    assert r.values[0].item() == pytest.approx(r.clean, abs=1e-4)
    one = patch(model, CLEAN_IDS, CORRUPT_IDS, "attn_out", logit_diff(A, W), whole=True, batch=1)
    many = patch(model, CLEAN_IDS, CORRUPT_IDS, "attn_out", logit_diff(A, W), whole=True)
    assert one.values.shape == many.values.shape == (3,)
    assert torch.allclose(one.values, many.values, atol=1e-4)
    doc = many.to_json()
    assert doc["axes"] == ["layer"] and doc["values"] == many.values.tolist() and len(doc["normalized"]) == 3
    strongest = many.strongest(3)
    assert sorted(L for L, _, _ in strongest) == [0, 1, 2] and {i for _, i, _ in strongest} == {0}
    L, _, value = strongest[0]
    assert value == many.values[L].item()
    assert abs(value - many.corrupted) == (many.values - many.corrupted).abs().max().item()


def module_input(model, module, ids) -> torch.Tensor:
    """What `module` receives (its first argument) in a plain forward pass of ids: a torch pre-hook."""
    seen = []
    handle = module.register_forward_pre_hook(lambda mod, args: seen.append(args[0].clone()))
    with torch.no_grad():
        model(torch.tensor([ids]))
    handle.remove()
    return seen[0]


def metric_with_input(model, module, ids, edit) -> float:
    """The metric of a plain forward pass of ids in which `module`'s input x becomes edit(copy of x)."""
    handle = module.register_forward_pre_hook(lambda mod, args: (edit(args[0].clone()), *args[1:]))
    with torch.no_grad():
        out = metric_of(model(torch.tensor([ids])))
    handle.remove()
    return out


def test_resid_pre_matches_a_plain_torch_hook_on_each_block():
    """No qkv hook: a forward pre-hook on blocks[L] records the clean input, another puts it in."""
    model = gpt()
    r = patch(model, CLEAN_IDS, CORRUPT_IDS, "resid_pre", logit_diff(A, W), batch=5)  # groups across layers
    for L, block in enumerate(model.blocks):
        clean = module_input(model, block, CLEAN_IDS)  # (1, T, d_model)
        for p in range(len(CLEAN_IDS)):

            def put(x, p=p, clean=clean):
                x[:, p] = clean[:, p]
                return x

            want = metric_with_input(model, block, CORRUPT_IDS, put)
            assert r.values[L, p].item() == pytest.approx(want, rel=1e-4, abs=1e-4), (L, p)


def test_z_matches_a_plain_torch_hook_on_W_O():
    """No qkv hook: head h's z is columns h*d_head..(h+1)*d_head of what W_O reads (GQA: 4 heads, 2 kv)."""
    model = gpt(**LLM)
    r = patch(model, CLEAN_IDS, CORRUPT_IDS, "z", logit_diff(A, W))
    d = model.cfg.d_head
    for L in range(model.cfg.n_layers):
        W_O = model.blocks[L].attn.W_O
        clean = module_input(model, W_O, CLEAN_IDS)  # (1, T, n_heads * d_head): the heads' z side by side
        for h in range(model.cfg.n_heads):

            def put(z, h=h, clean=clean):
                z[..., h * d : (h + 1) * d] = clean[..., h * d : (h + 1) * d]
                return z

            want = metric_with_input(model, W_O, CORRUPT_IDS, put)
            assert r.values[L, h].item() == pytest.approx(want, rel=1e-4, abs=1e-4), (L, h)


def test_patching_every_position_at_layer_0_restores_the_clean_run():
    """resid_pre at layer 0 is the embedding: where the texts differ at one position only, patching that
    position is the clean run, and patching any other position changes nothing."""
    for kw in ({}, LLM):
        model = gpt(**kw)
        clean, corrupted = [1, 5, 7, 2, 9, 4], [1, 5, 8, 2, 9, 4]
        r = patch(model, clean, corrupted, "resid_pre", logit_diff(A, W))
        assert r.values[0, 2].item() == pytest.approx(r.clean, abs=1e-4)
        for p in (0, 1, 3, 4, 5):
            assert r.values[0, p].item() == pytest.approx(r.corrupted, abs=1e-4)
        assert r.normalized[0, 2].item() == pytest.approx(1.0, abs=1e-4)
        assert abs(r.clean - r.corrupted) > 0.1
        # and every position at once, by hand: the clean metric
        every = by_hand(model, clean, corrupted, "blocks.0.hook_resid_pre", lambda act, c: act.copy_(c))
        assert every == pytest.approx(r.clean, abs=1e-4)


def test_clean_equal_to_corrupted_changes_nothing(bundled):
    model, tok = bundled
    for site in ("resid_pre", "z"):
        r = patch_text(model, tok, CLEAN, CLEAN, "味道", "股价", site=site)
        assert r.clean == pytest.approx(r.corrupted, abs=1e-4)
        assert torch.allclose(r.values, torch.full_like(r.values, r.clean), atol=1e-4)
        assert r.normalized is None
        assert r.to_json(tok)["normalized"] is None


def test_in_bfloat16_patching_a_piece_by_itself_is_the_run_itself():
    """The two runs' metrics are measured on the path of the patched runs, so an unchanged piece moves
    nothing even where bfloat16's rounding is 0.4% (the metric of a z patch on the written-out path)."""
    model = gpt(**LLM).to(torch.bfloat16)
    ids = [1, 5, 7, 2, 9, 4]
    for site in ("resid_pre", "z"):
        r = patch(model, ids, ids, site, logit_diff(A, W))
        assert torch.equal(r.values, torch.full_like(r.values, r.clean)) and r.clean == r.corrupted, site
        assert r.normalized is None


def test_the_bundled_model_tells_the_two_senses_apart(bundled):
    """The fruit sentence leads to 味道 (taste), the company one to 股价 (stock price); the pieces at the
    cue word's position at layer 0 carry the whole difference (a share near 1), those at 我 nothing."""
    model, tok = bundled
    r = patch_text(model, tok, CLEAN, CORRUPT, "味道", "股价")
    assert r.clean > 0 > r.corrupted
    share = r.normalized
    assert share[0, 2] > 0.8  # 吃了/投资了 entering layer 0
    assert share[:, 0].abs().max() < 1e-4  # 我 is the same token in both: patching it does nothing
    doc = r.to_json(tok)
    assert doc["kind"] == "patching" and doc["site"] == "resid_pre" and doc["axes"] == ["layer", "pos"]
    assert doc["tokens"]["clean"] == CLEAN.split() and doc["tokens"]["corrupted"] == CORRUPT.split()
    assert (doc["answer"], doc["wrong"], doc["position"]) == ("味道", "股价", 4)
    assert doc["values"] == r.values.tolist()
    assert r.strongest(1)[0][:2] in [(L, 2) for L in range(model.cfg.n_layers)] + [(3, 4)]


def test_one_forward_per_piece_or_batched_gives_the_same_numbers():
    model = gpt(**LLM)
    for site in ("attn_out", "z"):
        one = patch(model, CLEAN_IDS, CORRUPT_IDS, site, logit_diff(A, W), batch=1)
        many = patch(model, CLEAN_IDS, CORRUPT_IDS, site, logit_diff(A, W))
        assert torch.allclose(one.values, many.values, atol=1e-4)


def test_a_metric_of_any_position_and_ids_as_tensors():
    model = gpt()
    r = patch(model, torch.tensor([CLEAN_IDS]), torch.tensor(CORRUPT_IDS), "resid_pre", logit_diff(A, W, position=1))
    # the metric at position 1 cannot see positions 2..5: patching them changes nothing
    assert torch.allclose(r.values[:, 2:], torch.full_like(r.values[:, 2:], r.corrupted), atol=1e-5)
    assert r.to_json()["position"] == 1


# ------------------------------------------------------------------ refusals, each in one line


def refused(fn, *args, **kw) -> str:
    with pytest.raises(ValueError) as info:
        fn(*args, **kw)
    en, zh = str(info.value), say_error(info.value, "zh")
    assert "\n" not in en and "\n" not in zh and en != zh
    return en


def test_what_patching_refuses(bundled):
    model, tok = bundled
    m = logit_diff(A, W)
    assert "same number of tokens" in refused(patch, gpt(), [1, 2, 3], [1, 2], "resid_pre", m)
    assert "same number of tokens" in refused(patch_text, model, tok, CLEAN, "我 吃了 苹果 ，", "味道", "股价")
    assert "unknown site" in refused(patch, gpt(), CLEAN_IDS, CORRUPT_IDS, "resid_post", m)
    assert "no MLP" in refused(patch, gpt(mlp="none"), CLEAN_IDS, CORRUPT_IDS, "mlp_out", m)
    assert "one token" in refused(token_id, tok, "味道 很")
    assert "one token" in refused(patch_text, model, tok, CLEAN, CORRUPT, "味道很甜", "股价")
    assert "out of range" in refused(patch, gpt(), CLEAN_IDS, CORRUPT_IDS, "z", logit_diff(A, W, position=6))
    assert "one number for each patched run" in refused(
        patch, gpt(), CLEAN_IDS, CORRUPT_IDS, "z", lambda logits: logits[:, -1, A:W]
    )
    words = WordTokenizer(["我", "吃了", "苹果"])
    assert "vocabulary" in refused(token_id, words, "股价")


def test_an_encoder_or_a_translation_model_is_refused():
    bert = ModelConfig(arch="bert", causal=False, norm="post", d_vocab=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    from qkv.core.model import make_model

    assert "no logits" in refused(patch, make_model(bert), [1, 2], [1, 3], "resid_pre", logit_diff(1, 2))
    s2s = ModelConfig(arch="seq2seq", d_vocab=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1, n_encoder_layers=1)
    assert "GPT" in refused(patch, make_model(s2s), [1, 2], [1, 3], "resid_pre", logit_diff(1, 2))


def refused_both(fn, *args, **kw) -> tuple[str, str]:
    """A one-line refusal, in English and in Chinese (each one line, the two different)."""
    with pytest.raises(ValueError) as info:
        fn(*args, **kw)
    en, zh = str(info.value), say_error(info.value, "zh")
    assert "\n" not in en and "\n" not in zh and en != zh
    return en, zh


def test_the_answer_and_the_wrong_word_must_differ(bundled):
    model, tok = bundled
    en, zh = refused_both(patch_text, model, tok, CLEAN, CORRUPT, "很", "很")
    assert "the same ('很')" in en and "同一个（'很'）" in zh
    en, zh = refused_both(patch, gpt(), CLEAN_IDS, CORRUPT_IDS, "z", logit_diff(A, A))
    assert "the same (id 3)" in en and "id 3" in zh


def test_unequal_lengths_show_both_texts_as_tokens(bundled):
    """A word the vocabulary lacks is split (榴莲 -> 榴|莲): the refusal shows where the extra token comes from."""
    model, tok = bundled
    split = [tok.display(i) for i in tok.encode("我 昨天 吃了 榴莲 ，")]
    assert split == ["我", "昨天", "吃了", "榴", "莲", "，"]  # how this tokenizer reads it, independently
    en, zh = refused_both(patch_text, model, tok, "我 昨天 吃了 榴莲 ，", CORRUPT, "味道", "股价")
    for said in (en, zh):
        assert "我|昨天|吃了|榴|莲|，" in said and "我|上周|投资了|苹果|，" in said
    assert "6 tokens" in en and "6 个词元" in zh
    en, zh = refused_both(patch, gpt(), [1, 2, 3], [1, 2], "resid_pre", logit_diff(A, W))
    assert "(1|2|3)" in en and "(1|2)" in en and "1|2|3" in zh


def test_patch_checks_its_arguments_in_one_line():
    model, m = gpt(), logit_diff(A, W)
    en, zh = refused_both(patch, model, CLEAN_IDS, CORRUPT_IDS, m)  # the site forgotten: the metric in its place
    assert "site must be one of resid_pre, attn_out, mlp_out, z" in en and "LogitDiff(" in en
    assert "resid_pre, attn_out, mlp_out, z" in zh
    assert "metric must be a function" in refused_both(patch, model, CLEAN_IDS, CORRUPT_IDS, "z")[0]
    assert "metric must be a function" in refused_both(patch, model, CLEAN_IDS, CORRUPT_IDS, "z", 3.0)[0]
    assert "unknown site 'resid'" in refused_both(patch, model, CLEAN_IDS, CORRUPT_IDS, "resid", m)[0]
    for batch in (0, -2, 1.5, True):
        assert "batch must be" in refused_both(patch, model, CLEAN_IDS, CORRUPT_IDS, "z", m, batch=batch)[0]


def test_a_small_gap_between_the_runs_is_flagged(bundled):
    """gap_small for a logit difference: |clean - corrupted| under 1 logit, the two runs' metrics taken
    here from plain forward passes; a share is still given (normalized as before)."""
    model, tok = bundled

    def by_forward(text) -> float:
        ids = tok.encode(text)
        with torch.no_grad():
            logits = model(torch.tensor([ids]))
        return float(logits[0, -1, tok.encode("味道")[0]] - logits[0, -1, tok.encode("股价")[0]])

    for corrupted in (CORRUPT, "我 昨天 吃了 香蕉 ，", "我 今天 吃了 苹果 ，"):
        r = patch_text(model, tok, CLEAN, corrupted, "味道", "股价")
        gap = abs(by_forward(CLEAN) - by_forward(corrupted))
        assert abs(gap - 1.0) > 1e-3  # not at the edge, where rounding could decide
        doc = r.to_json(tok)
        assert doc["gap_small"] is (gap < 1.0) and r.gap_small is (gap < 1.0), corrupted
        assert doc["normalized"] is not None
    assert patch_text(model, tok, CLEAN, CORRUPT, "味道", "股价").gap_small is False  # the example: 10 apart
    assert patch_text(model, tok, CLEAN, "我 昨天 吃了 香蕉 ，", "味道", "股价").gap_small is True
    assert patch_text(model, tok, CLEAN, CLEAN, "味道", "股价").to_json(tok)["gap_small"] is True  # no gap at all


def test_for_any_other_metric_the_gap_is_small_next_to_the_pieces_effects():
    """A metric of unknown unit: small when some piece's share is beyond +-2 (it moves the metric more than
    twice the whole gap), whatever the metric's scale."""
    model = gpt()
    seen = set()
    for clean, corrupted in (
        (CLEAN_IDS, CORRUPT_IDS),
        ([1, 5, 7, 2, 9, 4], [1, 5, 8, 2, 9, 4]),
        (CLEAN_IDS, [1, 4, 7, 11, 9, 4]),
    ):
        for scale in (1e-3, 1.0, 1e3):
            r = patch(
                model, clean, corrupted, "resid_pre", lambda logits, s=scale: s * (logits[:, -1, A] - logits[:, -1, W])
            )
            want = bool(r.normalized.abs().max() > 2)
            assert r.gap_small is want and r.to_json()["gap_small"] is want
            seen.add(want)
    assert seen == {True, False}  # both cases met


@pytest.mark.parametrize("whole", [False, True])
def test_patching_builds_no_autograd_graph(whole):
    """Every forward pass patching runs has gradients off (no graph kept for the clean activations)."""
    model = gpt()
    grad_on = []
    for block in model.blocks:
        block.register_forward_pre_hook(lambda module, args: grad_on.append(torch.is_grad_enabled()))
    patch(model, CLEAN_IDS, CORRUPT_IDS, "resid_pre", logit_diff(A, W), whole=whole)
    assert grad_on and not any(grad_on)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_whole_layer_document_is_drawn_as_a_table_and_a_figure(lang, tmp_path):
    """The one-axis document (one number per layer) reads as one column: a row per layer with its value
    and share, the strongest pieces named by layer; the heat map has one column of n_layers cells."""
    from matplotlib.image import imread

    from qkv.presentation.patching_table import render
    from qkv.presentation.plot_patching import patching_heatmap

    r = patch(gpt(**LLM), CLEAN_IDS, CORRUPT_IDS, "attn_out", logit_diff(A, W), whole=True)
    doc = r.to_json()
    text = render(doc, lang)
    rows = [line for line in text.splitlines() if line.lstrip().startswith(("layer", "层"))]
    assert len(rows) >= 3  # the table's three rows (the strongest pieces may add lines that start so)
    for L in range(3):
        assert f"{doc['values'][L]:.3f}" in text and f"({doc['normalized'][L]:.2f})" in text
    assert ("whole layer" if lang == "en" else "整层") in text and (
        "every position" if lang == "en" else "所有位置"
    ) in text
    path = patching_heatmap(doc, tmp_path / "whole.png", lang=lang)
    assert imread(path).shape[0] > 0
