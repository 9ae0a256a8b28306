"""Tests for qkv.core.checkpoint: exact round trips, crash safety, and clean errors for broken directories."""

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
import qkv.core.files as files_mod
from qkv.core.checkpoint import Writer, load, load_checkpoint, save
from qkv.core.files import atomic_write
from qkv.core.config import ModelConfig, TrainConfig
from qkv.core.models.gpt import GPT, lm_loss
from qkv.core.tokenizers import train_tokenizer
from qkv.core.train import make_optimizer

REAL_REPLACE = os.replace
TEXT = "hello world, a tiny text for a tiny tokenizer.\n" * 3
TOK = train_tokenizer("char", TEXT)


def save_weights(d, model, step, optimizer=None, info=None, tc=TrainConfig()):
    """A training checkpoint: a new run in d, or the run in d continued (its config and run id kept)."""
    w = Writer(d, model.cfg, tc, TOK, resume=(d / "state.json").exists())
    w.save(model, step, optimizer, info)
    w.close()


def tiny_model(**kw) -> tuple[GPT, object]:
    tok = TOK
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
    # exact: the file holds the weights' very bytes, and both forwards run the same ops in this process
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
        "model-0000030.safetensors", "optimizer-0000030.safetensors"]
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
    return next(i for i, name in enumerate(names) if name == "state.json" and
                any(n.startswith("model-") for n in names[:i]))


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
        leftovers = sorted(p.name for p in d.iterdir() if ".tmp-" in p.name or ".next." in p.name or
                           (p.suffix == ".safetensors" and "-0000010" in p.name))
        assert leftovers == [], k
        assert ".qkv.lock" not in [p.name for p in d.iterdir()]


# ---------------------------------------------------------------------------- broken directories


@pytest.fixture
def ckpt_dir(tmp_path):
    model, tok = tiny_model()
    opt = make_optimizer(model, TrainConfig())
    trained_step(model, opt)
    d = tmp_path / "ckpt"
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


def test_checkpoint_of_an_older_qkv_loads_and_is_replaced(ckpt_dir):
    """Files written before state.json named every file and before the markers and run ids: they load,
    and a save over them removes the old weights its state.json names, but no other file: an unnamed
    weight file without a run id (old debris, or a file copied in) cannot be proven qkv's, so it stays."""
    state = json.loads((ckpt_dir / "state.json").read_text())
    old_state = {k: state[k] for k in ("step", "model", "optimizer")}
    (ckpt_dir / "state.json").write_text(json.dumps(old_state))
    config = json.loads((ckpt_dir / "config.json").read_text())
    for key in ("run", "tokenizer_sha256"):
        del config[key]
    (ckpt_dir / "config.json").write_text(json.dumps(config))
    for name in (old_state["model"], old_state["optimizer"]):
        path = ckpt_dir / name
        meta = {k: v for k, v in ckpt_mod.header_meta(path).items() if k not in ("format", "run")}
        path.write_bytes(st_save(st_load(path.read_bytes()), meta))
    (ckpt_dir / "model-0000003.safetensors").write_bytes(st_save({"w": torch.zeros(1)}, {"step": "3"}))  # old debris?
    (ckpt_dir / "model-0000004.safetensors").write_bytes(st_save({"w": torch.zeros(1)}))  # not qkv's
    assert load_checkpoint(ckpt_dir, with_optimizer=True).state["step"] == 5
    model, _ = tiny_model(d_model=8, n_heads=1)
    save(ckpt_dir, model, TOK, step=5)  # another shape, the same step: the new weights take another name
    assert sorted(p.name for p in ckpt_dir.iterdir()) == ["config.json", "model-0000003.safetensors", "model-0000004.safetensors",
                                                           "model-0000005-1.safetensors", "state.json", "tokenizer.json"]
    assert load(ckpt_dir)[0].cfg == model.cfg
    save(ckpt_dir, model, TOK, step=5)
    assert weight_file(ckpt_dir) == "model-0000005.safetensors"
    assert sorted(p.name for p in ckpt_dir.glob("*.safetensors")) == ["model-0000003.safetensors", "model-0000004.safetensors",
                                                                      "model-0000005.safetensors"]
