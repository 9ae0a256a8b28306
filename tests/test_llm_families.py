"""Llama, Mistral, Qwen2 and Qwen3 directories (save_pretrained layout) against transformers and TransformerLens.

Each model is a small random one built by transformers offline from its config (vocab 320, width 64,
2 layers, 4 heads of which 2 key/value heads, eager attention), its RMSNorm weights far from 1 and its
biases far from 0, saved with a byte-level BPE tokenizer.json trained here. qkv reads the directory
with load_pretrained (no transformers involved) and must give transformers' logits, attention
patterns and greedy tokens; TransformerLens 4's bridge must see the same activations under the names
both record. Hostile directories are refused in one line before anything is allocated.
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

from qkv.core.checks import check  # noqa: E402
from qkv.core.models import pretrained  # noqa: E402
from qkv.core.models.pretrained import load_pretrained  # noqa: E402
from qkv.core.sample import generate_ids  # noqa: E402

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()  # "Writing model shards", "Loading weights"

TEXT = "hello world, the cat sat on the mat. the dog ate an apple. 我昨天吃了苹果。\n" * 50
LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 32,
}
BASE = dict(
    vocab_size=320,
    hidden_size=64,
    intermediate_size=96,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=128,
    initializer_range=0.1,  # larger than the default 0.02: peaked patterns, logits of a few units
)
# name -> (model_type, config fields beyond BASE)
VARIANTS = {
    "llama": ("llama", {}),
    "llama-rope3": ("llama", {"rope_scaling": LLAMA3}),  # Llama 3's scaled RoPE frequencies
    "llama-tied": ("llama", {"tie_word_embeddings": True, "num_key_value_heads": 4}),  # tied, and no GQA
    "llama-bias": ("llama", {"attention_bias": True, "mlp_bias": True}),
    "mistral": ("mistral", {}),
    "qwen2": ("qwen2", {}),
    "qwen3": ("qwen3", {"head_dim": 24}),  # head_dim != hidden_size / heads (64 / 4 = 16)
}
CLASSES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "mistral": ("MistralConfig", "MistralForCausalLM"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"),
}
T_LEN = 40
IDS = torch.randint(0, BASE["vocab_size"], (2, T_LEN), generator=torch.Generator().manual_seed(1))
ATOL = 1e-5


def byte_level_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        special_tokens=["<|endoftext|>"],
    )
    tok.train_from_iterator([TEXT], trainer=trainer)
    return tok


def random_model(variant: str):
    """The transformers model of a variant, random (seeded), in eval mode, eager attention."""
    kind, extra = VARIANTS[variant]
    config_cls, model_cls = (getattr(transformers, name) for name in CLASSES[kind])
    hc = config_cls(**{**BASE, **extra})
    hc._attn_implementation = "eager"
    torch.manual_seed(len(variant))
    model = model_cls(hc).eval()
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:  # RMSNorm scales (input, post-attention, final, Qwen3's q/k norms)
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
    return model


def save_dir(model, d, tokenizer, **kw):
    model.save_pretrained(d, **kw)
    tokenizer.save(str(d / "tokenizer.json"))
    return d


@pytest.fixture(scope="module")
def tokenizer():
    return byte_level_tokenizer()


@pytest.fixture(scope="module")
def family(tmp_path_factory, tokenizer):
    """family(variant) -> (directory, transformers model, qkv model): each built, saved and loaded once."""
    made = {}

    def get(variant):
        if variant not in made:
            hf = random_model(variant)
            d = save_dir(hf, tmp_path_factory.mktemp(variant), tokenizer)
            model, _ = load_pretrained(d)
            made[variant] = (d, hf, model)
        return made[variant]

    return get


def hf_forward(hf, ids=IDS):
    with torch.no_grad():
        return hf(ids, output_attentions=True)


# 1. logits, patterns, greedy tokens, checks


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_logits_patterns_and_greedy_tokens_are_transformers(variant, family):
    d, hf, model = family(variant)
    assert model.cfg.d_head == (24 if variant == "qwen3" else 16)
    assert (model.cfg.rope_scaling is not None) == (variant == "llama-rope3")
    out = hf_forward(hf)
    with torch.no_grad():
        fused = model(IDS)
    logits, trace = model.run_with_trace(IDS)
    assert out.logits.abs().max() > 1.0  # not a near-zero model, where any mistake hides under 1e-5
    torch.testing.assert_close(fused, out.logits, atol=ATOL, rtol=0)
    torch.testing.assert_close(logits, out.logits, atol=ATOL, rtol=0)
    for layer in range(model.cfg.n_layers):
        want = out.attentions[layer]
        assert want.max() > 0.5  # some query attends mostly to one key: patterns worth comparing
        torch.testing.assert_close(trace["pattern", layer], want, atol=ATOL, rtol=0)

    prompt = IDS[0, :5].tolist()
    with torch.no_grad():
        want = hf.generate(
            IDS[:1, :5], max_new_tokens=20, do_sample=False, pad_token_id=0, attention_mask=torch.ones(1, 5)
        )
    want = want[0, 5:].tolist()
    assert len(want) == 20  # no EOS among them (transformers would stop there; generate_ids does not)
    assert list(generate_ids(model, prompt, 20, temperature=0)) == want

    report = check(trace, max_hull_points=64)  # a hull LP per point: 64 of the 320 per layer keep it fast
    assert report.passed, str(report)


def test_the_directories_say_what_the_variants_are(family):
    """The switches the tests above rely on are in the saved config.json (not only in memory)."""
    read = lambda v: json.loads((family(v)[0] / "config.json").read_text(encoding="utf-8"))
    assert read("llama-rope3")["rope_parameters"]["rope_type"] == "llama3"
    assert read("llama-tied")["tie_word_embeddings"] is True
    assert read("qwen3")["head_dim"] == 24
    from safetensors import safe_open

    with safe_open(str(family("llama-tied")[0] / "model.safetensors"), framework="pt") as f:
        assert "lm_head.weight" not in f.keys()  # the tie is restored by qkv, not read from the file
    model = family("llama-tied")[2]
    assert model.unembed.weight is model.embed.weight
    assert model.stop_ids == (2,)  # generation_config.json's eos_token_id


# 2. sharded directories


@pytest.mark.parametrize("variant", ["llama", "qwen3"])
def test_a_sharded_directory_loads_the_same_model(variant, family, tokenizer, tmp_path):
    _, hf, model = family(variant)
    d = save_dir(hf, tmp_path / "sharded", tokenizer, max_shard_size="20KB")
    assert (d / pretrained.INDEX).exists() and not (d / "model.safetensors").exists()
    assert len(list(d.glob("model-*.safetensors"))) > 2
    sharded, _ = load_pretrained(d)
    with torch.no_grad():
        assert torch.equal(sharded(IDS), model(IDS))
        torch.testing.assert_close(sharded(IDS), hf_forward(hf).logits, atol=ATOL, rtol=0)


# 3. bfloat16

# bfloat16 logits of qkv against transformers' bfloat16 forward, both of the same bfloat16 weights. Measured
# over the seven variants (|logits| up to 3.8, where one bfloat16 step is 0.0156): max |diff| 0.041 to 0.070,
# mean |diff| 0.0059 to 0.0074; transformers' own bfloat16 logits are 0.041 to 0.067 from the float32 ones.
# The two round in different places (transformers' RMSNorm and softmax upcast to float32), so no closer.
BF16_MAX, BF16_MEAN = 0.1, 0.015


def from_dir(d, dtype):
    """transformers' own model of directory d, its weights in dtype (eager attention)."""
    return transformers.AutoModelForCausalLM.from_pretrained(d, dtype=dtype, attn_implementation="eager").eval()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_bfloat16_directory_loads_as_bfloat16_or_float32(variant, family, tokenizer, tmp_path):
    d = save_dir(random_model(variant).to(torch.bfloat16), tmp_path / "bf16", tokenizer)
    assert json.loads((d / "config.json").read_text(encoding="utf-8"))["dtype"] == "bfloat16"
    model, _ = load_pretrained(d, dtype="bfloat16")
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    hf = from_dir(d, torch.bfloat16)
    assert {p.dtype for p in hf.parameters()} == {torch.bfloat16}
    with torch.no_grad():
        got, want = model(IDS), hf(IDS).logits
    assert got.dtype == want.dtype == torch.bfloat16
    diff = (got.float() - want.float()).abs()
    assert diff.max().item() <= BF16_MAX and diff.mean().item() <= BF16_MEAN, (diff.max(), diff.mean())

    as32, _ = load_pretrained(d, dtype="float32")  # the bfloat16 numbers, exactly, as float32
    assert {p.dtype for p in as32.parameters()} == {torch.float32}
    with torch.no_grad():
        exact = from_dir(d, torch.float32)(IDS).logits
        torch.testing.assert_close(as32(IDS), exact, atol=ATOL, rtol=0)
    # qkv's bfloat16 error is of the size of transformers' own (measured: 0.87 to 1.70 times it)
    ours, theirs = ((x.float() - exact).abs().max().item() for x in (got, want))
    assert ours <= 2 * theirs, (ours, theirs)


