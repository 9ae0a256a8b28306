"""A TransformerLens patching snippet carried over to qkv.patch unchanged: the same metric functions (one run's
logits to one number, as TransformerLens's patching calls them), given to TransformerLens 4's own patching
functions on its TransformerBridge and to qkv.patch on the same random GPT-2 weights and tokens, give the
same numbers; and qkv's normalized share equals the normalized metric a TransformerLens user writes by hand."""

from __future__ import annotations

import copy
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
pytest.importorskip("transformers")
pytest.importorskip("transformer_lens")
pytest.importorskip("tokenizers")

from test_transformer_lens import CONFIGS, bridge, random_gpt2  # noqa: E402

import qkv  # noqa: E402
from qkv.presentation.i18n import say_error  # noqa: E402

ANSWER, WRONG = 5, 9


def _close(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    got, want = torch.as_tensor(got, dtype=torch.float64), want.detach().to(torch.float64)
    assert got.shape == want.shape, (what, tuple(got.shape), tuple(want.shape))
    torch.testing.assert_close(
        got, want, atol=2e-5 * max(1.0, want.abs().max().item()), rtol=1e-5, msg=lambda m: f"{what}: {m}"
    )


def test_a_transformer_lens_snippet_runs_unchanged_in_qkv_patch(tmp_path):
    from transformer_lens import patching

    hf = random_gpt2(3, **CONFIGS["gelu_new-3x16-tied"])
    ours = qkv.from_hf(hf)
    model = bridge(copy.deepcopy(hf), tmp_path, processing=False)
    clean_tokens = torch.randint(0, hf.config.vocab_size, (1, 10), generator=torch.Generator().manual_seed(1))
    corrupted_tokens = clean_tokens.clone()
    corrupted_tokens[0, 3] = (clean_tokens[0, 3] + 7) % hf.config.vocab_size
    corrupted_tokens[0, 6] = (clean_tokens[0, 6] + 1) % hf.config.vocab_size

    # ---- the snippet, as a TransformerLens user writes it (the bridge's own calls, its metric idioms)
    clean_logits, clean_cache = model.run_with_cache(clean_tokens)
    corrupted_logits = model(corrupted_tokens)

    def logit_diff(logits):
        return logits[0, -1, ANSWER] - logits[0, -1, WRONG]

    CLEAN_BASELINE = logit_diff(clean_logits).item()
    CORRUPTED_BASELINE = logit_diff(corrupted_logits).item()

    def normalized_logit_diff(logits):
        return (logit_diff(logits) - CORRUPTED_BASELINE) / (CLEAN_BASELINE - CORRUPTED_BASELINE)

    def batch_mean_diff(logits):  # the batch-of-prompts idiom: the last position's difference, averaged
        last = logits[:, -1, :]
        return (last[:, ANSWER] - last[:, WRONG]).mean()

    theirs = {
        "resid_pre": patching.get_act_patch_resid_pre,
        "attn_out": patching.get_act_patch_attn_out,
        "mlp_out": patching.get_act_patch_mlp_out,
        "z": patching.get_act_patch_attn_head_out_all_pos,
    }
    # ---- the same functions in qkv.patch: one number per patched run, though qkv batches the runs
    for site, tl_patch in theirs.items():
        for metric in (logit_diff, normalized_logit_diff, batch_mean_diff):
            want = tl_patch(model, corrupted_tokens, clean_cache, metric)
            assert (want.max() - want.min()) > 0.1, (site, metric.__name__)  # the pieces differ: a real test
            r = qkv.patch(ours, clean_tokens, corrupted_tokens, site, metric)
            _close(r.values, want, f"{site} {metric.__name__}")
            _close(r.values, qkv.patch(ours, clean_tokens, corrupted_tokens, site, metric, batch=1).values, site)
        # qkv's own metric (one number per row) and its share give the same numbers
        r = qkv.patch(ours, clean_tokens, corrupted_tokens, site, qkv.logit_diff(ANSWER, WRONG))
        _close(r.values, tl_patch(model, corrupted_tokens, clean_cache, logit_diff), f"{site} qkv.logit_diff")
        _close(r.normalized, tl_patch(model, corrupted_tokens, clean_cache, normalized_logit_diff), f"{site} share")
        assert r.clean == pytest.approx(CLEAN_BASELINE, abs=1e-4) and r.corrupted == pytest.approx(
            CORRUPTED_BASELINE, abs=1e-4
        )
        assert abs(CLEAN_BASELINE - CORRUPTED_BASELINE) > 1 and r.gap_small is False  # a property, as values is


def _refused(metric) -> tuple[str, str]:
    hf = random_gpt2(3, **CONFIGS["gelu_new-3x16-tied"])
    with pytest.raises(ValueError) as info:
        qkv.patch(qkv.from_hf(hf), [1, 2, 3, 4], [1, 6, 3, 4], "resid_pre", metric)
    en, zh = str(info.value), say_error(info.value, "zh")
    assert "\n" not in en and "\n" not in zh and en != zh
    return en, zh


def test_a_metric_giving_neither_one_number_nor_one_per_run_is_refused_in_one_line():
    en, zh = _refused(lambda logits: logits[:, -1, :2])  # two numbers per run
    assert "one number for each patched run" in en and "got 2" in en and "每次修补后的运行" in zh
    en, zh = _refused(lambda logits: "a word")
    assert "must give a number" in en and "'a word'" in en and "一个数" in zh
