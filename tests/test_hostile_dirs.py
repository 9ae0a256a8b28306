"""Hostile model directories (Hardening round 3, items 1-4): a config that describes terabytes, fields
of the wrong type or range, a FIFO or a link to /dev/zero in a file's place, weight files beside the
ones the layout names. Each is a one-line ValueError naming the file (and the field), raised before
anything of the described size is allocated and before anything could hang.

The directories are tiny and built offline, as in test_pretrained_dirs.py (whose fixtures these are).
A load that could hang runs in a thread that must return within TIMEOUT seconds (`within`), so a hang
fails the test instead of stopping the suite. A read blocked on a FIFO may hold the GIL (safetensors'
and tokenizers' Rust code does), so the thread alone cannot time it out: a watchdog process opens each
FIFO for writing after TIMEOUT seconds, and the reader gets an end of file (`fifos`). The classes of
qkv's models refuse to be built in the size tests (`no_build`), so a check that comes too late fails
instead of allocating what the config describes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest
import torch
from checkpoint_util import tiny_model
from cli_util import run_error
from safetensors.torch import load_file, save_file
from test_pretrained_dirs import _bpe_tokenizer_json, bert_dir, gpt2_dir, randomise_norms  # noqa: F401

from qkv.core.hub.pretrained import load_pretrained
from qkv.core.model import make_model
from qkv.core.spec.config import ModelConfig
from qkv.core.text.batches import read_text
from qkv.core.train import checkpoint
from qkv.core.train.checkpoint import load, load_checkpoint, save

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TIMEOUT = 10  # seconds: every load here takes well under one
INDEX = "model.safetensors.index.json"


def within(fn, seconds: float = TIMEOUT):
    """fn(), run in a thread: what it returns (or raises), or a test failure if it is still running
    after `seconds` (a read that waits on a FIFO, or never ends on /dev/zero)."""
    done = {}

    def run():
        try:
            done["value"] = fn()
        except BaseException as e:  # handed to the test's thread
            done["error"] = e

    start = time.monotonic()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive() or time.monotonic() - start > seconds:
        pytest.fail(f"still running after {seconds} s: it hangs")
    if "error" in done:
        raise done["error"]
    return done["value"]


def one_line(err) -> str:
    message = str(err.value)
    assert "\n" not in message, message
    return message


def copy(d, tmp_path, name="model"):
    out = tmp_path / name
    shutil.copytree(d, out)
    return out


def edit_json(path, **fields):
    obj = json.loads(path.read_text())
    obj.update(fields)
    path.write_text(json.dumps(obj))


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    """A tiny qkv checkpoint (read-only: copy it before changing it)."""
    d = tmp_path_factory.mktemp("qkv") / "ckpt"
    save(d, *tiny_model())
    return d


@pytest.fixture(scope="module")
def sharded_gpt2(tmp_path_factory):
    """A GPT-2 directory in shards (model-0000i-of-0000n.safetensors and the index), and its model."""
    from transformers import GPT2Config, GPT2LMHeadModel

    d = tmp_path_factory.mktemp("sharded")
    tok = _bpe_tokenizer_json(d)
    torch.manual_seed(0)
    hf = GPT2LMHeadModel(GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=32, n_embd=32, n_layer=2, n_head=4))
    randomise_norms(hf)
    hf.save_pretrained(d, max_shard_size="20KB")
    assert (d / INDEX).exists() and not (d / "model.safetensors").exists()
    assert len(list(d.glob("model-*.safetensors"))) > 2
    return d, hf.eval()


@pytest.fixture(scope="module")
def bert_vocab_dir(bert_dir, tmp_path_factory):  # noqa: F811
    """A BERT directory with vocab.txt instead of tokenizer.json."""
    from tokenizers import Tokenizer

    d, out = bert_dir[0], tmp_path_factory.mktemp("bert_vocab")
    for name in ("config.json", "model.safetensors"):
        shutil.copy(d / name, out / name)
    vocab = Tokenizer.from_file(str(d / "tokenizer.json")).get_vocab()  # token -> id
    (out / "vocab.txt").write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def gpt2_vocab_dir(gpt2_dir, tmp_path_factory):  # noqa: F811
    """A GPT-2 directory with vocab.json and merges.txt instead of tokenizer.json."""
    from tokenizers import Tokenizer

    d, out = gpt2_dir[0], tmp_path_factory.mktemp("gpt2_vocab")
    for name in ("config.json", "model.safetensors"):
        shutil.copy(d / name, out / name)
    Tokenizer.from_file(str(d / "tokenizer.json")).model.save(str(out))  # vocab.json, merges.txt
    assert load_pretrained(out)[1].vocab_size == load_pretrained(d)[1].vocab_size
    return out


@pytest.fixture
def no_build(monkeypatch):
    """qkv's model classes refuse to be built: what must be refused before any allocation fails loudly here
    if it is refused only after (or not at all), instead of allocating what the config describes."""

    def refuse(self, cfg):
        raise AssertionError(f"a model was built ({cfg.n_layers} layers of d_model {cfg.d_model})")

    from qkv.core.model.encoder import Encoder
    from qkv.core.model.gpt import GPT
    from qkv.core.model.seq2seq import Seq2Seq

    for cls in (GPT, Encoder, Seq2Seq):
        monkeypatch.setattr(cls, "__init__", refuse)


def gpt2_logits_match(d, hf):
    model, tok = within(lambda: load(d))
    ids = tok.encode("the cat ate an apple 我 吃了")
    with torch.no_grad():
        torch.testing.assert_close(model(torch.tensor([ids])), hf(torch.tensor([ids])).logits, atol=1e-5, rtol=0)


# ---------------------------------------------------------------------------- 1. size, before allocation

TINY = dict(d_vocab=11, n_ctx=6, d_model=8, n_heads=2, n_layers=2)
BERT = dict(arch="bert", n_token_types=2, norm="post", causal=False, unembed_bias=False)
VARIANTS = {
    "gpt": {},
    "tied": dict(tie_embeddings=True),
    "no_bias": dict(bias=False),
    "no_unembed_bias": dict(unembed_bias=False),
    "rope": dict(pos="rope"),
    "sinusoidal": dict(pos="sinusoidal"),
    "no_positions": dict(pos="none"),
    "post_norm": dict(norm="post"),
    "no_norm": dict(norm="none"),
    "values_k": dict(values="k"),
    "no_residual": dict(residual=False),
    "d_head_3_d_mlp_5": dict(d_head=3, d_mlp=5),
    "post_tied_no_bias": dict(norm="post", residual=False, bias=False, tie_embeddings=True, unembed_bias=False),
    "bert": BERT,
    "bert_no_types_no_norm": dict(arch="bert", norm="none"),
    "bert_rope_no_bias": dict(arch="bert", pos="rope", bias=False),
    "seq2seq": dict(arch="seq2seq"),
    "seq2seq_shared_tied": dict(arch="seq2seq", share_embeddings=True, tie_embeddings=True),
    "seq2seq_post_sinusoidal": dict(arch="seq2seq", n_encoder_layers=3, norm="post", pos="sinusoidal", bias=False),
    "seq2seq_rope_k_tied": dict(arch="seq2seq", values="k", pos="rope", norm="none", tie_embeddings=True),
}


@pytest.mark.parametrize("fields", VARIANTS.values(), ids=VARIANTS.keys())
def test_the_size_computed_from_a_config_is_the_built_models(fields):
    from qkv.core.hub.size import buffer_count, param_count, param_shapes

    cfg = ModelConfig(**{**TINY, **fields})
    model = make_model(cfg)
    assert param_shapes(cfg) == {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert param_count(cfg) == sum(p.numel() for p in model.parameters())
    assert buffer_count(cfg) == sum(b.numel() for b in model.buffers())


def test_the_size_of_loaded_pretrained_models(gpt2_dir, bert_dir):  # noqa: F811
    from qkv.core.hub.size import param_count

    for d in (gpt2_dir[0], bert_dir[0]):
        model, _ = load_pretrained(d)
        assert param_count(model.cfg) == model.num_params()


GiB = 2**30


@pytest.mark.parametrize(
    "family, fields",
    [
        ("gpt2", dict(n_layer=1024, n_embd=4096, n_head=32)),  # 206 billion parameters: 825 GB
        ("bert", dict(num_hidden_layers=1024, hidden_size=8192, num_attention_heads=64, intermediate_size=32768)),
    ],
)
def test_a_pretrained_config_too_large_for_the_memory_is_refused_before_building(
    gpt2_dir,  # noqa: F811
    bert_dir,  # noqa: F811
    tmp_path,
    monkeypatch,
    no_build,
    family,
    fields,
):
    monkeypatch.setattr("qkv.core.hub.size.available_memory", lambda: 21 * GiB)
    d = copy((gpt2_dir if family == "gpt2" else bert_dir)[0], tmp_path)
    edit_json(d / "config.json", **fields)
    with pytest.raises(
        ValueError, match=r"config\.json describes [\d,]+ parameters \([\d.]+ [GT]B as float32\)"
    ) as err:
        within(lambda: load_pretrained(d))
    assert "this machine has 22.5 GB of memory available" in one_line(err)


@pytest.mark.parametrize(
    "model, tables",
    [
        (dict(d_model=65536, n_heads=64, n_layers=1024), False),
        (dict(arch="seq2seq", d_model=16384, n_heads=64, n_layers=512, n_encoder_layers=512), False),
        # a few parameters, but a sinusoidal table of a million positions: 17 GB as float32 (and twice that in float64
        # while it is computed)
        (dict(d_model=4096, n_heads=32, n_layers=1, n_ctx=1_000_000, pos="sinusoidal"), True),
    ],
    ids=["gpt", "seq2seq", "sinusoidal_table"],
)
def test_a_qkv_checkpoint_config_too_large_is_refused_before_building(
    ckpt, tmp_path, monkeypatch, no_build, model, tables
):
    monkeypatch.setattr("qkv.core.hub.size.available_memory", lambda: 8 * GiB)
    d = copy(ckpt, tmp_path)
    config = json.loads((d / "config.json").read_text())
    config["model"].update(d_head=None, d_mlp=None, **model)
    if model.get("arch") == "seq2seq":
        config["model"].update(tie_embeddings=True, share_embeddings=True)
    (d / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"config\.json describes [\d,]+ parameters") as err:
        within(lambda: load_checkpoint(d))
    assert ("numbers of fixed tables" in one_line(err)) == tables


def test_the_cli_refuses_a_config_of_terabytes_in_one_line(gpt2_dir, ckpt, tmp_path, capsys, no_build):  # noqa: F811
    """No machine has the 211 TB these describe: the real memory reader, no patch."""
    d = copy(gpt2_dir[0], tmp_path, "gpt2")
    edit_json(d / "config.json", n_layer=1024, n_embd=65536, n_head=64)
    for argv in (["explain", "the cat", "--ckpt", str(d)], ["info", "--ckpt", str(d)]):
        line = within(lambda argv=argv: run_error(capsys, argv))
        assert "config.json describes 52," in line and "TB as float32" in line, line
    q = copy(ckpt, tmp_path, "qkv")
    config = json.loads((q / "config.json").read_text())
    config["model"].update(d_model=65536, n_heads=64, n_layers=1024, d_head=None, d_mlp=None)
    (q / "config.json").write_text(json.dumps(config))
    line = within(lambda: run_error(capsys, ["info", "--ckpt", str(q)]))
    assert "config.json describes" in line and "memory available" in line, line


def test_a_model_that_just_fits_is_not_refused(gpt2_dir, monkeypatch):  # noqa: F811
    from qkv.core.hub.size import param_count

    d, _ = gpt2_dir
    cfg = load_pretrained(d)[0].cfg
    need = 4 * param_count(cfg)  # float32; learned positions: no fixed tables
    monkeypatch.setattr("qkv.core.hub.size.available_memory", lambda: need)
    assert load_pretrained(d)[0].num_params() == param_count(cfg)
    monkeypatch.setattr("qkv.core.hub.size.available_memory", lambda: need - 1)
    with pytest.raises(ValueError, match="describes"):
        load_pretrained(d)
    monkeypatch.setattr("qkv.core.hub.size.available_memory", lambda: None)  # unknown: no limit
    load_pretrained(d)


def test_the_memory_available_is_read_from_meminfo_and_the_cgroup(tmp_path, monkeypatch):
    from qkv.core.hub import size
    from qkv.core.machine import memory  # where available_memory reads them (size.py uses it)

    meminfo, limit, usage = tmp_path / "meminfo", tmp_path / "memory.max", tmp_path / "memory.current"
    meminfo.write_text("MemTotal:        2000 kB\nMemFree:  10 kB\nMemAvailable:    1000 kB\n")
    monkeypatch.setattr(memory, "MEMINFO", meminfo)
    stat = tmp_path / "memory.stat"
    monkeypatch.setattr(memory, "CGROUPS", ((limit, usage, stat, "inactive_file"),))
    assert size.available_memory() == 1_024_000  # no cgroup
    limit.write_text("max\n")
    assert size.available_memory() == 1_024_000  # a cgroup without a limit
    limit.write_text("600000\n")
    usage.write_text("100000\n")
    assert size.available_memory() == 500_000  # the cgroup's limit less its use
    stat.write_text("anon 60000\ninactive_file 30000\nactive_file 10000\n")
    assert size.available_memory() == 530_000  # less its use that is page cache it can drop
    meminfo.unlink()
    limit.unlink()
    monkeypatch.setattr(os, "sysconf", lambda name: {"SC_PHYS_PAGES": 10, "SC_PAGE_SIZE": 4096}[name])
    assert size.available_memory() == 40960  # no /proc (macOS): the physical memory

    def unknown(name):
        raise ValueError(name)

    monkeypatch.setattr(os, "sysconf", unknown)
    assert size.available_memory() is None
    size.check_fits(ModelConfig(d_model=65536, n_heads=64, n_layers=1024), "config.json")  # nothing known: no limit


def test_this_machines_memory_is_read():
    from qkv.core.hub.size import available_memory

    if os.path.exists("/proc/meminfo"):
        assert available_memory() > 0


def test_a_pretrained_weight_file_that_does_not_fit_the_config_is_refused_before_building(
    gpt2_dir,  # noqa: F811
    tmp_path,
    no_build,
):
    d = copy(gpt2_dir[0], tmp_path)
    tensors = load_file(str(d / "model.safetensors"))
    key = next(k for k in tensors if k.endswith("h.0.mlp.c_fc.weight"))
    tensors[key] = torch.zeros(32, 10)
    tensors["transformer.wte.weight"] = torch.zeros(30000, 32)  # far more than config.json's vocab_size
    save_file(tensors, str(d / "model.safetensors"))
    with pytest.raises(ValueError, match=r"tensor for (embed\.weight|blocks\.0\.mlp\.fc_in\.weight) has shape"):
        within(lambda: load_pretrained(d))


def test_a_qkv_weight_file_that_does_not_fit_the_config_is_refused_before_building(ckpt, tmp_path, no_build):
    d = copy(ckpt, tmp_path)
    config = json.loads((d / "config.json").read_text())
    config["model"].update(d_model=32, d_head=None, d_mlp=None)
    (d / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"tensor [\w.]+ has shape \([\d, ]+\) but config.json implies"):
        within(lambda: load_checkpoint(d))


def test_weights_are_read_tensor_by_tensor_not_whole_files(gpt2_dir, ckpt, monkeypatch):  # noqa: F811
    import safetensors.torch

    def whole_file(*args, **kwargs):
        raise AssertionError("a whole weight file was read into memory")

    for name in ("load", "load_file"):
        monkeypatch.setattr(safetensors.torch, name, whole_file)
    monkeypatch.setattr(checkpoint, "st_load", whole_file, raising=False)
    gpt2_logits_match(*gpt2_dir)
    assert load(ckpt)[0].num_params() == tiny_model()[0].num_params()


# ---------------------------------------------------------------------------- 2. every field checked

GPT2_BAD = [
    (dict(architectures=5), "architectures"),
    (dict(architectures=[1, 2]), "architectures"),
    (dict(model_type="llama", architectures=5), "architectures"),
    (dict(model_type=5), "model_type"),
    (dict(model_type=["gpt2"]), "model_type"),
    (dict(n_embd=True), "n_embd"),
    (dict(n_embd="32"), "n_embd"),
    (dict(n_embd=32.0), "n_embd"),
    (dict(n_head=5), "'n_embd' \\(32\\) is not divisible by 'n_head' \\(5\\)"),
    (dict(n_layer=0), "n_layer"),
    (dict(n_layer=-3), "n_layer"),
    (dict(n_layer=2000), "n_layer"),
    (dict(vocab_size=None), "vocab_size"),
    (dict(n_positions=1e9), "n_positions"),
    (dict(n_inner=0), "n_inner"),
    (dict(n_inner="128"), "n_inner"),
    (dict(layer_norm_epsilon=float("nan")), "layer_norm_epsilon"),
    (dict(layer_norm_epsilon=-1e-5), "layer_norm_epsilon"),
    (dict(resid_pdrop=1.0), "resid_pdrop"),
    (dict(attn_pdrop="0.1"), "attn_pdrop"),
    (dict(embd_pdrop=float("inf")), "embd_pdrop"),
    (dict(tie_word_embeddings="false"), "tie_word_embeddings"),
    (dict(tie_word_embeddings=0), "tie_word_embeddings"),
    (dict(activation_function=["gelu"]), "activation_function"),
    (dict(activation_function="swish"), "activation_function"),
    (dict(scale_attn_weights="yes"), "scale_attn_weights"),
]
BERT_BAD = [
    (dict(type_vocab_size=0), "type_vocab_size"),
    (dict(hidden_size=30), "'hidden_size' \\(30\\) is not divisible by 'num_attention_heads' \\(4\\)"),
    (dict(num_attention_heads=0), "num_attention_heads"),
    (dict(intermediate_size=2.5), "intermediate_size"),
    (dict(hidden_act=3), "hidden_act"),
    (dict(layer_norm_eps=float("inf")), "layer_norm_eps"),
    (dict(hidden_dropout_prob=-0.1), "hidden_dropout_prob"),
    (dict(max_position_embeddings="512"), "max_position_embeddings"),
    (dict(position_embedding_type=None), "position_embedding_type"),
    (dict(is_decoder=True), "is_decoder"),
]


@pytest.mark.parametrize(
    "family, fields, field",
    [("gpt2", *case) for case in GPT2_BAD] + [("bert", *case) for case in BERT_BAD],
    ids=lambda v: json.dumps(v) if isinstance(v, dict) else None,
)
def test_a_bad_config_field_is_named(gpt2_dir, bert_dir, tmp_path, family, fields, field):  # noqa: F811
    d = copy((gpt2_dir if family == "gpt2" else bert_dir)[0], tmp_path)
    edit_json(d / "config.json", **fields)
    with pytest.raises(ValueError) as err:
        within(lambda: load_pretrained(d))
    message = one_line(err)
    assert message.startswith(f"{d / 'config.json'}: field "), message
    assert re.search(field if "(" in field else f"field '{field}' must be ", message), message


@pytest.mark.parametrize("value", [float("inf"), -5, 0, "256", True, None, 41, 10**6])
def test_a_bad_max_seq_length_is_named(bert_dir, tmp_path, value):  # noqa: F811
    d = copy(bert_dir[0], tmp_path)
    (d / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": value}))
    with pytest.raises(
        ValueError, match=r"sentence_bert_config\.json: field 'max_seq_length' must be an integer"
    ) as err:
        within(lambda: load_pretrained(d))
    assert "from 1 to 40" in one_line(err)  # max_position_embeddings


def test_a_good_max_seq_length_cuts_the_inputs(bert_dir, tmp_path):  # noqa: F811
    d = copy(bert_dir[0], tmp_path)
    (d / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 16, "do_lower_case": False}))
    assert load_pretrained(d)[1].max_length == 16


@pytest.mark.parametrize("value", ["false", 0, None, [True]])
def test_a_bad_do_lower_case_is_named(bert_vocab_dir, tmp_path, value):
    d = copy(bert_vocab_dir, tmp_path)
    (d / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": value}))
    with pytest.raises(ValueError, match=r"tokenizer_config\.json: field 'do_lower_case' must be true or false"):
        within(lambda: load_pretrained(d))


def test_do_lower_case_false_keeps_the_case(bert_vocab_dir, tmp_path):
    d = copy(bert_vocab_dir, tmp_path)
    (d / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}))
    cased = load_pretrained(d)[1].pieces("The Cat")
    assert cased != load_pretrained(bert_vocab_dir)[1].pieces("The Cat")


def test_the_cli_names_a_bad_field(gpt2_dir, bert_dir, tmp_path, capsys):  # noqa: F811
    b = copy(bert_dir[0], tmp_path, "bert")
    edit_json(b / "config.json", type_vocab_size=0)
    assert "field 'type_vocab_size' must be an integer from 1" in run_error(capsys, ["info", "--ckpt", str(b)])
    g = copy(gpt2_dir[0], tmp_path, "gpt2")
    edit_json(g / "config.json", model_type="llama", architectures=[1, 2])
    line = run_error(capsys, ["explain", "the cat", "--ckpt", str(g)])
    assert "config.json: field 'architectures' must be a list" in line


# ---------------------------------------------------------------------------- 3. regular files only


# after argv[1] seconds, open the FIFO argv[2] for writing and close it while a reader waits on it
# (an end of file for the reader), until none has waited for a second
WATCHDOG = """
import os, sys, time
time.sleep(float(sys.argv[1]))
idle = 0
while idle < 100:
    try:
        os.close(os.open(sys.argv[2], os.O_WRONLY | os.O_NONBLOCK))
        idle = 0
    except OSError:  # no reader waits (or the FIFO is gone)
        idle += 1
    time.sleep(0.01)
