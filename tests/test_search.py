"""Greedy and beam search on an encoder-decoder: the cache changes nothing, and the beam finds the best."""

import itertools

import pytest
import torch

from qkv.core.decode.beam import EOS, beam_search, greedy
from qkv.core.model.seq2seq import Seq2Seq
from qkv.core.spec.config import ModelConfig


def _model(seed=0, d_vocab=7, pos="learned", norm="pre"):
    torch.manual_seed(seed)
    cfg = ModelConfig(
        arch="seq2seq", d_vocab=d_vocab, n_ctx=10, d_model=16, n_heads=2, n_layers=2, pos=pos, norm=norm, init_std=0.5
    )  # large weights: peaked, varied distributions
    return Seq2Seq(cfg).eval()


@pytest.mark.parametrize("pos", ["learned", "sinusoidal", "rope"])
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_cached_steps_equal_the_teacher_forced_pass(pos, norm):
    model = _model(pos=pos, norm=norm)
    src, tgt = torch.randint(3, 7, (2, 5)), torch.randint(1, 7, (2, 6))
    mask = torch.tensor([[1] * 5, [1] * 3 + [0] * 2])
    full = model(src, tgt, mask)
    memory, cache = model.encode(src, mask), model.new_cache(2)
    steps = torch.cat([model.decode(tgt[:, t : t + 1], memory, mask, cache) for t in range(6)], 1)
    assert (steps - full).abs().max() < 1e-5
    assert set(cache.memory_kv) == {0, 1}  # each cross-attention layer's memory k, v stored once


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cache_changes_no_token_and_no_score(seed):
    model = _model(seed)
    src = torch.randint(3, 7, (3, 4))
    assert [h.ids for h in greedy(model, src, max_len=8)] == [
        h.ids for h in greedy(model, src, max_len=8, use_cache=False)
    ]
    cached, plain = beam_search(model, src[:1], 3, 8), beam_search(model, src[:1], 3, 8, use_cache=False)
    assert [h.ids for h in cached] == [h.ids for h in plain]
    # float32 logits of 8 steps summed: the cached and uncached passes round differently (1.6e-6 seen with SSE4.2)
    assert [h.logprob for h in cached] == pytest.approx([h.logprob for h in plain], abs=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_token_keeps_the_log_probability_it_was_written_with(seed):
    """A hypothesis carries log P of each of its tokens: they add up to its log P and are the
    teacher-forced pass's, for greedy (a padded batch) and for every hypothesis of a beam."""
    model = _model(seed)
    src = torch.randint(3, 7, (2, 4))
    mask = torch.tensor([[1] * 4, [1] * 2 + [0] * 2])
    hyps = [(h, src[b : b + 1], mask[b : b + 1]) for b, h in enumerate(greedy(model, src, mask, max_len=8))]
    hyps += [(h, src[:1], None) for h in beam_search(model, src[:1], 3, 8)]
    for h, s, m in hyps:
        assert len(h.token_logprobs) == len(h.ids) and sum(h.token_logprobs) == pytest.approx(h.logprob, abs=1e-9)
        forced = model(s, torch.tensor([[1, *h.ids[:-1]]]), m).log_softmax(-1)[0]  # (T, d_vocab)
        expected = forced.gather(1, torch.tensor(h.ids)[:, None])[:, 0]
        assert h.token_logprobs == pytest.approx(expected.tolist(), abs=1e-5)


def test_batched_greedy_equals_one_source_at_a_time_with_padding():
    model = _model(3)
    a, b = [3, 4, 5, 6], [5, 3]
    src = torch.tensor([a, b + [0, 0]])
    mask = torch.tensor([[1] * 4, [1] * 2 + [0] * 2])
    batch = greedy(model, src, mask, max_len=8)
    assert batch[0].ids == greedy(model, torch.tensor([a]), max_len=8)[0].ids
    assert batch[1].ids == greedy(model, torch.tensor([b]), max_len=8)[0].ids


@pytest.mark.parametrize("seed", range(6))
def test_beam_of_one_without_length_penalty_is_greedy(seed):
    """Without a length penalty a score only falls as a prefix grows, so once greedy's </s> is finished the one
    live prefix (the runner-up) cannot overtake it. (With a penalty, a longer runner-up may: not greedy.)"""
    model = _model(seed)
    src = torch.randint(3, 7, (1, 4))
    g = greedy(model, src, max_len=8)[0]
    b = beam_search(model, src, 1, 8, length_penalty=0.0)[0]
    if g.ids[-1] == EOS:
        assert b.ids == g.ids and b.logprob == pytest.approx(g.logprob, abs=1e-9)
    else:  # greedy was cut at max_len: the beam prefers a hypothesis that finished, if its runner-ups found one
        assert b.ids[-1] == EOS or (b.ids == g.ids and b.logprob == pytest.approx(g.logprob, abs=1e-9))


@pytest.mark.parametrize("seed", range(10))
def test_a_hypothesis_cut_at_max_len_never_outranks_a_finished_one(seed):
    model = _model(seed)
    src = torch.randint(3, 7, (1, 4))
    ends = [h.ids[-1] == EOS for h in beam_search(model, src, 3, 8)]
    assert ends == sorted(ends, reverse=True)  # every finished hypothesis first


@torch.no_grad()
def _logprob(model, src, ids):
    """log P(ids | src) by the teacher-forced pass."""
    tgt_in = torch.tensor([[1] + ids[:-1]])
    logp = model(src, tgt_in)[0].double().log_softmax(-1)
    return float(sum(logp[t, i] for t, i in enumerate(ids)))


@pytest.mark.parametrize("seed", [0, 5])
def test_a_wide_beam_finds_the_most_likely_sentence(seed):
    """With no length penalty and a beam as wide as the search space, the best hypothesis is the most likely of
    all finished target sentences of up to 3 tokens (found here by enumerating them all), and the sentences cut
    at max_len come after every finished one."""
    model = _model(seed, d_vocab=5)
    src = torch.tensor([[3, 4, 3]])
    words = [0, 1, 3, 4]  # every token but </s>
    candidates = [list(w) + [EOS] for n in range(3) for w in itertools.product(words, repeat=n)]
    best = max(candidates, key=lambda ids: _logprob(model, src, ids))
    cut = [list(w) for w in itertools.product(words, repeat=3)]  # no </s> within max_len
    found = beam_search(model, src, beam=64, max_len=3, length_penalty=0.0)
    assert found[0].ids == best
    assert found[0].logprob == pytest.approx(_logprob(model, src, best), abs=1e-5)
    ends = [h.ids[-1] == EOS for h in found]
    assert ends == sorted(ends, reverse=True) and all(h.ids in candidates + cut for h in found)


def test_bad_requests_are_one_line_errors():
    model = _model()
    for beam in (0, 2.5, True):
        with pytest.raises(ValueError, match="beam size"):
            beam_search(model, torch.tensor([[3]]), beam)
    with pytest.raises(ValueError, match="max_len"):
        greedy(model, torch.tensor([[3]]), max_len=11)
    gpt = __import__("qkv.core.model.gpt", fromlist=["GPT"]).GPT(
        ModelConfig(d_vocab=7, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    )
    with pytest.raises(ValueError, match="encoder-decoder"):
        greedy(gpt, torch.tensor([[3]]))


def test_greedy_and_beam_search_build_no_autograd_graph():
    """Decoding records no graph: every forward pass of the model runs with gradients off."""
    model = _model(0)
    grad_on = []
    model.register_forward_pre_hook(lambda module, args: grad_on.append(torch.is_grad_enabled()))
    for block in [*model.encoder.blocks, *model.decoder.blocks]:
        block.register_forward_pre_hook(lambda module, args: grad_on.append(torch.is_grad_enabled()))
    src = torch.randint(3, 7, (1, 4))
    greedy(model, src, max_len=6)
    beam_search(model, src, 3, 6)
    assert grad_on and not any(grad_on)
