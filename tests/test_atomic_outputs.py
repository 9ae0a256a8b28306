"""Every file qkv writes is written whole or not at all (core/io/files.replacing): a write that fails
half-way (a full disk; here `ulimit -f` through RLIMIT_FSIZE, which makes a write past the limit fail with
EFBIG) leaves the file that was there byte for byte, says so in one line and exits non-zero; no temporary
file is left behind. And `qkv figure --out` into a folder that is not there is refused, not made."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_util import run_error

from qkv.apps.cli import main
from qkv.core.io.files import atomic_write, check_folder_of, replacing, write_text
from qkv.core.io.refusal import Refusal

SRC = Path(__file__).resolve().parents[1] / "src"
OLD = b"the user's earlier file\n" * 4  # 96 bytes, under the limit
LIMIT = 4096  # bytes: every output below is larger (a trace, a PNG)

# Runs each command line in one process whose files may not grow past LIMIT bytes, SIGXFSZ ignored so that
# the write raises OSError (EFBIG) instead of killing the process; prints [[exit status, stderr], ...].
# What the commands import that writes caches (matplotlib's fonts) is imported before the limit is set.
RUNNER = """
import contextlib, io, json, resource, signal, sys
import matplotlib.figure, torch
from qkv.apps.cli import main
from qkv.presentation import fonts
fonts.setup_matplotlib()
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
done = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    done.append([rc, err.getvalue()])
print(json.dumps(done))
"""

CLEAN, CORRUPT = "我 昨天 吃了 苹果 ，", "我 上周 投资了 苹果 ，"
PATCHING = ["--clean", CLEAN, "--corrupt", CORRUPT, "--answer", "味道", "--wrong", "股价"]


def _limited(argvs: list[list[str]], cwd: Path) -> list[tuple[int, str]]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "QKV_LANG": "en"}
    env.pop("QKV_DEBUG", None)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER.format(limit=LIMIT), json.dumps(argvs)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return [tuple(pair) for pair in json.loads(done.stdout)]


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX's")
def test_a_failed_write_leaves_the_earlier_file_whole(tmp_path):
    """The trace, a figure, a patching figure and a lesson's re-run, each over a file of the user's, with
    files limited to 4 kB: each fails in one line naming its file, and the earlier file is as it was."""
    lesson = tmp_path / "lesson"
    lesson.mkdir()
    targets = {
        "trace": tmp_path / "trace.json",
        "figure": tmp_path / "attention.png",
        "patching": tmp_path / "patching.png",
        "lesson": lesson / "next_token_temperature.png",  # what `qkv lesson next-token --out DIR` writes
    }
    for path in targets.values():
        path.write_bytes(OLD)
    argvs = [
        ["trace", "--out", str(targets["trace"]), "我 投资了 苹果 ，"],
        ["figure", "attention", "--out", str(targets["figure"]), "--text", "我 投资了 苹果 ，"],
        ["figure", "patching", "--out", str(targets["patching"]), *PATCHING],
        ["lesson", "next-token", "--out", str(lesson)],
    ]
    results = _limited(argvs, tmp_path)
    for (name, path), (rc, err) in zip(targets.items(), results, strict=True):
        assert path.read_bytes() == OLD, name  # written in place, it would be the new file's first 4096 bytes
        assert rc != 0, (name, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err, (name, err)
        assert lines[0].startswith("qkv: error: File too large") and path.name in lines[0], (name, err)
    assert not [p for p in tmp_path.rglob("*") if ".tmp-" in p.name]  # no temporary file left behind


def test_replacing_keeps_the_old_file_when_the_block_fails(tmp_path):
    path = tmp_path / "out.json"
    path.write_bytes(OLD)
    os.chmod(path, 0o600)
    with pytest.raises(RuntimeError), replacing(path) as f:
        f.write(b"half of the new")
        raise RuntimeError("the writer failed half-way")
    assert path.read_bytes() == OLD
    assert os.listdir(tmp_path) == ["out.json"]
    write_text(path, "new\n")  # a success replaces it whole, with the permissions it had
    assert path.read_text() == "new\n" and (os.stat(path).st_mode & 0o777) == 0o600


def test_a_write_error_names_the_file_asked_for(tmp_path):
    path = tmp_path / "out.bin"
    with pytest.raises(OSError) as e, replacing(path) as f:
        f.write(b"x")
        raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))  # as a write past `ulimit -f` fails
    assert e.value.errno == errno.EFBIG and e.value.filename == str(path)
    assert not path.exists() and not list(tmp_path.iterdir())
    with pytest.raises(FileNotFoundError) as e:
        atomic_write(tmp_path / "missing" / "out.bin", b"x")
    assert e.value.filename == str(tmp_path / "missing" / "out.bin")


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_is_written_as_it_is():
    atomic_write(Path("/dev/null"), b"nothing kept")  # no temporary file beside /dev/null, no rename over it


def test_check_folder_of_refuses_a_missing_folder(tmp_path):
    assert check_folder_of(tmp_path / "a.png") == tmp_path / "a.png"
    with pytest.raises(Refusal) as missing:
        check_folder_of(tmp_path / "nowhere" / "a.png")
    assert missing.value.key == "outputs.no_folder" and missing.value.fields["folder"] == str(tmp_path / "nowhere")
    (tmp_path / "file").write_text("x")
    with pytest.raises(Refusal) as a_file:
        check_folder_of(tmp_path / "file" / "a.png")
    assert a_file.value.key == "outputs.folder_is_file"


@pytest.mark.parametrize(
    "argv",
    [
        ["figure", "positions"],
        ["figure", "patching", *PATCHING],
        ["trace", "我 投资了 苹果"],
        ["explain", "我 投资了 苹果", "--html"],
    ],
)
def test_an_output_into_a_missing_folder_is_refused_not_made(capsys, tmp_path, argv):
    """As explain --html refuses it: one line naming the file; the folder is not made (today figure makes it)."""
    out = tmp_path / "nowhere" / {"trace": "f.json", "explain": "f.html"}.get(argv[0], "f.png")
    line = run_error(capsys, [*argv, str(out)] if argv[0] == "explain" else [*argv, "--out", str(out)])
    assert f"its folder {out.parent} does not exist" in line and str(out) in line
    assert not out.parent.exists()


def test_the_refusal_is_said_in_chinese(capsys, tmp_path):
    out = tmp_path / "nowhere" / "f.png"
    assert main(["figure", "positions", "--out", str(out), "--lang", "zh"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"qkv: 错误：无法写入 {out}：文件夹 {out.parent} 不存在") and len(err.splitlines()) == 1, err
    assert not out.parent.exists()
