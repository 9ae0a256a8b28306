"""Tests for qkv.checkpoint: exact round trips, crash safety, and clean errors for broken directories."""

from __future__ import annotations

import json
import os
import pickle
import shutil

import pytest
import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

import qkv.core.checkpoint as ckpt_mod
from qkv.core.checkpoint import atomic_write, load, load_checkpoint, save, save_weights, write_config
from qkv.core.config import ModelConfig, TrainConfig
from qkv.core.models.gpt import GPT, lm_loss
from qkv.core.tokenizers import train_tokenizer
from qkv.core.train import make_optimizer

REAL_REPLACE = os.replace
TEXT = "hello world, a tiny text for a tiny tokenizer.\n" * 3




def tiny_model(**kw) -> tuple[GPT, object]:
    tok = train_tokenizer("char", TEXT)
    torch.manual_seed(0)
    cfg = dict(d_vocab=tok.vocab_size, n_ctx=8, d_model=16, n_heads=2, n_layers=2)
    cfg.update(kw)
    return GPT(ModelConfig(**cfg)), tok


def sample_ids(model: GPT) -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    return torch.randint(model.cfg.d_vocab, (2, model.cfg.n_ctx), generator=g)


def logits(model: GPT) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        return model(sample_ids(model))


def trained_step(model: GPT, optimizer) -> None:
    """One optimizer step, so that the weights change and AdamW has moments to save."""
    model.train()
    x = sample_ids(model)
    loss = lm_loss(model(x), x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def weight_file(d) -> str:
    return json.loads((d / "state.json").read_text())["model"]


# ---------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("kw", [{}, {"pos": "rope", "bias": False, "unembed_bias": False},
                                {"norm": "post", "pos": "sinusoidal", "activation": "relu"}])
def test_roundtrip_gives_identical_logits(tmp_path, kw):
    model, tok = tiny_model(**kw)
    with torch.no_grad():  # make every parameter non-default (biases start at 0, LN scales at 1)
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    save(tmp_path, model, tok, step=7)
    loaded, tok2 = load(tmp_path)
    assert not loaded.training
    assert loaded.cfg == model.cfg
    assert torch.equal(logits(loaded), logits(model))
    assert tok2.encode(TEXT) == tok.encode(TEXT)
    c = load_checkpoint(tmp_path)
    assert c.state["step"] == 7 and c.train_config is None and c.optimizer_state is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "model-0000007.safetensors",
                                                            "state.json", "tokenizer.json"]


def test_tied_embeddings_stored_once_and_still_tied(tmp_path):
    model, tok = tiny_model(tie_embeddings=True)
    assert model.unembed.weight is model.embed.weight
    save(tmp_path, model, tok)
    stored = st_load((tmp_path / weight_file(tmp_path)).read_bytes())
    assert "embed.weight" in stored and "unembed.weight" not in stored
    loaded, _ = load(tmp_path)
    assert loaded.unembed.weight is loaded.embed.weight
    assert torch.equal(logits(loaded), logits(model))
    # an untied model stores both
    untied, tok = tiny_model()
    save(tmp_path / "untied", untied, tok)
    assert "unembed.weight" in st_load((tmp_path / "untied" / weight_file(tmp_path / "untied")).read_bytes())


def test_optimizer_state_roundtrip(tmp_path):
    model, tok = tiny_model()
    tc = TrainConfig()
    opt = make_optimizer(model, tc)
    trained_step(model, opt)
    write_config(tmp_path, model.cfg, tc, tok)
    save_weights(tmp_path, model, 1, opt, {"train_loss": 1.5, "val_loss": None})
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
            assert torch.equal(t, b["state"][i][key]), (i, key)


def test_newer_save_deletes_older_weight_files(tmp_path):
    model, tok = tiny_model()
    opt = make_optimizer(model, TrainConfig())
    write_config(tmp_path, model.cfg, TrainConfig(), tok)
    for step in (10, 20, 30):
        trained_step(model, opt)
        save_weights(tmp_path, model, step, opt)
    assert sorted(p.name for p in tmp_path.glob("*.safetensors")) == [
        "model-0000030.safetensors", "optimizer-0000030.safetensors"]
    assert torch.equal(logits(load(tmp_path)[0]), logits(model))


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

    monkeypatch.setattr(ckpt_mod.os, "replace", counting)
    fn()
    monkeypatch.setattr(ckpt_mod.os, "replace", real)
    return len(calls), calls


