"""The head detector (qkv.analysis.head_scores) against TransformerLens 4's own detect_head, run on its
TransformerBridge around the same random GPT-2 and the same tokens (its patterns, its detection patterns,
its score); and against heads whose patterns are known by construction: a model whose weights make head 0
look at the previous token, and a hook that gives a head the pattern of a perfect induction head (the
expected scores counted here with plain loops). The text table of presentation.heads_table, and bad input."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from qkv.analysis import head_scores as hs
from qkv.analysis.head_scores import KINDS, head_scores
from qkv.core.model import make_model
from qkv.core.see.indices import TextError
from qkv.core.spec.config import ModelConfig
from qkv.presentation.heads_table import render
from qkv.presentation.i18n import say_error


def uniform_score(T: int, marked) -> float:
    """The score of a head spreading evenly over keys 0..i, for marked(i) -> the keys marked in row i."""
    return sum(len(marked(i)) / (i + 1) for i in range(T)) / T


def test_scores_are_transformer_lens_detect_head(tmp_path):
    pytest.importorskip("transformer_lens")
    from test_transformer_lens import CONFIGS, bridge, random_gpt2
    from transformer_lens import head_detector

    from qkv import from_hf

    hf = random_gpt2(7, **CONFIGS["relu-4x8-untied-n_inner"])  # 3 layers x 4 heads, n_ctx 24
    ours = from_hf(hf)
    theirs = bridge(copy.deepcopy(hf), tmp_path, processing=False)
    s = head_scores(ours, seed=3, n_seqs=3, half=10)  # 21 tokens: detect_head wants 1 < T < n_ctx
    assert s.tokens.shape == (3, 21)
    # detect_head tokenizes each text it is given: text "b" is our sequence b, (1, T); a list of them, (n, T)
    theirs.to_tokens = lambda seq: s.tokens[[int(q) for q in seq] if isinstance(seq, list) else [int(seq)]]
    seqs = [str(b) for b in range(3)]
    names = {"previous": "previous_token_head", "duplicate": "duplicate_token_head", "induction": "induction_head"}
    for kind, name in names.items():
        want = head_detector.detect_head(theirs, seqs, name)  # its defaults: "mul", nothing excluded
        torch.testing.assert_close(s[kind], want.double(), atol=1e-5, rtol=1e-5)
    first = torch.zeros(21, 21)
    first[:, 0] = 1.0  # qkv's own kind, as a detection pattern of TransformerLens's
    want = torch.stack([head_detector.detect_head(theirs, q, first) for q in seqs]).mean(0)
    torch.testing.assert_close(s["first"], want.double(), atol=1e-5, rtol=1e-5)
    assert s["induction"].std() > 1e-3  # random heads, not all alike


def previous_token_model(n_ctx: int = 16):
    """One layer, two heads, no norm: positions one-hot in the first n_ctx coordinates (tokens elsewhere);
    head 0's q_i = e_i and k_j = 80 e_{j+1}, so q_i . k_j / sqrt(d_head) is 20 at j = i - 1 and 0 elsewhere;
    head 1 has W_Q = W_K = 0: even weights."""
    d = 2 * n_ctx
    cfg = ModelConfig(d_vocab=40, n_ctx=n_ctx, d_model=d, n_heads=2, n_layers=1, norm="none", bias=False)
    torch.manual_seed(0)
    model = make_model(cfg).eval()
    with torch.no_grad():
        model.embed.weight[:, :n_ctx] = 0.0
        model.pos_embed.W_pos.zero_()
        model.pos_embed.W_pos[:, :n_ctx] = torch.eye(n_ctx)
        W = model.blocks[0].attn.W_QKV.weight  # (3 * n_heads * d_head, d_model): W_Q's rows, W_K's, W_V's
        W[: 2 * d].zero_()
        for c in range(n_ctx):
            W[c, c] = 1.0  # head 0's q[c] = x[c]
            if c >= 1:
                W[d + c, c - 1] = 80.0  # head 0's k[c] = 80 x[c - 1]
    return model


def test_a_head_built_to_look_at_the_previous_token():
    model = previous_token_model()
    s = head_scores(model, seed=1, n_seqs=4, half=7)
    T = 15
    _, tr = model.run_with_trace(s.tokens)
    A = tr["pattern", 0][:, 0]  # (B, T, T): the construction worked
    assert A.diagonal(offset=-1, dim1=-2, dim2=-1).min() > 0.999  # A[b, i, i - 1]
    assert s["previous"][0, 0] == pytest.approx((T - 1) / T, abs=1e-4)  # every row but the first, all of it
    assert s["first"][0, 0] == pytest.approx(2 / T, abs=1e-4)  # row 0 has only itself; row 1 its previous
    assert s["duplicate"][0, 0] < 1e-4 and s["induction"][0, 0] < 1e-4
    assert s.best("previous")[:2] == (0, 0)
    # head 1 spreads evenly: it scores what a head spreading evenly scores, counted here by hand
    assert s["previous"][0, 1] == pytest.approx(uniform_score(T, lambda i: [i - 1] if i else []), abs=1e-6)
    assert s["first"][0, 1] == pytest.approx(uniform_score(T, lambda i: [0]), abs=1e-6)
    assert s.baselines["previous"] == pytest.approx(float(s["previous"][0, 1]), abs=1e-6)


def induction_rows(tokens: list[int]) -> list[int | None]:
    """For each query, the key a perfect induction head reads: after the latest earlier copy; None: no copy."""
    out = []
    for i, t in enumerate(tokens):
        copies = [j for j in range(i) if tokens[j] == t]
        out.append(copies[-1] + 1 if copies else None)
    return out


def test_a_head_given_an_induction_pattern_by_a_hook():
    model = previous_token_model()
    tokens = hs.repeated_tokens(model, None, 3, 7, seed=5)  # (3, 15)
    B, T = tokens.shape

    def induction(pattern, hook):  # (B, n_heads, T, T): head 1 reads the token after the earlier copy
        pattern = pattern.clone()
        pattern[:, 1] = 0.0
        for b in range(B):
            for i, j in enumerate(induction_rows(tokens[b].tolist())):
                pattern[b, 1, i, 0 if j is None else j] = 1.0
        return pattern

    with model.hooks(fwd_hooks=[("blocks.0.attn.hook_pattern", induction)]):
        s = head_scores(model, tokens=tokens)
    rows = [induction_rows(tokens[b].tolist()) for b in range(B)]
    with_copy = np.mean([sum(j is not None for j in r) / T for r in rows])
    assert with_copy == pytest.approx(7 / 15)  # the repeat: every query of the second half has its copy
    assert s["induction"][0, 1] == pytest.approx(with_copy, abs=1e-9)
    assert s["first"][0, 1] == pytest.approx(1 - with_copy, abs=1e-9)  # the rows without a copy read position 0
    assert s["duplicate"][0, 1] == pytest.approx(0.0, abs=1e-9)  # j - 1 is the copy, never j itself
    assert s.seed is None and torch.equal(s.tokens, tokens)


class Stub:
    """A tokenizer as head_scores reads one: its vocabulary's size, its special tokens, what it starts with."""

    def __init__(self, vocab_size, special=(), start=()):
        self.vocab_size, self.special, self.start = vocab_size, set(special), list(start)

    def encode(self, text):
        return self.start + [1] * len(text)


