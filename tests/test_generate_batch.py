"""generate_batch: several prompts at once, each row exactly what generate_ids gives it alone."""

from __future__ import annotations

import pytest
import torch

from qkv.core.decode.sample import generate_batch, generate_ids, generate_texts
from qkv.core.model.gpt import GPT
from qkv.core.spec.config import ModelConfig
from qkv.core.text.tokenizers import CharTokenizer

V = 31
PROMPTS = [[3, 1, 4], [1, 5, 9, 2, 6, 5, 3], [5], [8, 9, 7, 9, 3]]  # lengths 3, 7, 1, 5: three rows padded


def make_model(pos="learned", norm="pre", n_ctx=32, **kw) -> GPT:
    torch.manual_seed(0)
    # a large init_std keeps the logits far apart, so greedy choices are clear-cut
    cfg = ModelConfig(d_vocab=V, n_ctx=n_ctx, d_model=24, n_heads=3, n_layers=2, pos=pos, norm=norm, init_std=0.3, **kw)
    return GPT(cfg).eval()


def alone(model, prompt, n, **kw):
    return list(generate_ids(model, prompt, n, **kw))


@pytest.mark.parametrize("pos", ["learned", "rope", "sinusoidal"])
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_batched_greedy_equals_each_prompt_alone(pos, norm):
    model = make_model(pos, norm)
    out = generate_batch(model, PROMPTS, 10, temperature=0, return_logits=True)
    for prompt, (ids, logits) in zip(PROMPTS, out):
        assert ids == alone(model, prompt, 10, temperature=0)
        assert logits.shape == (10, V)
        with torch.no_grad():  # the logits of each new token are the model's on the row's own tokens
            want = model(torch.tensor([prompt + ids[:-1]]))[0, len(prompt) - 1 :]  # (10, V)
        assert torch.allclose(logits, want, atol=1e-5), (logits - want).abs().max()


def test_padding_never_changes_a_row():
    model = make_model("rope")
    short = [4, 2]
    by_itself = generate_batch(model, [short], 12, temperature=0, return_logits=True)[0]
    beside_long = generate_batch(model, [short, list(range(1, 20))], 12, temperature=0, return_logits=True)[0]
    beside_same = generate_batch(model, [[7, 7], short], 12, temperature=0, return_logits=True)[1]
    assert by_itself[0] == beside_long[0] == beside_same[0]
    assert torch.allclose(by_itself[1], beside_long[1], atol=1e-5)
    assert torch.allclose(by_itself[1], beside_same[1], atol=1e-5)


def test_per_row_stop_ids_end_each_row_at_its_own_token():
    model = make_model()
    full = [alone(model, p, 12, temperature=0) for p in PROMPTS]
    # row 0 stops at its 3rd token, row 2 at its 6th, the others run to max_new_tokens
    stops = [full[0][2], None, full[2][5], []]
    out = generate_batch(model, PROMPTS, 12, temperature=0, stop_ids=stops)
    assert out[0] == full[0][: full[0].index(stops[0]) + 1] and len(out[0]) <= 3
    assert out[2] == full[2][: full[2].index(stops[2]) + 1] and len(out[2]) <= 6
    assert out[1] == full[1] and out[3] == full[3]


def test_one_stop_set_for_every_row_and_should_stop():
    model = make_model()
    full = [alone(model, p, 12, temperature=0) for p in PROMPTS]
    stop = full[1][4]
    out = generate_batch(model, PROMPTS, 12, temperature=0, stop_ids={stop})
    for row, ids in zip(full, out):
        assert ids == (row[: row.index(stop) + 1] if stop in row else row)
    out = generate_batch(model, PROMPTS, 12, temperature=0, should_stop=lambda i, new: len(new) == i + 2)
    assert [len(ids) for ids in out] == [2, 3, 4, 5]
    assert all(ids == row[: len(ids)] for ids, row in zip(out, full))


def test_window_past_n_ctx_slides_like_generate_ids():
    model = make_model("learned", n_ctx=12)
    prompts = [list(range(1, 11)), [3, 4, 5], [2] * 20]  # 10 and 3 tokens, and one cropped to its last 12
    out = generate_batch(model, prompts, 9, temperature=0)
    for prompt, ids in zip(prompts, out):
        assert ids == alone(model, prompt, 9, temperature=0)