# 4. TransformerLens 4's bridge


@pytest.mark.parametrize("variant", ["llama", "qwen2", "qwen3"])
def test_every_shared_hook_holds_transformer_lens_value(variant, family):
    pytest.importorskip("transformer_lens")
    from transformer_lens.model_bridge import TransformerBridge

    d, _, model = family(variant)
    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(d / "tokenizer.json"))
    # boot_transformers(model_name, ..., tokenizer=...): a local directory is read with from_pretrained, offline
    bridge = TransformerBridge.boot_transformers(str(d), tokenizer=tok, device="cpu")
    bridge.enable_compatibility_mode(disable_warnings=True, no_processing=True)
    bridge.set_use_attn_result(True)  # hook_result: each head's z_h W_O[h], as qkv records it
    ids = IDS[:, :16]
    logits, trace = model.run_with_trace(ids)
    with torch.no_grad():
        tl_logits, cache = bridge.run_with_cache(ids)
    tl = {name: cache[name] for name in cache.keys()}
    torch.testing.assert_close(logits, tl_logits, atol=1e-4, rtol=0)
    shared = [name for name in trace if name in tl]
    L = model.cfg.n_layers
    per_layer = ("hook_resid_pre", "attn.hook_pattern", "attn.hook_z", "hook_mlp_out")
    assert {f"blocks.{i}.{n}" for i in range(L) for n in per_layer} <= set(shared)
    qkv_only = {f"blocks.{i}.attn.hook_dots" for i in range(L)} | {"logits", "probs"}
    assert set(trace) - set(shared) == qkv_only
    # hook_embed; per block 23 (25 with Qwen3's hook_q_normed, hook_k_normed); ln_final's three
    assert len(shared) == 1 + (23 + 2 * model.cfg.qk_norm) * L + 3
    for name in shared:
        ours, theirs = trace[name], tl[name]
        if name.endswith(("hook_q_normed", "hook_k_normed")):
            # Qwen3's q/k norm: TransformerLens records (B, heads, T, d_head), qkv (B, T, heads, d_head)
            theirs = theirs.transpose(1, 2)
        assert ours.shape == theirs.shape, (name, ours.shape, theirs.shape)
        if name.endswith("hook_attn_scores"):  # the same mask (-inf), then the same numbers
            masked = torch.isneginf(theirs)
            assert torch.equal(torch.isneginf(ours), masked), name
            ours, theirs = ours.masked_fill(masked, 0.0), theirs.masked_fill(masked, 0.0)
        torch.testing.assert_close(ours, theirs, atol=1e-4, rtol=0, msg=lambda m, name=name: f"{name}: {m}")