def _kill_after(monkeypatch, k: int) -> None:
    real = REAL_REPLACE
    done = {"n": 0}

    def replace(src, dst):
        if done["n"] >= k:
            raise Killed(f"killed before renaming {dst}")
        done["n"] += 1
        return real(src, dst)

    monkeypatch.setattr(ckpt_mod.os, "replace", replace)


def _base_checkpoint(d, with_optimizer: bool):
    """A checkpoint at step 10, then a model and optimizer one step further, ready to save as step 20."""
    model, tok = tiny_model()
    tc = TrainConfig()
    opt = make_optimizer(model, tc)
    trained_step(model, opt)
    write_config(d, model.cfg, tc if with_optimizer else None, tok)
    save_weights(d, model, 10, opt if with_optimizer else None)
    old = {k: v.clone() for k, v in model.state_dict().items()}
    trained_step(model, opt)
    return model, tok, opt, old


@pytest.mark.parametrize("how", ["save_weights", "save"])
def test_kill_during_save_leaves_the_previous_checkpoint(tmp_path, monkeypatch, how):
    with_optimizer = how == "save_weights"

    def do_save(d, model, tok, opt):
        if how == "save_weights":
            save_weights(d, model, 20, opt)
        else:
            save(d, model, tok, step=20)

    template = tmp_path / "template"
    model, tok, opt, old = _base_checkpoint(template, with_optimizer)
    new = {k: v.clone() for k, v in model.state_dict().items()}
    assert any(not torch.equal(old[k], new[k]) for k in old)

    probe = tmp_path / "probe"
    shutil.copytree(template, probe)
    n, names = _count_replaces(monkeypatch, lambda: do_save(probe, model, tok, opt))
    assert names[-1] == "state.json"  # state.json is replaced last
    assert n == (3 if with_optimizer else 4)

    for k in range(n + 1):
        d = tmp_path / f"kill-{k}"
        shutil.copytree(template, d)
        _kill_after(monkeypatch, k)
        if k < n:
            with pytest.raises(Killed):
                do_save(d, model, tok, opt)
        else:
            do_save(d, model, tok, opt)
        monkeypatch.setattr(ckpt_mod.os, "replace", REAL_REPLACE)
        c = load_checkpoint(d, with_optimizer=True)
        expected_step, expected = (10, old) if k < n else (20, new)
        assert c.state["step"] == expected_step, k
        sd = c.model.state_dict()
        for name in expected:
            assert torch.equal(sd[name], expected[name]), (k, name)
        if with_optimizer:
            assert c.optimizer_state is not None and c.optimizer_state["state"], k
        # and the next complete save cleans up whatever the kill left behind
        do_save(d, model, tok, opt)
        assert load_checkpoint(d).state["step"] == 20
        leftovers = sorted(p.name for p in d.iterdir() if ".tmp-" in p.name or
                           (p.suffix == ".safetensors" and "-0000010" in p.name))
        assert leftovers == [], k


# ---------------------------------------------------------------------------- broken directories


@pytest.fixture
def ckpt_dir(tmp_path):
    model, tok = tiny_model()
    opt = make_optimizer(model, TrainConfig())
    trained_step(model, opt)
    d = tmp_path / "ckpt"
    write_config(d, model.cfg, TrainConfig(), tok)
    save_weights(d, model, 5, opt)
    return d