def test_non_causal_model_runs_the_windows_again():
    model = make_model(causal=False)
    out = generate_batch(model, PROMPTS, 5, temperature=0)
    assert out == [alone(model, p, 5, temperature=0, use_cache=False) for p in PROMPTS]


def test_seeded_sampling_is_reproducible_and_row_i_samples_as_seed_plus_i():
    model = make_model("rope")
    kw = dict(temperature=1.0, top_k=8, top_p=0.95)
    a = generate_batch(model, PROMPTS, 15, seed=5, **kw)
    assert a == generate_batch(model, PROMPTS, 15, seed=5, **kw)
    assert a != generate_batch(model, PROMPTS, 15, seed=6, **kw)
    assert a == [alone(model, p, 15, seed=5 + i, **kw) for i, p in enumerate(PROMPTS)]


def test_generate_texts_stops_at_a_string_per_row():
    tok = CharTokenizer.train("abcdefgh ")
    model = make_model()
    model = GPT(ModelConfig(**{**model.cfg.__dict__, "d_vocab": tok.vocab_size})).eval()
    prompts = ["ab", "cdef", "h"]
    free = generate_texts(model, tok, prompts, 12, temperature=0)
    assert len(free) == 3 and all(len(t) == 12 for t in free)
    stop = free[1][3:5]  # a string row 1 is known to write
    cut = generate_texts(model, tok, prompts, 12, temperature=0, stop=[None, stop, None])
    assert cut[0] == free[0] and cut[2] == free[2]
    assert cut[1] == free[1].split(stop, 1)[0]


def test_edge_cases_and_errors():
    model = make_model()
    assert generate_batch(model, [], 5) == []
    assert generate_batch(model, PROMPTS, 0) == [[], [], [], []]
    with pytest.raises(ValueError, match="prompt 1 is empty"):
        generate_batch(model, [[1], []], 3)
    with pytest.raises(ValueError, match="one per prompt"):
        generate_batch(model, PROMPTS, 3, stop_ids=[[1], [2]])
    with pytest.raises(ValueError, match="temperature"):
        generate_batch(model, PROMPTS, 3, temperature=-1)


def test_the_command_draws_several_samples_as_one_batch_each_as_its_own_seed_would(capsys, base):
    from cli_util import run_ok

    argv = ["generate", "--ckpt", str(base), "--prompt", "the", "--max-new-tokens", "10", "--temperature", "1"]
    out, _ = run_ok(capsys, argv + ["--samples", "3", "--seed", "5"])
    headers = [line for line in out.splitlines() if line.startswith("--- sample")]
    assert headers == [f"--- sample {i} of 3 ---" for i in (1, 2, 3)]
    samples = [part.split("\n", 1)[1] for part in out.split("--- sample ")[1:]]
    alone = [run_ok(capsys, argv + ["--seed", str(5 + i)])[0] for i in range(3)]
    assert samples == alone and len(set(alone)) > 1


def test_the_fast_steps_follow_every_change_of_the_weights():
    """GPT.stepper multiplies by transposed copies of the weights kept on each Linear (nn/linear.py):
    after an in-place change of a bias or of every matrix, or a load, generation uses the new weights."""
    torch.manual_seed(0)
    model = GPT(ModelConfig(d_vocab=11, n_ctx=16, d_model=16, n_heads=2, n_layers=1, init_std=0.3)).eval()
    greedy = lambda cache=True: list(generate_ids(model, [1, 2], 8, temperature=0, use_cache=cache))
    before = greedy()
    with torch.no_grad():
        model.unembed.bias[before[0]] -= 1000.0  # in place: the first greedy token can no longer win
    after = greedy()
    assert after[0] != before[0] and after == greedy(cache=False)
    with torch.no_grad():
        for block in model.blocks:  # every matrix a step multiplies by, changed in place
            for linear in (block.attn.W_QKV, block.attn.W_O, block.mlp.fc_in, block.mlp.fc_out, model.unembed):
                linear.weight.mul_(-1.5)
    flipped = greedy()
    assert flipped != after and flipped == greedy(cache=False)
    model.load_state_dict(GPT(model.cfg).state_dict())
    loaded = greedy()
    assert loaded != flipped and loaded == greedy(cache=False)