def test_random_tokens_are_seeded_repeated_and_ordinary():
    model = make_model(ModelConfig(d_vocab=60, n_ctx=64, d_model=16, n_heads=2, n_layers=2)).eval()
    tok = Stub(50, special={0, 1, 2})  # ids 50..59 are padding rows of the embedding
    s = head_scores(model, tok, seed=4)
    B, T = s.tokens.shape
    assert T == 1 + 2 * hs.HALF and B == hs.N_SEQS
    half = s.tokens[:, 1 : 1 + hs.HALF]
    assert torch.equal(half, s.tokens[:, 1 + hs.HALF :])  # the second half repeats the first
    assert int(s.tokens.min()) >= 3 and int(s.tokens.max()) < 50
    assert all(len(set(row.tolist())) == hs.HALF + 1 for row in s.tokens[:, : 1 + hs.HALF])  # no other repeats
    again = head_scores(model, tok, seed=4)
    assert torch.equal(again.tokens, s.tokens) and all(torch.equal(again[k], s[k]) for k in KINDS)
    assert not torch.equal(head_scores(model, tok, seed=5).tokens, s.tokens)
    starts = head_scores(model, Stub(50, special={7}, start=[7]), seed=4).tokens
    assert starts[:, 0].tolist() == [7] * B and 7 not in starts[:, 1:].flatten().tolist()
    short = make_model(ModelConfig(d_vocab=60, n_ctx=9, d_model=16, n_heads=2, n_layers=1))
    assert head_scores(short).tokens.shape[1] == 9  # n_ctx bounds the length