def test_directory_missing(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load(tmp_path / "nope")


@pytest.mark.parametrize("name", ["config.json", "tokenizer.json", "state.json", "model-0000005.safetensors",
                                  "optimizer-0000005.safetensors"])
def test_missing_file_is_named(ckpt_dir, name):
    (ckpt_dir / name).unlink()
    with pytest.raises(ValueError, match=name.replace(".", r"\.")) as info:
        load_checkpoint(ckpt_dir, with_optimizer=True)
    assert "\n" not in str(info.value)


def test_wrong_shape_is_named(ckpt_dir):
    path = ckpt_dir / weight_file(ckpt_dir)
    tensors = st_load(path.read_bytes())
    assert tensors["blocks.1.mlp.fc_in.weight"].shape == (64, 16)
    tensors["blocks.1.mlp.fc_in.weight"] = torch.zeros(64, 17)
    path.write_bytes(st_save(tensors))
    with pytest.raises(ValueError, match=r"tensor blocks\.1\.mlp\.fc_in\.weight has shape \(64, 17\)"):
        load(ckpt_dir)


def test_config_that_does_not_match_the_tensors(ckpt_dir):
    config = json.loads((ckpt_dir / "config.json").read_text())
    config["model"]["d_model"] = 32
    (ckpt_dir / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"tensor [\w.]+ has shape \([\d, ]+\) but config.json implies"):
        load(ckpt_dir)


def test_missing_and_unexpected_tensors_are_named(ckpt_dir):
    path = ckpt_dir / weight_file(ckpt_dir)
    tensors = st_load(path.read_bytes())
    del tensors["unembed.bias"]
    tensors["extra.weight"] = torch.zeros(2)
    path.write_bytes(st_save(tensors))
    with pytest.raises(ValueError, match="unembed.bias.*extra.weight"):
        load(ckpt_dir)


@pytest.mark.parametrize("keep", [0, 4, 8, 20, "half", "minus1"])
def test_truncated_weights(ckpt_dir, keep):
    path = ckpt_dir / weight_file(ckpt_dir)
    data = path.read_bytes()
    n = {"half": len(data) // 2, "minus1": len(data) - 1}.get(keep, keep)
    path.write_bytes(data[:n])
    with pytest.raises(ValueError, match="not a valid safetensors file"):
        load(ckpt_dir)


def test_garbage_json_files(ckpt_dir):
    (ckpt_dir / "state.json").write_text("{not json")
    with pytest.raises(ValueError, match="state.json is not valid JSON"):
        load(ckpt_dir)
    (ckpt_dir / "state.json").write_text(json.dumps({"step": 5, "model": "../../etc/passwd"}))
    with pytest.raises(ValueError, match="state.json is malformed"):
        load(ckpt_dir)
    (ckpt_dir / "state.json").write_text(json.dumps({"step": 5, "model": "model-0000005.safetensors"}))
    (ckpt_dir / "config.json").write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="config.json"):
        load(ckpt_dir)


def test_config_with_a_bad_value(ckpt_dir):
    config = json.loads((ckpt_dir / "config.json").read_text())
    config["model"]["n_layers"] = 0
    (ckpt_dir / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="config.json.*n_layers"):
        load(ckpt_dir)
    config["model"]["n_layers"] = 2
    config["model"]["n_layerz"] = 2
    (ckpt_dir / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="n_layerz"):
        load(ckpt_dir)


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):  # unpickling this creates the marker file
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("kind", ["pickle", "torch.save"])
def test_loader_never_unpickles(ckpt_dir, monkeypatch, kind):
    marker = ckpt_dir.parent / "pwned"
    path = ckpt_dir / weight_file(ckpt_dir)
    if kind == "pickle":
        path.write_bytes(pickle.dumps(_Payload(str(marker))))
    else:
        torch.save({"embed.weight": _Payload(str(marker))}, path)
    # sanity: the payload does run when unpickled
    probe = ckpt_dir.parent / "probe"
    pickle.loads(pickle.dumps(_Payload(str(probe))))
    assert probe.exists()

    def forbidden(*a, **k):
        raise AssertionError("the checkpoint loader must not unpickle")

    for mod, name in [(pickle, "load"), (pickle, "loads"), (torch, "load")]:
        monkeypatch.setattr(mod, name, forbidden)
    with pytest.raises(ValueError, match="not a valid safetensors file"):
        load(ckpt_dir)
    assert not marker.exists()
