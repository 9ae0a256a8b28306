"""qkv.core.train.checkpoint: exact round trips, and crash safety (broken directories: test_checkpoint_broken.py)."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import torch
from checkpoint_util import TEXT, logits, save_weights, tiny_model, trained_step, weight_file
from safetensors.torch import load as st_load

import qkv.core.io.files as files_mod
from qkv.core.io.files import atomic_write
from qkv.core.spec.config import TrainConfig
from qkv.core.train.checkpoint import load, load_checkpoint, save
from qkv.core.train.loop import make_optimizer

REAL_REPLACE = os.replace


# ---------------------------------------------------------------------------- round trips


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"pos": "rope", "bias": False, "unembed_bias": False},
        {"norm": "post", "pos": "sinusoidal", "activation": "relu"},
    ],
)
def test_roundtrip_gives_identical_logits(tmp_path, kw):
    model, tok = tiny_model(**kw)
    with torch.no_grad():  # make every parameter non-default (biases start at 0, LN scales at 1)
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    save(tmp_path, model, tok, step=7)
    loaded, tok2 = load(tmp_path)
    assert not loaded.training
    assert loaded.cfg == model.cfg
    # exact: the file holds the weights' very bytes, and both forwards run the same ops in this process
    assert torch.equal(logits(loaded), logits(model))
    assert tok2.encode(TEXT) == tok.encode(TEXT)
    c = load_checkpoint(tmp_path)
    assert c.state["step"] == 7 and c.train_config is None and c.optimizer_state is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "config.json",
        "model-0000007.safetensors",
        "state.json",
        "tokenizer.json",
    ]


def test_tied_embeddings_stored_once_and_still_tied(tmp_path):
    model, tok = tiny_model(tie_embeddings=True)
    assert model.unembed.weight is model.embed.weight
    save(tmp_path, model, tok)
    stored = st_load((tmp_path / weight_file(tmp_path)).read_bytes())
    assert "embed.weight" in stored and "unembed.weight" not in stored
    loaded, _ = load(tmp_path)
    assert loaded.unembed.weight is loaded.embed.weight
    assert torch.equal(logits(loaded), logits(model))  # exact, as in the round trip above
    # an untied model stores both
    untied, tok = tiny_model()
    save(tmp_path / "untied", untied, tok)
    assert "unembed.weight" in st_load((tmp_path / "untied" / weight_file(tmp_path / "untied")).read_bytes())


def test_optimizer_state_roundtrip(tmp_path):
    model, tok = tiny_model()
    tc = TrainConfig()
    opt = make_optimizer(model, tc)
    trained_step(model, opt)
    save_weights(tmp_path, model, 1, opt, {"train_loss": 1.5, "val_loss": None}, tc=tc)
    c = load_checkpoint(tmp_path, with_optimizer=True)
    assert c.train_config == tc
    assert c.state["train_loss"] == 1.5
    opt2 = make_optimizer(c.model, tc)
    opt2.load_state_dict(c.optimizer_state)
    a, b = opt.state_dict(), opt2.state_dict()
    assert json.dumps(a["param_groups"]) == json.dumps(b["param_groups"])
    assert a["state"].keys() == b["state"].keys()
    for i in a["state"]:
        for key, t in a["state"][i].items():
            assert torch.equal(t, b["state"][i][key]), (i, key)  # stored bytes, read back: exact


def test_newer_save_deletes_older_weight_files(tmp_path):
    model, tok = tiny_model()
    opt = make_optimizer(model, TrainConfig())
    for step in (10, 20, 30):
        trained_step(model, opt)
        save_weights(tmp_path, model, step, opt)
    assert sorted(p.name for p in tmp_path.glob("*.safetensors")) == [
        "model-0000030.safetensors",
        "optimizer-0000030.safetensors",
    ]
    assert torch.equal(logits(load(tmp_path)[0]), logits(model))  # same bytes, same ops, same process


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    atomic_write(tmp_path / "f.bin", b"one")
    atomic_write(tmp_path / "f.bin", b"two")
    assert (tmp_path / "f.bin").read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


# ---------------------------------------------------------------------------- crash safety


class Killed(BaseException):
    """Stands for the process dying: a BaseException, so no `except Exception` can swallow it."""


def _count_replaces(monkeypatch, fn) -> int:
    calls = []
    real = REAL_REPLACE

    def counting(src, dst):
        calls.append(os.path.basename(dst))
        return real(src, dst)

    monkeypatch.setattr(files_mod.os, "replace", counting)
    fn()
    monkeypatch.setattr(files_mod.os, "replace", real)
    return len(calls), calls


def _kill_after(monkeypatch, k: int) -> None:
    real = REAL_REPLACE
    done = {"n": 0}

    def replace(src, dst):
        if done["n"] >= k:
            raise Killed(f"killed before renaming {dst}")
        done["n"] += 1
        return real(src, dst)

    monkeypatch.setattr(files_mod.os, "replace", replace)


def _base_checkpoint(d, with_optimizer: bool):
    """A checkpoint at step 10, then a model and optimizer one step further, ready to save as step 20."""
    model, tok = tiny_model()
    tc = TrainConfig()
    opt = make_optimizer(model, tc)
    trained_step(model, opt)
    save_weights(d, model, 10, opt if with_optimizer else None, tc=tc if with_optimizer else None)
    old = {k: v.clone() for k, v in model.state_dict().items()}
    trained_step(model, opt)
    return model, tok, opt, old


def _switch(names: list[str]) -> int:
    """Which rename makes a save's checkpoint the one that loads: the first of state.json after the weights."""
    return next(
        i for i, name in enumerate(names) if name == "state.json" and any(n.startswith("model-") for n in names[:i])
    )


