"""A pretrained byte-level model in the page, in a real browser (Chromium, headless, Playwright): a
random Llama with a SmolLM2-like tokenizer (tokenizer_layouts.py) whose vocabulary lacks some bytes.
The token chips show a token's leading space as ␣, and the note under the text box names the
characters the vocabulary cannot spell (transformers would drop them without a word)."""

from __future__ import annotations

import os

import pytest
from browser_fixtures import browser, page, require_chromium  # noqa: F401
from browser_util import act, free_port, load_page, start_server, stop

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")
from tokenizer_layouts import build  # noqa: E402

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.subprocess, pytest.mark.slow]


@pytest.fixture(scope="module")
def smol_server(tmp_path_factory):
    import torch

    hf = build("smollm2")
    folder = tmp_path_factory.mktemp("smol")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=hf.get_vocab_size(),
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    hf.save(str(folder / "tokenizer.json"))
    proc, url = start_server("--ckpt", str(folder), "--port", str(free_port()))
    yield url
    stop(proc)


def test_the_page_shows_the_space_and_names_what_cannot_be_spelled(page, smol_server):  # noqa: F811
    load_page(page, smol_server + "?lang=en")
    page.fill("#text", "Mary said Ω")
    act(page, lambda: page.click("#analyze"))
    assert page.is_hidden("#error")
    chips = page.eval_on_selector_all("#tokens .token", "bs => bs.map(b => b.textContent)")
    assert "␣said" in chips and not any("Ω" in c for c in chips)
    note = page.inner_text("#unknown")
    assert page.is_visible("#unknown") and "Ω" in note and "cannot be spelled" in note
    load_page(page, smol_server + "?lang=zh")
    page.fill("#text", "Mary said Ω")
    act(page, lambda: page.click("#analyze"))
    assert "拼不出" in page.inner_text("#unknown")
