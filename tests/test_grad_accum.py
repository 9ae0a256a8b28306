"""--set grad_accum=N: batch_size stays the global batch, computed in N micro-batches whose gradients
add up to the whole batch's; the same AdamW step as without accumulation (to 1e-6 in float64),
DDP averaging the gradients in the last micro-batch's backward only, and one-line refusals."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
import torch
from cli_util import run_error, run_ok, step_losses

from qkv.core.io.refusal import Refusal
from qkv.core.model import make_model
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.train.lm import LMData, evaluate
from qkv.core.train.loop import make_optimizer, optimize_accumulated
from qkv.core.train.translate import PairData
from qkv.presentation.i18n import say_error

CFG = ModelConfig(n_ctx=16, d_model=32, n_heads=4, n_layers=2, d_vocab=23)


def trained_weights(grad_accum: int, steps: int = 3) -> tuple[dict, list[float]]:
    """A float64 GPT after `steps` steps of batch 8 computed in `grad_accum` micro-batches; its losses."""
    torch.manual_seed(0)
    model = make_model(CFG).double()
    tc = TrainConfig(batch_size=8, grad_accum=grad_accum, lr=3e-3, grad_clip=0.5, seed=5)
    ids = torch.randint(0, CFG.d_vocab, (400,), generator=torch.Generator().manual_seed(1))
    data, optimizer = LMData(ids, None, tc, CFG.n_ctx), make_optimizer(model, tc)
    losses = [data.step(model, optimizer, s) for s in range(steps)]
    return {k: v.detach().clone() for k, v in model.state_dict().items()}, losses


@pytest.mark.parametrize("n", [2, 4, 8])
def test_accumulated_micro_batches_make_the_whole_batch_step(n):
    whole, whole_losses = trained_weights(1)
    accumulated, losses = trained_weights(n)
    assert max(abs(a - b) for a, b in zip(whole_losses, losses)) < 1e-9
    assert max((whole[k] - accumulated[k]).abs().max().item() for k in whole) < 1e-6
    torch.manual_seed(0)  # the weights trained_weights started from
    before = make_model(CFG).double().state_dict()  # the test can fail: the steps moved the weights
    assert max((whole[k] - before[k]).abs().max().item() for k in whole if k in before) > 1e-4


def test_evaluation_scores_the_rows_in_micro_batches_to_the_same_loss():
    """An evaluation needs no more memory than a training step: grad_accum pieces of the batch, the same mean."""
    torch.manual_seed(0)
    model = make_model(CFG).double()
    ids = torch.randint(0, CFG.d_vocab, (400,), generator=torch.Generator().manual_seed(1))
    seen = []
    model.register_forward_pre_hook(lambda module, args: seen.append(tuple(args[0].shape)))
    whole = evaluate(model, ids, TrainConfig(batch_size=8, eval_steps=2, seed=5))
    pieces = evaluate(model, ids, TrainConfig(batch_size=8, grad_accum=4, eval_steps=2, seed=5))
    assert abs(whole - pieces) < 1e-12
    assert seen == [(8, CFG.n_ctx)] * 2 + [(2, CFG.n_ctx)] * 8


class FakeDDP(torch.nn.Module):
    """DDP's no_sync() and nothing else: records which forward/backward ran inside it."""

    def __init__(self, module):
        super().__init__()
        self.module, self.syncing, self.seen = module, True, []

    @contextmanager
    def no_sync(self):
        self.syncing = False
        try:
            yield
        finally:
            self.syncing = True

    def forward(self, x):
        self.seen.append(self.syncing)
        return self.module(x)


@pytest.mark.parametrize("n", [1, 3])
def test_ddp_syncs_in_the_last_micro_batch_only(n):
    model = FakeDDP(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(n, 4)
    with torch.no_grad():
        want = model.module(x).pow(2).mean().item()  # the whole batch's loss, before the step
    loss = optimize_accumulated(model, optimizer, lambda i: model(x[i]).pow(2).mean(), n, 0.0)
    assert model.seen == [False] * (n - 1) + [True]
    assert loss == pytest.approx(want, rel=1e-6)


def test_a_non_finite_loss_leaves_the_weights_alone():
    model = torch.nn.Linear(4, 1)
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
    bad = optimize_accumulated(
        model, optimizer, lambda i: model(torch.ones(4)).sum() * (float("nan") if i else 1), 2, 1.0
    )
    assert bad != bad
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


TINY = ["--set", "steps=4", "--set", "eval_interval=4", "--set", "eval_steps=2", "--set", "d_model=16"]
TINY += ["--set", "n_ctx=16", "--set", "batch_size=8", "--precision", "float32", "--device", "cpu", "--quiet"]


def test_the_command_line_trains_with_accumulation(capsys, text_file, tmp_path):
    run_ok(capsys, ["train", "--text", str(text_file), "--out", str(tmp_path / "one"), *TINY])
    run_ok(capsys, ["train", "--text", str(text_file), "--out", str(tmp_path / "acc"), *TINY, "--set", "grad_accum=4"])
    one, acc = step_losses(tmp_path / "one"), step_losses(tmp_path / "acc")
    assert [s for s, _ in one] == [s for s, _ in acc] == [1, 2, 3, 4]
    assert max(abs(a - b) for (_, a), (_, b) in zip(one, acc)) < 1e-5


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--set", "grad_accum=3"], "does not split into grad_accum=3 micro-batches"),
        (["--set", "grad_accum=0"], "grad_accum must be between 1 and 4096"),
    ],
)
def test_a_batch_that_does_not_split_is_one_line(capsys, text_file, tmp_path, extra, said):
    line = run_error(capsys, ["train", "--text", str(text_file), "--out", str(tmp_path / "x"), *TINY, *extra])
    assert said in line
    assert not (tmp_path / "x").exists()


def test_translation_refuses_accumulation():
    with pytest.raises(Refusal) as caught:
        PairData([], [], TrainConfig(batch_size=4, grad_accum=2))
    assert "does not accumulate gradients" in str(caught.value)
    assert "不做梯度累积" in say_error(caught.value, "zh")