def _killed_copies(monkeypatch, template, where, do_save):
    """For each rename of do_save(dir): a copy of template where do_save was killed before that rename
    (and one where it finished). Yields (k, copy, index of the switch, number of renames)."""
    probe = where / "probe"
    shutil.copytree(template, probe)
    n, names = _count_replaces(monkeypatch, lambda: do_save(probe))
    assert names[-1] == "state.json"
    for k in range(n + 1):
        d = where / f"kill-{k}"
        shutil.copytree(template, d)
        _kill_after(monkeypatch, k)
        if k < n:
            with pytest.raises(Killed):
                do_save(d)
        else:
            do_save(d)
        monkeypatch.setattr(files_mod.os, "replace", REAL_REPLACE)
        yield k, d, _switch(names), n


@pytest.mark.parametrize("how", ["continue", "save", "save_other_shape"])
def test_kill_at_every_rename_leaves_the_old_or_the_new_checkpoint(tmp_path, monkeypatch, how):
    """A run continued (the next checkpoint of training), and save() over a checkpoint of the same or
    another shape: killed before each rename in turn, the directory loads as the old checkpoint until
    the rename of state.json that switches to the new one, and as the new one from then on. So does
    a save of a third shape over each of those directories, killed before each of its renames."""
    with_optimizer = how == "continue"
    template = tmp_path / "template"
    model, tok, opt, old = _base_checkpoint(template, with_optimizer)
    old_cfg = model.cfg
    if how == "save_other_shape":
        model, _ = tiny_model(d_model=32, n_layers=1, pos="rope")
    new = {k: v.clone() for k, v in model.state_dict().items()}
    assert any(k not in new or not torch.equal(old[k], new[k]) for k in old)
    third, _ = tiny_model(d_model=8, n_heads=1, norm="post")

    def do_save(d):
        if how == "continue":
            save_weights(d, model, 20, opt)
        else:
            save(d, model, tok, step=20)

    for k, d, switch, n in _killed_copies(monkeypatch, template, tmp_path, do_save):
        assert n == (5 if with_optimizer else 7) and switch == n - 1 - (0 if with_optimizer else 3)
        c = load_checkpoint(d, with_optimizer=True)
        expected_step, expected, expected_cfg = (20, new, model.cfg) if k > switch else (10, old, old_cfg)
        assert c.state["step"] == expected_step, k
        sd = c.model.state_dict()
        assert sd.keys() == expected.keys(), k
        for name in expected:  # bit for bit: the file holds the very bytes of these tensors
            assert torch.equal(sd[name], expected[name]), (k, name)
        if with_optimizer:
            assert c.optimizer_state is not None and c.optimizer_state["state"], k
        then = tmp_path / f"then-{k}"
        then.mkdir()
        for k2, e, switch2, _ in _killed_copies(monkeypatch, d, then, lambda e: save(e, third, tok, step=30)):
            c = load_checkpoint(e)
            want = (30, third.cfg) if k2 > switch2 else (expected_step, expected_cfg)
            assert (c.state["step"], c.model.cfg) == want, (k, k2)
        # and the next complete save cleans up whatever the kill left behind
        do_save(d)
        assert load_checkpoint(d).state["step"] == 20
        leftovers = sorted(
            p.name
            for p in d.iterdir()
            if ".tmp-" in p.name or ".next." in p.name or (p.suffix == ".safetensors" and "-0000010" in p.name)
        )
        assert leftovers == [], k
        assert ".qkv.lock" not in [p.name for p in d.iterdir()]
