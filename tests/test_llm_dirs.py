"""What a Llama-family directory gets beyond parity: hostile ones refused in one line before anything
is allocated, the CLI on one (explain, trace --check, generate, figure), generation ending at
generation_config.json's EOS everywhere, and what transformers leaves out of or adds to a directory.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
from safetensors.torch import load_file, save_file  # noqa: E402

from qkv.core.decode.sample import generate_ids  # noqa: E402
from qkv.core.hub import read  # noqa: E402
from qkv.core.hub.pretrained import load_pretrained  # noqa: E402

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()  # "Writing model shards", "Loading weights"
from llm_dirs import ATOL, IDS, LLAMA3, family, tokenizer  # noqa: E402, F401 (fixtures: family needs tokenizer)


@pytest.fixture
def hostile(family, tmp_path, monkeypatch):
    """A copy of the Llama directory to break; building a model in it fails the test (nothing may be
    allocated for a directory that is refused)."""
    d = tmp_path / "hostile"
    shutil.copytree(family("llama")[0], d)

    def no_build(*a, **k):
        raise AssertionError("a model was built for a directory that must be refused")

    monkeypatch.setattr(read, "_built", no_build)
    return d


def edit_config(d, **fields):
    path = d / "config.json"
    hc = json.loads(path.read_text(encoding="utf-8"))
    for k, v in fields.items():
        if v is None:
            hc.pop(k, None)
        else:
            hc[k] = v
    path.write_text(json.dumps(hc), encoding="utf-8")


def refused(d) -> str:
    with pytest.raises(ValueError) as e:
        load_pretrained(d)
    message = str(e.value)
    assert "\n" not in message and message.strip() == message, message
    return message


def test_a_model_too_large_for_the_memory_is_refused(hostile):
    # head_dim left out: 65536 / 4 heads, so W_Q alone is 65536 x 65536 per layer (about 13 trillion
    # parameters in all; with config.json's head_dim 16 kept it would be 32 billion, which a large machine holds)
    edit_config(hostile, num_hidden_layers=1024, hidden_size=65536, head_dim=None)
    message = refused(hostile)
    assert "TB as float32" in message, message
    assert "config.json" in message and "parameters" in message and "memory available" in message, message


@pytest.mark.parametrize(
    "fields, words",
    [
        ({"num_attention_heads": 6, "num_key_value_heads": 4}, ["num_attention_heads", "(6)", "(4)"]),
        ({"hidden_act": "gelu"}, ["hidden_act", "gelu"]),
        (  # transformers 4's layout: rope_theta and rope_scaling, no rope_parameters
            {"rope_parameters": None, "rope_theta": 10000.0, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}},
            ["rope_type", "yarn"],
        ),
        (  # transformers 5's layout
            {"rope_parameters": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0}},
            ["rope_type", "yarn"],
        ),
        (  # the older key added beside transformers 5's: transformers lets rope_scaling win (yarn)
            {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}},
            ["rope_type", "yarn"],
        ),
    ],
    ids=["heads-6-kv-4", "gelu", "yarn-rope_scaling", "yarn-rope_parameters", "yarn-rope_scaling-beside-parameters"],
)
def test_a_config_qkv_does_not_build_is_refused(hostile, fields, words):
    edit_config(hostile, **fields)
    message = refused(hostile)
    assert "config.json" in message and all(w in message for w in words), message


def test_llama3_rope_scaling_beside_default_rope_parameters_is_the_scaling_transformers_reads(family, tmp_path):
    """config.json with rope_parameters (type default) and a rope_scaling of type llama3 added beside it:
    transformers 5 builds the scaled RoPE (its config lets rope_scaling replace rope_parameters), so
    qkv must too, or refuse the directory; it may not build the other model silently."""
    d = tmp_path / "both"
    shutil.copytree(family("llama")[0], d)
    edit_config(d, rope_scaling=LLAMA3)
    hf = transformers.AutoModelForCausalLM.from_pretrained(d, attn_implementation="eager").eval()
    assert hf.config.rope_parameters["rope_type"] == "llama3"
    try:
        model, _ = load_pretrained(d)
    except ValueError:
        return  # refused: fine
    with torch.no_grad():
        torch.testing.assert_close(model(IDS), hf(IDS).logits, atol=ATOL, rtol=0)


def test_a_tensor_of_the_wrong_shape_is_refused(hostile):
    path = hostile / "model.safetensors"
    tensors = load_file(path)
    tensors["model.layers.0.self_attn.q_proj.weight"] = torch.zeros(64, 60)
    save_file(tensors, path, metadata={"format": "pt"})
    message = refused(hostile)
    assert "blocks.0.attn.W_QKV.weight" in message and "shape" in message, message


def test_pytorch_model_bin_alone_is_refused(hostile):
    torch.save(load_file(hostile / "model.safetensors"), hostile / "pytorch_model.bin")
    (hostile / "model.safetensors").unlink()
    message = refused(hostile)
    assert "pytorch_model.bin" in message and "safetensors" in message, message


def lying_safetensors(path, shape, offsets, data_bytes):
    """A safetensors file whose header declares `shape` (float32) at `offsets` over `data_bytes` bytes."""
    header = json.dumps(
        {"model.norm.weight": {"dtype": "F32", "shape": list(shape), "data_offsets": list(offsets)}}
    ).encode()
    header += b" " * (-len(header) % 8)
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes(data_bytes))


@pytest.mark.parametrize(
    "shape, offsets, data_bytes, error",
    [
        # safetensors' SafetensorError (from the header alone, before any data is read), as qkv quotes it:
        # the shape says 4 MB, the offsets 256 bytes (Rust's TensorInvalidInfo)
        ((1_000_000,), (0, 256), 256, "invalid shape, data type, or offset for tensor"),
        # both say 4 MB, the file holds 256 bytes (MetadataIncompleteBuffer)
        ((1_000_000,), (0, 4_000_000), 256, "incomplete metadata, file not fully covered"),
    ],
    ids=["shape-beyond-offsets", "offsets-beyond-file"],
)
def test_a_safetensors_header_that_lies_is_refused(hostile, shape, offsets, data_bytes, error):
    path = hostile / "model.safetensors"
    lying_safetensors(path, shape, offsets, data_bytes)
    message = refused(hostile)
    assert str(path) in message and "not a valid safetensors file" in message and error in message, message


# 6. the command line


def qkv_cli(*args, timeout=120):
    env = {k: v for k, v in os.environ.items() if k != "QKV_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "qkv", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


@pytest.fixture(scope="module")
def qwen2_dir(family):
    return family("qwen2")[0]


@pytest.mark.slow
@pytest.mark.subprocess
def test_cli_explain(qwen2_dir):
    proc = qkv_cli("explain", "hello world", "--ckpt", str(qwen2_dir))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() and "Traceback" not in proc.stderr
    assert "softmax(h W_out) at position" in proc.stdout  # Qwen2 has no unembedding bias: no "+ b"


@pytest.mark.slow
@pytest.mark.subprocess
def test_cli_trace_check(qwen2_dir):
    proc = qkv_cli("trace", "hello world", "--ckpt", str(qwen2_dir), "--check")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["check"]["passed"] is True
    assert "blocks.1.attn.hook_pattern" in doc["activations"]
    head = next(line for line in proc.stderr.splitlines() if "checks pass" in line)
    passed, total = head.split()[0].split("/")
    assert passed == total, proc.stderr


@pytest.mark.slow
@pytest.mark.subprocess
def test_cli_generate(qwen2_dir, family):
    proc = qkv_cli(
        "generate", "--ckpt", str(qwen2_dir), "--prompt", "hello", "--max-new-tokens", "5", "--temperature", "0"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("hello") and "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.subprocess
def test_cli_figure(qwen2_dir, tmp_path):
    out = tmp_path / "attention.svg"
    proc = qkv_cli("figure", "attention", "--ckpt", str(qwen2_dir), "--text", "hello world", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "<svg" in out.read_text(encoding="utf-8")


def test_generation_ends_at_the_eos_that_generation_config_names(family, tmp_path, capsys):
    """qkv generate stops where the model writes generation_config.json's eos_token_id, and does not print it."""
    from qkv.apps.cli import main

    d, _, model = family("qwen2")
    d = shutil.copytree(d, tmp_path / "qwen2")
    text = "the cat sat"
    _, tok = load_pretrained(d)
    prompt = tok.encode(text)
    greedy = list(generate_ids(model, prompt, 6, temperature=0))
    eos = greedy[3]  # the 4th new token: the model's end of text, as far as this directory says
    (d / "generation_config.json").write_text(json.dumps({"eos_token_id": [eos, 0]}))
    assert load_pretrained(d)[0].stop_ids == (eos, 0)
    args = ["generate", "--ckpt", str(d), "--prompt", text, "--max-new-tokens", "6", "--temperature", "0"]
    assert main(args) in (0, None)
    out = capsys.readouterr().out
    new = greedy[: greedy.index(eos)]
    assert out == text + tok.decode(new, prev=prompt[-1]) + "\n"
    model, tok = load_pretrained(d)  # the same ending in every way of generating
    assert list(generate_ids(model, prompt, 6, temperature=0)) == new
    assert main([*args, "--samples", "2"]) in (0, None)
    sample = text + tok.decode(new, prev=prompt[-1])
    assert capsys.readouterr().out.split("\n")[1:4:2] == [sample, sample]
    from fastapi.testclient import TestClient

    from qkv.apps.web.server import create_app

    page = TestClient(create_app(model, tok, "qwen2"), base_url="http://127.0.0.1:8000")
    doc = page.post("/api/generate", json={"text": text, "max_new_tokens": 6, "temperature": 0}).json()
    assert doc["ids"] == prompt + new and doc["stopped"]["end"] and doc["stopped"]["made"] == len(new)


