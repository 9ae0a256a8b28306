"""`qkv generate` without --ckpt continues with the bundled model, as explain and trace do: the same
text as with --ckpt naming the bundled checkpoint, and as the API's generate_ids on that model."""

from __future__ import annotations

import pytest
import torch
from cli_util import run_ok

from qkv.core.decode.sample import generate_ids
from qkv.core.hub.bundled import default_ckpt
from qkv.core.train import checkpoint

PROMPT = ["--prompt", "我 投资了", "--max-new-tokens", "6", "--temperature", "0"]


@pytest.mark.slow
def test_generate_without_ckpt_reads_the_bundled_model(capsys):
    out, err = run_ok(capsys, ["generate", *PROMPT])
    named, _ = run_ok(capsys, ["generate", *PROMPT, "--ckpt", str(default_ckpt())])
    assert out == named and out.startswith("我 投资了") and len(out.strip()) > len("我 投资了")
    model, tokenizer = checkpoint.load(default_ckpt())
    ids = tokenizer.encode("我 投资了")
    new = list(generate_ids(model.eval(), ids, 6, temperature=0))
    assert out == "我 投资了" + tokenizer.decode(new, prev=ids[-1]) + "\n"


def test_the_help_says_the_default(capsys):
    from qkv.apps.cli.parser import build_parser

    text = build_parser("en")._subparsers._group_actions[0].choices["generate"].format_help()
    assert "default: the bundled model" in " ".join(text.split())


def test_qkv_load_without_a_path_is_the_bundled_model():
    import qkv

    model, tokenizer = qkv.load()
    again, words = qkv.load(default_ckpt())
    assert tokenizer.encode("我 吃了 苹果") == words.encode("我 吃了 苹果")
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))


def test_without_max_new_tokens_it_writes_only_what_the_context_holds(capsys):
    """The bundled model reads 64 tokens: by default it writes as many as every new token can read the
    whole text for (no sliding-window note); asked for 200, it slides, and says so."""
    out, err = run_ok(capsys, ["generate", "--prompt", "我 昨天", "--temperature", "0"])
    assert err == "" and out.strip()
    _, err = run_ok(capsys, ["generate", "--prompt", "我 昨天", "--temperature", "0", "--max-new-tokens", "200"])
    assert "64" in err and len(err.strip().splitlines()) == 1
