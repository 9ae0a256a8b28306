"""Tests for qkv.data: reading text files, splitting ids, drawing batches."""

from __future__ import annotations

import pytest
import torch

from qkv.core.text.batches import get_batch, read_text, split_ids

# ---------------------------------------------------------------------------- read_text


def test_reads_utf8(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes("héllo 你好\r\nworld\n".encode())
    assert read_text(p) == "héllo 你好\r\nworld\n"  # exactly the bytes, newlines untouched
    assert read_text(str(p)) == read_text(p)


def test_missing_file(tmp_path):
    with pytest.raises(ValueError, match="does not exist") as info:
        read_text(tmp_path / "nope.txt")
    assert "nope.txt" in str(info.value)


def test_directory(tmp_path):
    with pytest.raises(ValueError, match="is not a file"):
        read_text(tmp_path)


@pytest.mark.parametrize(
    "data", [b"", b"   ", b"\n\n\t \r\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf \n", "\u3000\u00a0\n".encode("utf-8")]
)
def test_empty_or_whitespace_file(tmp_path, data):
    p = tmp_path / "empty.txt"
    p.write_bytes(data)
    with pytest.raises(ValueError, match="empty") as info:
        read_text(p)
    assert "empty.txt" in str(info.value)


def test_non_utf8_names_the_byte(tmp_path):
    p = tmp_path / "latin1.txt"
    p.write_bytes(b"abc\ndef \xe9t\xe9\n")
    with pytest.raises(ValueError) as info:
        read_text(p)
    message = str(info.value)
    assert "not UTF-8" in message
    assert "byte 8" in message and "line 2" in message
    assert "latin1.txt" in message
    assert "\n" not in message


def test_non_utf8_first_byte(tmp_path):
    p = tmp_path / "utf16.txt"
    p.write_bytes("hello".encode("utf-16"))  # starts with the UTF-16 BOM ff fe
    with pytest.raises(ValueError, match="byte 0, line 1"):
        read_text(p)


def test_bom_is_stripped(tmp_path):
    p = tmp_path / "bom.txt"
    p.write_bytes(b"\xef\xbb\xbfhello\n")
    assert read_text(p) == "hello\n"
    p.write_bytes("\ufeff\ufeffx".encode("utf-8"))  # only the first is a BOM; a second one is text
    assert read_text(p) == "\ufeffx"


# ---------------------------------------------------------------------------- split_ids


def test_split_too_short_names_n_ctx_plus_one():
    with pytest.raises(ValueError, match=r"n_ctx \+ 1 = 17") as info:
        split_ids(torch.arange(16), 0.1, 16)
    assert "16 tokens" in str(info.value)
    train, val = split_ids(torch.arange(17), 0.0, 16)  # exactly one window is enough
    assert len(train) == 17 and val is None


def test_split_parts():
    ids = torch.arange(1000)
    train, val = split_ids(ids, 0.1, 16)
    assert torch.equal(train, ids[:900]) and torch.equal(val, ids[900:])
    train, val = split_ids(ids, 0.0, 16)
    assert torch.equal(train, ids) and val is None


def test_split_val_too_short():
    with pytest.raises(ValueError, match=r"n_ctx \+ 1 = 17.*val_fraction=0"):
        split_ids(torch.arange(100), 0.1, 16)  # 10 validation tokens < 17


# ---------------------------------------------------------------------------- get_batch


@pytest.mark.parametrize("batch_size, n_ctx", [(1, 1), (4, 8), (16, 32)])
def test_batch_shapes_and_shift(batch_size, n_ctx):
    ids = torch.arange(100) * 7  # distinct values, so the offsets can be recovered
    g = torch.Generator().manual_seed(0)
    x, y = get_batch(ids, batch_size, n_ctx, g)
    assert x.shape == y.shape == (batch_size, n_ctx)
    assert x.dtype == y.dtype == ids.dtype
    assert torch.equal(x[:, 1:], y[:, :-1])  # y is x shifted by one
    starts = x[:, 0] // 7
    for b in range(batch_size):
        s = int(starts[b])
        assert 0 <= s and s + n_ctx < len(ids)
        assert torch.equal(x[b], ids[s : s + n_ctx])
        assert torch.equal(y[b], ids[s + 1 : s + n_ctx + 1])


def test_batch_covers_the_whole_range_and_is_seeded():
    ids = torch.arange(20)
    g = torch.Generator().manual_seed(0)
    starts = {int(s) for _ in range(200) for s in get_batch(ids, 8, 4, g)[0][:, 0]}
    assert starts == set(range(16))  # every window that fits, including the last
    a = get_batch(ids, 8, 4, torch.Generator().manual_seed(1))
    b = get_batch(ids, 8, 4, torch.Generator().manual_seed(1))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_batch_from_exactly_one_window():
    ids = torch.arange(9)
    x, y = get_batch(ids, 3, 8, torch.Generator().manual_seed(0))
    assert torch.equal(x, ids[:8].expand(3, 8)) and torch.equal(y, ids[1:].expand(3, 8))