def test_what_transformers_leaves_out_or_adds_still_loads(family, tmp_path):
    """A config.json without "architectures" (a bare model's save) and a Llama 2 file that also stores
    RoPE's rotary_emb.inv_freq (qkv computes them) load with the same logits."""
    d, _, model = family("llama")
    d = shutil.copytree(d, tmp_path / "llama")
    config = json.loads((d / "config.json").read_text())
    del config["architectures"]
    (d / "config.json").write_text(json.dumps(config))
    weights = load_file(str(d / "model.safetensors"))
    weights["model.layers.0.self_attn.rotary_emb.inv_freq"] = torch.ones(8)
    save_file(weights, str(d / "model.safetensors"))
    again, _ = load_pretrained(d)
    with torch.no_grad():
        assert torch.equal(again(IDS), model(IDS))


@pytest.mark.parametrize("variant", ["llama", "mistral", "qwen2", "qwen3"])
def test_every_family_opens_in_every_command_and_the_page(variant, family, tmp_path, capsys):
    """explain, trace --check, generate, figure and serve's documents on a directory of each family, in-process
    (the subprocess tests above run the real command on Qwen2)."""
    from fastapi.testclient import TestClient

    from qkv.apps.cli import main
    from qkv.apps.web.server import create_app

    d, _, model = family(variant)
    ckpt = ["--ckpt", str(d)]
    assert main(["explain", "the cat sat", *ckpt, "--lang", "zh"]) in (0, None)
    assert "经过全部 2 层后" in capsys.readouterr().out
    assert main(["trace", "the cat sat", *ckpt, "--check"]) in (0, None)
    doc = json.loads(capsys.readouterr().out)
    assert doc["check"]["passed"] and doc["config"]["norm"] == "rms"
    assert main(["generate", *ckpt, "--prompt", "the cat", "--max-new-tokens", "4", "--temperature", "0"]) in (0, None)
    assert capsys.readouterr().out.startswith("the cat")
    out = tmp_path / "attention.png"
    assert main(["figure", "attention", *ckpt, "--text", "the cat sat", "--out", str(out)]) in (0, None)
    assert out.stat().st_size > 1000
    _, tok = load_pretrained(d)
    page = TestClient(create_app(model, tok, variant), base_url="http://127.0.0.1:8000")
    about = page.get("/api/model").json()["model"]
    assert about["parameters"] == sum(p.numel() for p in model.parameters()) and about["norm"] == "rms"
    view = page.post("/api/view", json={"text": "the cat sat"})
    assert view.status_code == 200 and view.json()["model"]["n_heads"] == 4
