from pathlib import Path

import pytest
import torch

from qkv.core import corpus

# a small English text of the built-in corpus, for the tests that train
TEXT = corpus.generate(n_sentences=200, lang="en")


@pytest.fixture(scope="session", autouse=True)
def single_thread():
    """Tiny models run fastest on one thread, and do not stall when the CPU cores are busy."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


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