# 5. hostile directories


@pytest.fixture
def hostile(family, tmp_path, monkeypatch):
    """A copy of the Llama directory to break; building a model in it fails the test (nothing may be
    allocated for a directory that is refused)."""
    d = tmp_path / "hostile"
    shutil.copytree(family("llama")[0], d)

    def no_build(*a, **k):
        raise AssertionError("a model was built for a directory that must be refused")

    monkeypatch.setattr(pretrained, "_built", no_build)
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


def test_a_bfloat16_model_is_traced_checked_and_viewed_in_float32_numbers(family):
    """--dtype bfloat16: the trace holds float32 copies (exact), the checks pass at bfloat16's rounding
    (which float32's tolerance would not), and the page's view document is made."""
    from qkv.analysis.view import view
    from qkv.core.checks import TOL, tolerance

    d, _, _ = family("qwen2")
    model, tok = load_pretrained(d, dtype="bfloat16")
    logits, trace = model.run_with_trace(IDS[:1, :12])
    assert logits.dtype == torch.float32 and all(t.dtype == torch.float32 for t in trace.values())
    with torch.no_grad():
        # the written-out path's own bfloat16 numbers, widened exactly (the fused path rounds otherwise)
        assert torch.equal(logits, model(IDS[:1, :12], explicit=True).float())
    report = check(trace, max_hull_points=64)
    assert report.passed and report.tol == tolerance(model) == 2**-7
    assert max(item.worst for item in report.items) > TOL  # float32's bound would have failed it
    assert "half precision" in str(report).splitlines()[0]
    doc = view(model, tok, "the cat sat on the mat")
    assert doc["arrays"]["pattern"]["dtype"] == "float32"


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
