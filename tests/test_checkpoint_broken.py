"""qkv.core.train.checkpoint on broken directories: each fault a one-line error naming the file; nothing unpickled."""

from __future__ import annotations

import json
import pickle

import pytest
import torch
from checkpoint_util import TOK, save_weights, tiny_model, trained_step, weight_file
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from qkv.core.spec.config import TrainConfig
from qkv.core.train.checkpoint import load, load_checkpoint, save
from qkv.core.train.loop import make_optimizer
from qkv.core.train.rundir import header_meta

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


@pytest.mark.parametrize(
    "name",
    ["config.json", "tokenizer.json", "state.json", "model-0000005.safetensors", "optimizer-0000005.safetensors"],
)
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
        meta = {k: v for k, v in header_meta(path).items() if k not in ("format", "run")}
        path.write_bytes(st_save(st_load(path.read_bytes()), meta))
    (ckpt_dir / "model-0000003.safetensors").write_bytes(st_save({"w": torch.zeros(1)}, {"step": "3"}))  # old debris?
    (ckpt_dir / "model-0000004.safetensors").write_bytes(st_save({"w": torch.zeros(1)}))  # not qkv's
    assert load_checkpoint(ckpt_dir, with_optimizer=True).state["step"] == 5
    model, _ = tiny_model(d_model=8, n_heads=1)
    save(ckpt_dir, model, TOK, step=5)  # another shape, the same step: the new weights take another name
    assert sorted(p.name for p in ckpt_dir.iterdir()) == [
        "config.json",
        "model-0000003.safetensors",
        "model-0000004.safetensors",
        "model-0000005-1.safetensors",
        "state.json",
        "tokenizer.json",
    ]
    assert load(ckpt_dir)[0].cfg == model.cfg
    save(ckpt_dir, model, TOK, step=5)
    assert weight_file(ckpt_dir) == "model-0000005.safetensors"
    assert sorted(p.name for p in ckpt_dir.glob("*.safetensors")) == [
        "model-0000003.safetensors",
        "model-0000004.safetensors",
        "model-0000005.safetensors",
    ]