def test_the_work_is_bounded(monkeypatch):
    model = make_model(ModelConfig(d_vocab=60, n_ctx=64, d_model=16, n_heads=2, n_layers=2))
    T = 1 + 2 * hs.HALF
    monkeypatch.setattr(hs, "SCORE_WORK", 3 * model.num_params() * T)  # as if 3 sequences' worth
    assert head_scores(model).tokens.shape == (3, T)
    monkeypatch.setattr(hs, "SCORE_WORK", 1)
    assert head_scores(model).tokens.shape == (1, T)  # at least one
    assert head_scores(model, n_seqs=2).tokens.shape == (2, T)  # asked for: as asked


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_text_table_names_the_strongest_head_of_each_kind(lang):
    model = previous_token_model()
    s = head_scores(model, seed=2, n_seqs=2, half=7)
    text = render(s, lang)
    blocks = text.strip().split("\n\n")
    assert len(blocks) == 1 + len(KINDS)
    for kind, block in zip(KINDS, blocks[1:]):
        lines = block.splitlines()
        assert len(lines) == 1 + 1 + model.cfg.n_layers + 1  # title, heads, one row per layer, strongest
        numbers = [float(x) for x in lines[2].split()[-2:]]  # layer 0's row: one number per head
        np.testing.assert_allclose(numbers, s[kind][0].numpy(), atol=5e-4)
        L, H = np.unravel_index(int(np.argmax(s[kind].numpy())), s[kind].shape)
        assert f"{L}" in lines[-1] and f"{H}" in lines[-1] and f"{s[kind].max():.3f}" in lines[-1]
    if lang == "zh":
        assert "层 0" in text and "头 0" in blocks[1].splitlines()[-1]


def refused(fn, *args, **kw) -> dict[str, str]:
    with pytest.raises(TextError) as e:
        fn(*args, **kw)
    said = {lang: say_error(e.value, lang) for lang in ("en", "zh")}
    assert all(s and "\n" not in s for s in said.values()) and said["en"] != said["zh"], said
    return said


def test_bad_input_is_one_line_in_both_languages():
    encoder = make_model(
        ModelConfig(arch="bert", causal=False, norm="post", d_vocab=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    )
    assert "编码器" in refused(head_scores, encoder)["zh"]
    refused(head_scores, make_model(ModelConfig(d_vocab=20, n_ctx=4, d_model=8, n_heads=2, n_layers=1)))
    model = make_model(ModelConfig(d_vocab=20, n_ctx=16, d_model=8, n_heads=2, n_layers=1))
    refused(head_scores, model, tokens=torch.tensor([[1, 2, 30]]))
    refused(head_scores, model, tokens=torch.zeros(1, 17, dtype=torch.long))
    refused(head_scores, model, Stub(3, special={0, 1, 2}))


@pytest.mark.parametrize(
    "lang,stands,none",
    [
        ("en", "Strongest “{}” head", "No head stands out as a head of kind “{}”"),
        ("zh", "最强的“{}”头", "没有哪个头明显是“{}”头"),
    ],
)
def test_a_best_head_near_an_even_spread_is_not_called_the_strongest(lang, stands, none):
    """Head 0 looks at the previous token, head 1 spreads evenly: only the previous kind has a head at least
    1.5 times the even one (head 1's own score, the baseline counted independently of s.baselines)."""
    from qkv.presentation.i18n import t

    model = previous_token_model()
    s = head_scores(model, seed=2, n_seqs=2, half=7)
    blocks = render(s, lang).strip().split("\n\n")[1:]
    for kind, block in zip(KINDS, blocks):
        ratio = float(s[kind].max()) / float(s[kind][0, 1])
        name = t(f"interpret.short_{kind}", lang)
        last = block.splitlines()[-1]
        want, other = (stands, none) if ratio >= 1.5 else (none, stands)
        assert last.startswith(want.format(name)) and other.format(name) not in last, (kind, ratio, last)
        assert f"{ratio:.1f}" in last
    assert float(s["previous"].max()) / float(s["previous"][0, 1]) > 3  # the built head: clearly
    assert float(s["first"].max()) / float(s["first"][0, 1]) < 1.5  # 2 / T against an even head's: not


def test_an_untrained_model_has_no_head_that_stands_out():
    torch.manual_seed(0)
    model = make_model(ModelConfig(d_vocab=60, n_ctx=32, d_model=16, n_heads=2, n_layers=2)).eval()
    for lang, none in (("en", "No head stands out"), ("zh", "没有哪个头明显是")):
        lasts = [b.splitlines()[-1] for b in render(head_scores(model, seed=0), lang).strip().split("\n\n")[1:]]
        assert len(lasts) == 4 and all(line.startswith(none) for line in lasts), lasts
