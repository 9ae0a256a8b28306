import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from rundir_util import FILES, TINY, snapshot

from qkv.core.text import corpus
from qkv.core.train.lm import train

# a small English text of the built-in corpus, for the tests that train
TEXT = corpus.generate(n_sentences=200, lang="en")


@pytest.fixture(scope="session", autouse=True)
def single_thread():
    """Tiny models run fastest on one thread, and do not stall when the CPU cores are busy. The
    commands the tests run (in this process or in new ones) keep to one thread too (QKV_THREADS)."""
    before, env = torch.get_num_threads(), os.environ.get("QKV_THREADS")
    torch.set_num_threads(1)
    os.environ["QKV_THREADS"] = "1"
    yield
    torch.set_num_threads(before)
    if env is None:
        os.environ.pop("QKV_THREADS", None)
    else:
        os.environ["QKV_THREADS"] = env


@pytest.fixture(autouse=True)
def no_debug(monkeypatch):
    """Errors are one line unless QKV_DEBUG is set: tests see what a user sees."""
    monkeypatch.delenv("QKV_DEBUG", raising=False)


@pytest.fixture(scope="session")
def text_file(tmp_path_factory) -> Path:
    """TEXT in a UTF-8 file (read-only: copy it before changing it)."""
    p = tmp_path_factory.mktemp("text") / "corpus.txt"
    p.write_text(TEXT, encoding="utf-8")
    return p


@pytest.fixture(scope="session")
def runs(tmp_path_factory, text_file) -> dict[str, Path]:
    """Two runs stopped at step 10 of 20: "base", and "other" with another d_model and tokenizer (read-only)."""
    root = tmp_path_factory.mktemp("runs")
    train(text_path=text_file, out=root / "base", overrides=TINY, until=10, progress=False)
    train(
        text_path=text_file,
        out=root / "other",
        overrides=TINY + ["d_model=16"],
        tokenizer="word",
        until=10,
        progress=False,
    )
    assert sorted(snapshot(root / "base")) == sorted(FILES)
    return {"base": root / "base", "other": root / "other"}


@pytest.fixture
def base(runs, tmp_path) -> Path:
    """A copy of runs["base"] to change."""
    d = tmp_path / "run"
    shutil.copytree(runs["base"], d)
    return d


@pytest.fixture(scope="session")
def minilm():
    """(Encoder, WordPieceTokenizer) of all-MiniLM-L6-v2 from the `real` extra (make test installs it).
    Without the package these tests skip; under CI=true they fail, since CI must have it."""
    import os

    from qkv.core.hub.pretrained import load_pretrained

    try:
        return load_pretrained("minilm")
    except ValueError as e:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(e))


SENTENCE = "我 投资了 苹果 ，"  # the bundled model's sentence of the shared export (browser tests)


@pytest.fixture(scope="session")
def server():
    """`qkv serve` of the bundled model, one for the session (the browser tests): its base URL.
    Started as a user starts it, with no arguments (port 8000), unless something else holds that port
    (or another xdist worker may take it)."""
    from browser_util import free_port, start_server, stop

    with socket.socket() as s:
        taken = s.connect_ex(("127.0.0.1", 8000)) == 0
    # under pytest-xdist only the first worker may take 8000: two checking at once would both see it free
    other_worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0"
    proc, url = start_server(*(["--port", str(free_port())] if taken or other_worker else []))
    yield url
    stop(proc)


@pytest.fixture(scope="session")
def bundled_export(tmp_path_factory) -> Path:
    """`qkv explain SENTENCE --html FILE` of the bundled model, written once (read-only: copy it to change it)."""
    out = tmp_path_factory.mktemp("export") / "attention.html"
    subprocess.run(
        [sys.executable, "-m", "qkv", "explain", SENTENCE, "--html", str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out
