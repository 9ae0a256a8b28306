"""optimizer=muon: Muon for the blocks' matrices, AdamW for the rest, as one optimizer (train/muon.py)."""

from __future__ import annotations

import pytest
import torch
from cli_util import step_losses

from qkv.core.model.gpt import GPT, lm_loss
from qkv.core.spec.config import ModelConfig, TrainConfig
from qkv.core.text import corpus
from qkv.core.train import checkpoint
from qkv.core.train.lm import train
from qkv.core.train.loop import lr_at, make_optimizer, train_steps
from qkv.core.train.muon import Paired

CFG = dict(d_vocab=19, n_ctx=10, d_model=16, n_heads=2, n_layers=2, d_mlp=32)
TINY = ["n_layers=1", "d_model=32", "n_heads=2", "n_ctx=16", "steps=20", "batch_size=4", "eval_interval=10"]
TEXT = corpus.generate(n_sentences=200, lang="en")


def _names(model, params) -> set[str]:
    ids = {id(p) for p in params}
    return {n for n, p in model.named_parameters() if id(p) in ids}


@pytest.mark.parametrize("tied", [False, True])
def test_muon_takes_the_matrices_adamw_the_rest(tied):
    model = GPT(ModelConfig(**CFG, tie_embeddings=tied))
    opt = make_optimizer(model, TrainConfig(optimizer="muon"))
    assert isinstance(opt, Paired) and isinstance(opt.muon, torch.optim.Muon)
    muon = _names(model, [p for g in opt.muon.param_groups for p in g["params"]])
    adamw = _names(model, [p for g in opt.adamw.param_groups for p in g["params"]])
    want = {f"blocks.{L}.{m}.weight" for L in range(2) for m in ("attn.W_QKV", "attn.W_O", "mlp.fc_in", "mlp.fc_out")}
    assert muon == want
    assert not muon & adamw and muon | adamw == {n for n, _ in model.named_parameters()}
    assert "embed.weight" in adamw and "pos_embed.W_pos" in adamw and "ln_final.weight" in adamw
    assert ("unembed.weight" in adamw) is not tied  # tied: the head is the embedding, listed once
    assert isinstance(make_optimizer(model, TrainConfig()), torch.optim.AdamW)  # adamw by default


def test_muon_lowers_the_loss_and_follows_the_schedule():
    """A few steps on one batch lower its loss; Muon's lr is muon_lr * lr_at(step) / lr at every step."""
    torch.manual_seed(0)
    model = GPT(ModelConfig(**CFG))
    tc = TrainConfig(optimizer="muon", steps=15, warmup_steps=3, lr=3e-3, min_lr=3e-4, muon_lr=0.02)
    opt = make_optimizer(model, tc)
    W_O = model.blocks[0].attn.W_O.weight.detach().clone()
    ids = torch.randint(0, 19, (8, 10))
    losses, lrs = [], []

    def step(s: int) -> float:
        loss = lm_loss(model(ids[:, :-1]), ids[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        lrs.append((opt.adamw.param_groups[0]["lr"], opt.muon.param_groups[0]["lr"]))
        return loss.item()

    train_steps(opt, tc, range(tc.steps), step, lambda done, loss, lr: losses.append(loss))
    assert losses[-1] < 0.9 * losses[0] and losses[-1] == min(losses)
    assert not torch.equal(W_O, model.blocks[0].attn.W_O.weight)  # Muon moved the matrices
    for s, (adam_lr, muon_lr) in enumerate(lrs):
        assert adam_lr == pytest.approx(lr_at(s, tc)) and muon_lr == pytest.approx(lr_at(s, tc) * 0.02 / 3e-3)


def test_muon_resume_is_exact(tmp_path):
    """Interrupted at step 10 and resumed: the same losses, weights and optimizer state as one run."""
    a, b = tmp_path / "a", tmp_path / "b"
    train(TEXT, out=a, overrides=[*TINY, "optimizer=muon"], progress=False)
    train(TEXT, out=b, overrides=[*TINY, "optimizer=muon"], until=10, progress=False)
    train(TEXT, out=b, resume=True, progress=False)
    assert step_losses(a) == step_losses(b)
    wa, wb = checkpoint.load(a)[0].state_dict(), checkpoint.load(b)[0].state_dict()
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    oa = checkpoint.load_checkpoint(a, with_optimizer=True).optimizer_state
    ob = checkpoint.load_checkpoint(b, with_optimizer=True).optimizer_state
    assert any("momentum_buffer" in s for s in oa["state"].values())
    for i, s in oa["state"].items():
        assert all(torch.equal(t, ob["state"][i][k]) for k, t in s.items()), i
    # an AdamW run does not resume as a Muon one: its groups differ (one line)
    with pytest.raises(Exception, match="group"):
        train(TEXT, out=a, resume=True, overrides=["optimizer=adamw", "steps=25"], progress=False)
