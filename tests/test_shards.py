"""Token shards (`qkv tokenize`, `qkv train --data`): the ids written are the ids read (uint16 and uint32),
the streamed chunks encode as the whole text does, a damaged shard is refused in one line, training on
the shards gives the losses training on the text gives and resumes exactly, and each rank reads only
its rows of a batch."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from cli_util import run_error, run_ok, step_losses

from qkv.apps.cli import main
from qkv.core.machine.processes import World
from qkv.core.text import stream
from qkv.core.text.batches import get_batch, read_text
from qkv.core.text.prepare import tokenize_corpus
from qkv.core.text.shards import HEADER_BYTES, MappedIds, open_data, read_header
from qkv.core.text.tokenizers import CharTokenizer, train_tokenizer
from qkv.core.train.lm import LMData, train
from qkv.core.train.loop import step_seed

WORDS = ["the", "cat", "sat", "on", "a", "mat", ",", "猫", "坐在", "垫子", "上", "\n", "\n\n", "  ", "'s"]
SETTINGS = ["steps=6", "eval_interval=3", "eval_steps=2", "batch_size=4", "n_ctx=16", "d_model=16", "n_layers=1"]
SETTINGS += ["n_heads=2", "dropout=0"]


def corpus(n: int = 3000, seed: int = 0) -> str:
    """Words, marks, Chinese, runs of spaces and blank lines, in a seeded order."""
    g = torch.Generator().manual_seed(seed)
    picks = torch.randint(len(WORDS), (n, 2), generator=g).tolist()
    return "".join(WORDS[a] + (" ", "", "\n")[b % 3] for a, b in picks)


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "book.txt"
    path.write_text(corpus(), encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["char", pytest.param("word", marks=pytest.mark.slow), "bpe"])  # word: jieba loads
def test_streamed_chunks_give_the_ids_and_tokenizer_of_the_whole_text(tmp_path, text_file, monkeypatch, kind):
    """Cut into many small chunks, the text trains the same tokenizer and encodes to the same ids as whole."""
    monkeypatch.setattr(stream, "CHUNK_BYTES", 257)
    text = read_text(text_file)
    assert sum(1 for _ in stream.chunks(text_file)) > 20 and "".join(stream.chunks(text_file)) == text
    index = tokenize_corpus(text_file, tmp_path / "data", kind, shard_tokens=1000, progress=False)
    data = open_data(tmp_path / "data")
    whole = train_tokenizer(kind, text)
    assert data.tokenizer.to_dict() == whole.to_dict()
    assert data.ids.numpy().tolist() == whole.encode(text)
    assert index["dtype"] == "uint16" and len(index["shards"]) == -(-index["tokens"] // 1000)


def test_char_fast_path_equals_encode():
    tok = CharTokenizer.train("ab中\U0001f600\n ")
    text = "a中 \U0001f600b\n" * 5
    assert tok.encode_array(text).tolist() == tok.encode(text)
    with pytest.raises(ValueError, match="'z'"):
        tok.encode_array("az")


@pytest.mark.slow
def test_a_vocabulary_past_65536_writes_uint32(tmp_path):
    """70,000 distinct words: ids past 65535 need 4 bytes, and come back as written."""
    path = tmp_path / "words.txt"
    text = "\n".join(" ".join(f"w{i}" for i in range(j, j + 100)) for j in range(0, 70_000, 100))
    path.write_text(text, encoding="utf-8")
    index = tokenize_corpus(path, tmp_path / "data", "word", progress=False)
    data = open_data(tmp_path / "data")
    assert index["dtype"] == "uint32" and data.tokenizer.vocab_size > 65536
    assert read_header(tmp_path / "data" / "shard_00000.bin") == (4, index["tokens"])
    ids = data.ids.numpy()
    assert ids.max() > 65535 and ids.tolist() == data.tokenizer.encode(text)


def test_a_folder_is_its_txt_files_sorted(tmp_path):
    folder = tmp_path / "books"
    (folder / "b").mkdir(parents=True)
    (folder / "b" / "2.txt").write_text("xy\n", encoding="utf-8")
    (folder / "1.txt").write_text("ab\n", encoding="utf-8")
    (folder / "notes.md").write_text("zz", encoding="utf-8")
    index = tokenize_corpus(folder, tmp_path / "data", "char", progress=False)
    data = open_data(tmp_path / "data")
    tok = data.tokenizer
    assert tok.decode(data.ids.numpy().tolist()) == "ab\nxy\n"
    assert [s["tokens"] for s in index["sources"]] == [3, 3] and index["sources"][1]["first"] == 3


def test_a_non_utf8_byte_is_refused_as_read_text_refuses_it(tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "CHUNK_BYTES", 7)
    path = tmp_path / "bad.txt"
    path.write_bytes("line one\n第二行\n".encode() + b"\xff rest\n")
    with pytest.raises(ValueError) as streamed:
        list(stream.chunks(path))
    with pytest.raises(ValueError) as whole:
        read_text(path)
    assert str(streamed.value) == str(whole.value) and "line 3" in str(whole.value)


def test_damaged_shards_are_refused_in_one_line(tmp_path, text_file, capsys):
    tokenize_corpus(text_file, tmp_path / "data", "char", shard_tokens=2000, progress=False)
    shard = tmp_path / "data" / "shard_00001.bin"
    good = shard.read_bytes()
    train_cmd = ["train", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "run")]
    shard.write_bytes(good[:-2])  # cut short
    assert "cut short" in run_error(capsys, train_cmd)
    shard.write_bytes(b"garbage!" + good[8:])  # not the magic
    assert "header" in run_error(capsys, train_cmd)
    shard.write_bytes(good[:HEADER_BYTES] + good[HEADER_BYTES:])
    (tmp_path / "data" / "shard_00002.bin").unlink()
    assert "missing" in run_error(capsys, train_cmd)


def test_refusals_of_the_command_line(tmp_path, text_file, capsys):
    (tmp_path / "blank.txt").write_text(" \n\n", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    cases = [
        (["train", "--data", str(tmp_path / "nowhere")], "does not exist"),
        (["train", "--data", str(tmp_path)], "not a token data folder"),
        (["tokenize", "--text", str(tmp_path / "blank.txt"), "--out", str(tmp_path / "d1")], "no text"),
        (["tokenize", "--text", str(tmp_path / "empty"), "--out", str(tmp_path / "d2")], "no .txt"),
        (["tokenize", "--text", str(tmp_path / "nowhere"), "--out", str(tmp_path / "d3")], "does not exist"),
        (["tokenize", "--text", str(text_file), "--out", str(tmp_path)], "not empty"),
        (["tokenize", "--text", str(text_file), "--out", str(tmp_path / "d4"), "--vocab-size", "9"], "char"),
        (["tokenize", "--text", str(text_file), "--out", str(tmp_path / "d5"), "--tokenizer", "nope"], "nope"),
    ]
    for argv, said in cases:
        assert said in run_error(capsys, argv + ["--lang", "en"] + (["--quiet"] if argv[0] == "tokenize" else [])), argv
    assert main(["train", "--data", str(tmp_path), "--lang", "zh"]) != 0
    assert (
        capsys.readouterr().err.strip()
        == f"qkv: 错误：{tmp_path} 不是词元数据目录（没有 index.json）：请先用 qkv tokenize 生成"
    )
    assert not (tmp_path / "d1").exists() and not any(p.name.startswith(".d1") for p in tmp_path.iterdir())


@pytest.mark.slow
def test_training_on_shards_equals_training_on_the_text_and_resumes_exactly(tmp_path, text_file, capsys):
    """The same tokenizer, ids and split: the same losses, step by step; a resume continues them exactly."""
    out, err = run_ok(capsys, ["tokenize", "--text", str(text_file), "--out", str(tmp_path / "data"), "--quiet"])
    assert "tokens (uint16" in out
    sets = [a for s in SETTINGS for a in ("--set", s)]
    run_ok(capsys, ["train", "--text", str(text_file), "--out", str(tmp_path / "a"), "--quiet", *sets])
    run_ok(capsys, ["train", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "b"), "--quiet", *sets])
    run_ok(
        capsys,
        ["train", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "c"), "--quiet", "--until", "3", *sets],
    )
    run_ok(capsys, ["train", "--resume", "--out", str(tmp_path / "c"), "--quiet"])
    a, b, c = (step_losses(tmp_path / d) for d in "abc")
    assert len(a) == 6 and a == b == c
    evals = [
        [
            (d["step"], d.get("val_loss"))
            for d in map(json.loads, (tmp_path / r / "log.jsonl").open())
            if "val_loss" in d
        ]
        for r in "ab"
    ]
    assert evals[0] == evals[1] and evals[0][0][1] is not None
    data = json.loads((tmp_path / "b" / "config.json").read_text())["data"]
    assert data["kind"] == "shards" and data["sha256"] == open_data(tmp_path / "data").sha256
    (tmp_path / "other.txt").write_text(corpus(seed=1), encoding="utf-8")
    run_ok(capsys, ["tokenize", "--text", str(tmp_path / "other.txt"), "--out", str(tmp_path / "data2"), "--quiet"])
    line = run_error(
        capsys,
        ["train", "--resume", "--out", str(tmp_path / "c"), "--data", str(tmp_path / "data2"), "--set", "steps=8"],
    )
    assert "differs" in line


class _Counting(MappedIds):
    """MappedIds that records the shape of every read."""

    reads: list = []

    def gather(self, index):
        _Counting.reads.append(tuple(index.shape))
        return super().gather(index)


def test_each_rank_reads_only_its_rows(tmp_path, text_file):
    """World(rank, 2) reads B/2 windows from disk: rows [rank·B/2, (rank+1)·B/2) of the global batch."""
    tokenize_corpus(text_file, tmp_path / "data", "char", shard_tokens=500, progress=False)
    mapped = open_data(tmp_path / "data").ids
    ids = _Counting(mapped.shards)
    tensor = torch.from_numpy(mapped.numpy())
    g = lambda: torch.Generator().manual_seed(step_seed(7, 3))  # noqa: E731
    whole_x, whole_y = get_batch(tensor, 8, 32, g())  # (8, 32) each
    rows = []
    for rank in range(2):
        _Counting.reads.clear()
        x, y = get_batch(ids, 8, 32, g(), World(rank, 2))
        assert _Counting.reads == [(4, 33)]  # its 4 windows of n_ctx + 1 ids, nothing else
        rows.append((x, y))
    assert torch.equal(torch.cat([r[0] for r in rows]), whole_x) and torch.equal(
        torch.cat([r[1] for r in rows]), whole_y
    )


def test_windows_across_shard_boundaries_and_slices(tmp_path, text_file):
    tokenize_corpus(text_file, tmp_path / "data", "char", shard_tokens=97, progress=False)
    data = open_data(tmp_path / "data")
    every = torch.from_numpy(data.ids.numpy())
    part = data.ids[100:-50]
    assert len(part) == len(every) - 150
    index = torch.tensor([[0, 1, 2], [len(part) - 3, len(part) - 2, len(part) - 1]])  # (2, 3)
    assert torch.equal(part[index], every[100:-50][index])
    with pytest.raises(IndexError):
        part[torch.tensor([len(part)])]
    assert np.array_equal(data.ids[5:5].numpy(), np.array([], dtype=np.int64))


def test_lm_data_takes_mapped_ids_as_it_takes_a_tensor(tmp_path, text_file):
    from qkv.core.spec.config import TrainConfig

    tokenize_corpus(text_file, tmp_path / "data", "char", shard_tokens=300, progress=False)
    mapped = open_data(tmp_path / "data").ids
    tensor = torch.from_numpy(mapped.numpy())
    tc = TrainConfig(batch_size=4, seed=3)
    a, b = LMData(mapped, None, tc, 16), LMData(tensor, None, tc, 16)
    g = lambda: torch.Generator().manual_seed(1)  # noqa: E731
    assert torch.equal(get_batch(a.train_ids, 4, 16, g())[0], get_batch(b.train_ids, 4, 16, g())[0])


def test_the_library_refuses_text_and_data_together(tmp_path, text_file):
    with pytest.raises(ValueError, match="give one"):
        train(text_path=text_file, data=tmp_path, out=tmp_path / "run")
    with pytest.raises(ValueError, match="--tokenizer"):
        train(data=tmp_path, tokenizer="word", out=tmp_path / "run")


def _mapped_kb(path) -> int:
    """The kB of `path` this process has mapped in (its Rss lines in /proc/self/smaps)."""
    total, inside = 0, False
    for line in open("/proc/self/smaps", encoding="utf-8"):
        if "-" in line.split(" ", 1)[0]:  # a mapping's first line: its address range, ..., its file
            inside = line.rstrip().endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


@pytest.mark.skipif(not hasattr(__import__("mmap"), "MADV_DONTNEED"), reason="Linux's madvise")
def test_reading_windows_keeps_no_shard_pages_mapped(tmp_path):
    """After a batch is read, the process holds none of the shard's pages: its memory does not grow with the data."""
    path = tmp_path / "big.txt"
    path.write_text("ab\n" * 400_000, encoding="utf-8")
    tokenize_corpus(path, tmp_path / "data", "char", progress=False)
    ids = open_data(tmp_path / "data").ids
    shard = tmp_path / "data" / "shard_00000.bin"
    positions = torch.arange(0, len(ids), 4096)  # one id in every page
    assert torch.equal(ids[positions], torch.from_numpy(ids.numpy())[positions])
    assert _mapped_kb(shard) == 0
    for s in ids.shards:
        _ = int(s.ids[0 : len(s.ids) : 2048].sum())  # read without release: the pages are mapped
    assert _mapped_kb(shard) > 100
    ids[torch.tensor([0, 1])]
    assert _mapped_kb(shard) == 0


@pytest.mark.slow
@pytest.mark.subprocess
def test_two_processes_on_shards_train_what_one_trains(tmp_path, text_file):
    """`qkv train --data --nproc 2` (each rank reading its rows from disk): the losses of one process."""
    import os
    import subprocess
    import sys

    sets = [a for s in SETTINGS for a in ("--set", s)]
    env = {**os.environ, "QKV_THREADS": "1"}

    def qkv(*argv):
        run = subprocess.run([sys.executable, "-m", "qkv", *argv], capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr

    qkv("tokenize", "--text", str(text_file), "--out", str(tmp_path / "data"), "--quiet")
    sets = [*sets, "--precision", "float32"]  # exact float32 on both sides (auto may pick bf16 autocast on this CPU)
    qkv("train", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "one"), "--quiet", *sets)
    qkv("train", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "two"), "--quiet", "--nproc", "2", *sets)
    one, two = step_losses(tmp_path / "one"), step_losses(tmp_path / "two")
    assert [s for s, _ in one] == [s for s, _ in two] == list(range(1, 7))
    assert max(abs(a - b) for (_, a), (_, b) in zip(one, two)) <= 1e-5
