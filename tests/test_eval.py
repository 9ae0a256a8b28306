"""qkv eval (qkv.core.train.evaluate): its windows score every token after the first exactly once, its
loss is transformers' own on the same windows (a random GPT-2 and a random Llama directory), its
--stride matches the hand loop of Hugging Face's perplexity guide, its bytes are counted alike by a
character tokenizer and a byte-level BPE, and its refusals are one line in each language."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from cli_util import run_error, run_ok
from llm_dirs import family, tokenizer  # noqa: F401 (fixtures: family needs tokenizer)
from test_cli_refusals import is_chinese
from test_pretrained_dirs import bert_dir, gpt2_dir  # noqa: F401 (fixtures)

import qkv
from qkv.core.train import evaluate as ev
from qkv.core.train.checkpoint import load

os.environ.setdefault("HF_HUB_OFFLINE", "1")
TRANSLATOR = str(Path(qkv.__file__).resolve().parent / "assets" / "translate")
KEYS = {"loss", "perplexity", "bits_per_byte", "tokens", "bytes", "windows"}
# a text both random models' tokenizers spell (their BPEs were trained on such words), 200+ tokens
TEXT = "the cat sat on the mat. the dog ate an apple, and 我 吃了 苹果 。\n" * 6


@pytest.mark.parametrize("ctx", [1, 2, 3, 7])
@pytest.mark.parametrize("stride", [None, 1, 2, 3, 7])
def test_every_token_after_the_first_is_scored_once(ctx, stride):
    if stride is not None and stride > ctx:
        return
    for n in range(0, 40):
        w = list(ev.windows(n, ctx, stride))
        assert len(w) == ev.count_windows(n, ctx, stride)
        assert [i for _, e, s in w for i in range(s, e + 1)] == list(range(1, n))
        assert all(0 < e - b <= ctx and b < s <= e for b, e, s in w)
        if stride is not None and stride < ctx:  # after the first, each window reads ctx - stride ids first
            assert all(s - b - 1 == ctx - stride for b, e, s in w[1:] if e - b == ctx)


def test_the_windows_break_the_bound_never():
    """A large vocabulary makes fewer rows a batch: batch x window x vocab <= LOGITS_BUDGET, at least one."""
    assert ev.batch_rows(1024, 49152, None) * 1024 * 49152 <= ev.LOGITS_BUDGET
    assert ev.batch_rows(1024, 49152, 64) == 1
    assert ev.batch_rows(8192, 151936, None) == 1  # one window, even past the budget
    assert ev.batch_rows(64, 500, None) == ev.MAX_BATCH and ev.batch_rows(64, 500, 3) == 3


def _hf_labels_total(hf, ids: list[int], ctx: int, stride: int | None) -> tuple[float, int]:
    """(summed nats, scored tokens) from transformers' own loss: each window's ids as input_ids and as
    labels, the ones an earlier window scored (and the window's first) set to -100, loss x count."""
    total, count = 0.0, 0
    x = torch.tensor(ids)
    for b, e, s in ev.windows(len(ids), ctx, stride):
        labels = x[b : e + 1].clone()  # (T+1,): transformers shifts them itself
        labels[: s - b] = -100
        with torch.no_grad():
            out = hf(input_ids=x[b : e + 1][None], labels=labels[None])
        n = int((labels[1:] != -100).sum())
        total, count = total + out.loss.item() * n, count + n
    return total, count


@pytest.mark.slow
@pytest.mark.parametrize("stride", [None, 5])
def test_gpt2_directory_loss_is_transformers_own(gpt2_dir, stride):  # noqa: F811
    d, hf = gpt2_dir
    model, tok = load(d)
    got = ev.evaluate_text(model, tok, TEXT, ctx=16, stride=stride, batch=3)
    total, count = _hf_labels_total(hf, tok.encode(TEXT), 16, stride)
    assert got.tokens == count == len(tok.encode(TEXT)) - 1
    assert got.loss == pytest.approx(total / count, rel=1e-5)
    assert got.perplexity == pytest.approx(math.exp(total / count), rel=1e-5)


@pytest.mark.slow
def test_llama_directory_loss_is_transformers_own(family):  # noqa: F811
    d, hf, model = family("llama")
    _, tok = load(d)
    for stride in (None, 7):
        got = ev.evaluate_text(model, tok, TEXT, ctx=24, stride=stride)
        total, count = _hf_labels_total(hf, tok.encode(TEXT), 24, stride)
        assert got.tokens == count
        assert got.loss == pytest.approx(total / count, rel=1e-5)


@pytest.mark.slow
def test_stride_matches_the_perplexity_guides_hand_loop(gpt2_dir):  # noqa: F811
    """Hugging Face's guide: windows of ctx (+1) ids moved on `stride`, only the new targets scored."""
    d, hf = gpt2_dir
    model, tok = load(d)
    ids = torch.tensor(tok.encode(TEXT))
    ctx, stride, nats, scored, prev_end = 20, 6, 0.0, 0, 0
    for begin in range(0, len(ids) - 1, stride):
        end = min(begin + ctx + 1, len(ids))
        with torch.no_grad():
            logits = hf(ids[begin : end - 1][None]).logits[0]  # (T, vocab)
        new = end - max(prev_end, begin + 1)  # targets no window before scored: the last `new`
        nats += F.cross_entropy(logits[-new:], ids[end - new : end], reduction="sum").item()
        scored, prev_end = scored + new, end
        if end == len(ids):
            break
    got = ev.evaluate_text(model, tok, TEXT, ctx=ctx, stride=stride, batch=2)
    assert got.tokens == scored == len(ids) - 1
    assert got.loss == pytest.approx(nats / scored, rel=1e-5)
    assert got.windows == ev.count_windows(len(ids), ctx, stride)


@pytest.mark.slow
def test_a_char_and_a_byte_level_tokenizer_count_the_same_bytes(runs, gpt2_dir):  # noqa: F811
    """The same text: bytes are its UTF-8 bytes less the first token's, which for these two (both write
    the text back unchanged) is the bytes of the tokens scored; "\\n" is the first token of both."""
    from conftest import TEXT as CORPUS

    text = "\n" + CORPUS[:400]
    char_model, char_tok = load(runs["base"])
    bpe_model, bpe_tok = load(gpt2_dir[0])
    assert char_tok.kind == "char" and bpe_tok.token_bytes(bpe_tok.encode(text)[0]) == b"\n"
    results = []
    for model, tok in ((char_model, char_tok), (bpe_model, bpe_tok)):
        r = ev.evaluate_text(model, tok, text)
        ids = tok.encode(text)
        assert r.bytes == sum(len(tok.token_bytes(i)) for i in ids[1:]) == len(text.encode("utf-8")) - 1
        assert r.bits_per_byte == pytest.approx(r.loss * r.tokens / (math.log(2) * r.bytes), rel=1e-12)
        results.append(r)
    assert results[0].bytes == results[1].bytes
    assert results[0].tokens > results[1].tokens  # a character a token: more tokens for the same bytes


@pytest.mark.slow
def test_a_first_token_that_is_part_of_a_character_counts_its_own_bytes(gpt2_dir):  # noqa: F811
    _, tok = load(gpt2_dir[0])
    text = "龘 the cat"  # not in the BPE's training text: three byte tokens
    ids = tok.encode(text)
    assert tok.token_bytes(ids[0]) == "龘".encode()[:1]
    assert ev.scored_bytes(tok, text, ids) == len(text.encode("utf-8")) - 1


@pytest.mark.slow
def test_cli_json_keys_and_the_text_block(runs, tmp_path, capsys):
    p = tmp_path / "t.txt"
    p.write_text("\n" + TEXT.split("我")[0] * 20, encoding="utf-8")
    out, err = run_ok(capsys, ["eval", "--ckpt", str(runs["base"]), "--text", str(p), "--format", "json"])
    doc = json.loads(out)
    assert KEYS <= set(doc) and doc["stride"] is None and doc["ctx"] == 16
    assert doc["perplexity"] == pytest.approx(math.exp(doc["loss"]))
    assert "window" in err  # the progress bar, on stderr
    out, err = run_ok(capsys, ["eval", "--ckpt", str(runs["base"]), "--text", str(p), "--quiet", "--stride", "4"])
    assert err == "" and "bits per byte" in out and "moved on 4" in out
    out, _ = run_ok(capsys, ["eval", "--ckpt", str(runs["base"]), "--text", str(p), "--quiet", "--lang", "zh"])
    assert "每字节比特" in out and f"{doc['loss']:.4f}" in out


def _files(tmp_path) -> dict[str, str]:
    (tmp_path / "empty.txt").write_text("  \n", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("café au lait\n".encode("latin-1"))
    (tmp_path / "one.txt").write_text("我", encoding="utf-8")
    (tmp_path / "ok.txt").write_text("我 吃了 苹果 。\n" * 3, encoding="utf-8")
    (tmp_path / "dir").mkdir()
    return {
        k: str(tmp_path / v)
        for k, v in (
            ("empty", "empty.txt"),
            ("latin1", "latin1.txt"),
            ("one", "one.txt"),
            ("ok", "ok.txt"),
            ("dir", "dir"),
            ("missing", "nope.txt"),
        )
    }


REFUSED = [
    ["--text", "{missing}"],
    ["--text", "{dir}"],
    ["--text", "{empty}"],
    ["--text", "{latin1}"],
    ["--text", "{one}"],
    ["--text", "{ok}", "--stride", "0"],
    ["--text", "{ok}", "--ctx", "100000"],
    ["--text", "{ok}", "--batch", "0"],
    ["--text", "{ok}", "--ckpt", TRANSLATOR],
    ["--text", "{ok}", "--ckpt", "{missing}"],
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("argv", REFUSED, ids=lambda a: " ".join(a[2:]) or a[1])
def test_refusals_are_one_line_in_each_language(argv, lang, tmp_path, capsys):
    files = _files(tmp_path)
    typed = ["eval", *(a.format(**files) for a in argv), "--lang", lang]
    line = run_error(capsys, typed) if lang == "en" else _zh_error(capsys, typed)
    assert line


def _zh_error(capsys, argv) -> str:
    from qkv.apps.cli import main

    assert main(argv) != 0
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err + out, err
    assert is_chinese(lines[0], argv), lines[0]
    return lines[0]


@pytest.mark.slow
def test_an_encoder_is_refused(bert_dir, tmp_path, capsys):  # noqa: F811
    p = tmp_path / "t.txt"
    p.write_text("the cat sat on the mat.\n", encoding="utf-8")
    line = run_error(capsys, ["eval", "--ckpt", str(bert_dir[0]), "--text", str(p)])
    assert "does not predict the next token" in line


def _reference_nats(model, ids: list[int], ctx: int, stride: int | None) -> float:
    """Summed nats from the model's own whole logits, window by window (no batching, no slicing)."""
    x, total = torch.tensor(ids), 0.0
    with torch.no_grad():
        for b, e, s in ev.windows(len(ids), ctx, stride):
            logits = model(x[b:e][None])[0]  # (T, d_vocab)
            total += F.cross_entropy(logits[s - b - 1 :], x[s : e + 1], reduction="sum").item()
    return total


@pytest.mark.parametrize("cap", [None, 3.0])
def test_logits_made_a_slice_at_a_time_give_the_same_loss(cap, monkeypatch):
    """With a budget of 3 positions' logits: the unembedding reads at most 3 rows at once (or, for a
    soft-capped model, the whole window's logits are made), the loss is unchanged, the head put back."""
    from qkv.core.model.gpt import GPT
    from qkv.core.spec.config import ModelConfig
    from qkv.core.text.tokenizers.words import CharTokenizer

    text = "abcab cabba cbacb\n" * 4
    tok = CharTokenizer.train(text)
    torch.manual_seed(0)
    cfg = ModelConfig(d_vocab=tok.vocab_size, n_ctx=16, d_model=16, n_heads=2, n_layers=1, output_logits_soft_cap=cap)
    model = GPT(cfg).eval()
    head, seen = model.unembed, []
    head.register_forward_hook(lambda m, i, o: seen.append(i[0].shape[:-1].numel()))
    monkeypatch.setattr(ev, "LOGITS_BUDGET", 3 * tok.vocab_size)
    for stride in (None, 5):
        seen.clear()
        got = ev.evaluate_text(model, tok, text, ctx=12, stride=stride, batch=4)
        assert seen and (max(seen) <= 3) == (cap is None)  # the rows the unembedding read at once
        want = _reference_nats(model, tok.encode(text), 12, stride) / got.tokens
        assert got.loss == pytest.approx(want, rel=1e-5)
    assert model.unembed is head