"""


@pytest.fixture
def fifos():
    """Make FIFOs, each with a watchdog process that ends a read still waiting on it after TIMEOUT s."""
    watchdogs = []

    def watched_fifo(path):
        path.unlink(missing_ok=True)
        os.mkfifo(path)
        watchdogs.append(subprocess.Popen([sys.executable, "-c", WATCHDOG, str(TIMEOUT), str(path)]))

    yield watched_fifo
    for w in watchdogs:
        w.kill()
        w.wait()


def put_unreadable(path, kind, fifos):
    """Put a FIFO, or a link to /dev/zero, where the file `path` was."""
    if kind == "fifo":
        fifos(path)
    else:
        path.unlink(missing_ok=True)
        os.symlink("/dev/zero", path)


def refused(path, kind, err) -> None:
    message = one_line(err)
    what = "is a FIFO (named pipe)" if kind == "fifo" else "is a character device (a link to /dev/zero)"
    assert f"{path.name} {what}, not a regular file" in message, message


KINDS = ["fifo", "dev_zero"]


@pytest.mark.subprocess  # a watchdog process per FIFO
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["config.json", "tokenizer.json", "model.safetensors"])
def test_a_gpt2_directory_file_that_is_not_regular(gpt2_dir, tmp_path, fifos, name, kind):  # noqa: F811
    d = copy(gpt2_dir[0], tmp_path)
    put_unreadable(d / name, kind, fifos)
    with pytest.raises(ValueError) as err:
        within(lambda: load(d))
    refused(d / name, kind, err)
    with pytest.raises(ValueError) as err:
        within(lambda: load_pretrained(d))
    refused(d / name, kind, err)


@pytest.mark.subprocess  # a watchdog process per FIFO
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["vocab.txt", "tokenizer_config.json", "vocab.json", "merges.txt"])
def test_a_vocab_file_that_is_not_regular(bert_vocab_dir, gpt2_vocab_dir, tmp_path, fifos, name, kind):
    d = copy(bert_vocab_dir if name in ("vocab.txt", "tokenizer_config.json") else gpt2_vocab_dir, tmp_path)
    put_unreadable(d / name, kind, fifos)
    with pytest.raises(ValueError) as err:
        within(lambda: load_pretrained(d))
    refused(d / name, kind, err)


@pytest.mark.subprocess  # a watchdog process per FIFO
@pytest.mark.parametrize("kind", KINDS)
def test_a_shard_or_sentence_config_that_is_not_regular(sharded_gpt2, bert_dir, tmp_path, fifos, kind):  # noqa: F811
    d = copy(sharded_gpt2[0], tmp_path, "sharded")
    shard = sorted(d.glob("model-*.safetensors"))[1]
    put_unreadable(shard, kind, fifos)
    with pytest.raises(ValueError) as err:
        within(lambda: load_pretrained(d))
    refused(shard, kind, err)
    b = copy(bert_dir[0], tmp_path, "bert")
    put_unreadable(b / "sentence_bert_config.json", kind, fifos)
    with pytest.raises(ValueError) as err:
        within(lambda: load_pretrained(b))
    refused(b / "sentence_bert_config.json", kind, err)


@pytest.mark.subprocess  # a watchdog process per FIFO
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["config.json", "state.json", "tokenizer.json", "weights"])
def test_a_qkv_checkpoint_file_that_is_not_regular(ckpt, tmp_path, capsys, fifos, name, kind):
    d = copy(ckpt, tmp_path)
    path = d / (json.loads((d / "state.json").read_text())["model"] if name == "weights" else name)
    put_unreadable(path, kind, fifos)
    with pytest.raises(ValueError) as err:
        within(lambda: load_checkpoint(d))
    refused(path, kind, err)
    line = within(lambda: run_error(capsys, ["info", "--ckpt", str(d)]))
    assert f"{path.name} is a" in line and "not a regular file" in line, line


@pytest.mark.subprocess  # a watchdog process per FIFO
@pytest.mark.slow  # trains the conftest's runs
@pytest.mark.parametrize("kind", KINDS)
def test_a_log_that_is_not_regular_stops_a_resume(base, capsys, fifos, kind):
    put_unreadable(base / "log.jsonl", kind, fifos)
    line = within(lambda: run_error(capsys, ["train", "--out", str(base), "--resume", "--quiet"]))
    assert "log.jsonl is a" in line and "not a regular file" in line, line


@pytest.mark.subprocess  # a watchdog process per FIFO
@pytest.mark.parametrize("kind", KINDS)
def test_a_training_text_that_is_not_regular(tmp_path, fifos, kind):
    p = tmp_path / "book.txt"
    put_unreadable(p, kind, fifos)
    with pytest.raises(ValueError) as err:
        within(lambda: read_text(p))
    refused(p, kind, err)


@pytest.mark.subprocess
@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_pairs_and_training_logs_that_are_not_regular(tmp_path, fifos, kind):
    from qkv.core.decode.translate import read_pairs
    from qkv.presentation.plot_training import read_log

    for path, read in ((tmp_path / "pairs.tsv", read_pairs), (tmp_path / "log.jsonl", read_log)):
        put_unreadable(path, kind, fifos)
        with pytest.raises(ValueError) as err:
            within(lambda read=read, path=path: read(path))
        refused(path, kind, err)


def test_a_lock_file_that_is_not_regular_does_not_hang_the_message(tmp_path):
    from qkv.core.train.lock import _holder

    os.mkfifo(tmp_path / ".qkv.lock")
    assert within(lambda: _holder(tmp_path / ".qkv.lock")) == "pid unknown"


def test_a_new_run_too_large_for_the_memory_is_refused_before_building(tmp_path, capsys, no_build):
    from checkpoint_util import TEXT

    text = tmp_path / "t.txt"
    text.write_text(TEXT, encoding="utf-8")
    sets = ["n_layers=1024", "d_model=8192", "n_heads=32", "d_mlp=32768"]
    line = run_error(
        capsys, ["train", "--text", str(text), "--out", str(tmp_path / "run"), *sum((["--set", s] for s in sets), [])]
    )
    assert re.search(r"--set describes [\d,]+ parameters \([\d.]+ [TG]B as float32\); this machine has", line), line
    assert not (tmp_path / "run").exists()


def test_files_past_their_size_limit_are_refused_unread(gpt2_dir, ckpt, tmp_path):  # noqa: F811
    """Sparse files: their size is what a stat says, without a byte written."""

    def sparse(path, size):
        path.unlink(missing_ok=True)
        with open(path, "wb") as f:
            f.truncate(size)

    q = copy(ckpt, tmp_path, "qkv")
    sparse(q / "config.json", 17 * 10**6)
    with pytest.raises(ValueError, match=r"config\.json is 17\.0 MB, more than a JSON file can be \(16\.0 MB\)"):
        within(lambda: load_checkpoint(q))
    g = copy(gpt2_dir[0], tmp_path, "gpt2")
    sparse(g / "tokenizer.json", 300 * 10**6)
    with pytest.raises(ValueError, match=r"tokenizer\.json is 300\.0 MB, more than a tokenizer file can be"):
        within(lambda: load_pretrained(g))
    text = tmp_path / "book.txt"
    sparse(text, 2 * 10**9 + 1)
    with pytest.raises(ValueError, match=r"book\.txt is 2\.0 GB, more than a training text can be"):
        within(lambda: read_text(text))


# ---------------------------------------------------------------------------- 4. the weight files the layout names


def test_another_safetensors_file_beside_model_safetensors_is_not_read(gpt2_dir, tmp_path):  # noqa: F811
    d = copy(gpt2_dir[0], tmp_path)
    tensors = load_file(str(d / "model.safetensors"))
    save_file({k: v + 0.5 for k, v in tensors.items()}, str(d / "zzz.safetensors"))  # sorts after model.*
    gpt2_logits_match(d, gpt2_dir[1])
    from qkv.analysis.model_info import model_info

    model, tok = load(d)  # the size it reports is of the file it read
    assert model_info(model, tok)["weights_bytes"] == (d / "model.safetensors").stat().st_size


def test_a_sharded_directory_loads_as_transformers_loads_it(sharded_gpt2, tmp_path):
    gpt2_logits_match(*sharded_gpt2)
    d = copy(sharded_gpt2[0], tmp_path)
    save_file({"transformer.wte.weight": torch.zeros(1)}, str(d / "stray.safetensors"))  # not in the index: not read
    gpt2_logits_match(d, sharded_gpt2[1])


def _index(d) -> dict:
    return json.loads((d / INDEX).read_text())


def _bad_index(d, how):
    index = _index(d)
    wm = index["weight_map"]
    first = sorted(set(wm.values()))[0]
    if how == "missing_file":
        (d / first).unlink()
        return f"names {first}, which is missing"
    if how in ("parent", "subdirectory", "absolute"):
        name = {"parent": "../" + first, "subdirectory": "sub/" + first, "absolute": str(d / first)}[how]
        wm[next(iter(wm))] = name
        (d / INDEX).write_text(json.dumps(index))
        return "is not the name of a file in"
    if how == "not_a_map":
        (d / INDEX).write_text(json.dumps({"weight_map": ["x.safetensors"]}))
        return "field 'weight_map' must map"
    if how == "wrong_file":  # a tensor mapped to a shard that does not hold it
        tensor = next(t for t, f in wm.items() if f != first)
        wm[tensor] = first
        (d / INDEX).write_text(json.dumps(index))
        return f"maps {tensor} to {first}, which does not hold it"
    if how == "no_model_safetensors":
        (d / INDEX).unlink()
        return "has no model.safetensors nor model.safetensors.index.json"
    raise AssertionError(how)


def test_model_safetensors_beside_an_index_is_what_is_read(sharded_gpt2, tmp_path):
    """As transformers does: model.safetensors wins over the index beside it (a hub repository may hold both)."""
    d, hf = sharded_gpt2
    whole = tmp_path / "whole"
    hf.save_pretrained(whole, safe_serialization=True)
    both = copy(d, tmp_path)
    shutil.copy(whole / "model.safetensors", both / "model.safetensors")
    for shard in set(_index(both)["weight_map"].values()):
        (both / shard).unlink()  # the index now names files that are gone: read, it would be refused
    gpt2_logits_match(both, hf)


@pytest.mark.parametrize(
    "how",
    ["missing_file", "parent", "subdirectory", "absolute", "not_a_map", "wrong_file", "no_model_safetensors"],
)
def test_an_ambiguous_or_broken_layout_is_refused(sharded_gpt2, tmp_path, how):
    d = copy(sharded_gpt2[0], tmp_path)
    expected = _bad_index(d, how)
    with pytest.raises(ValueError) as err:
        within(lambda: load_pretrained(d))
    assert expected in one_line(err), one_line(err)
