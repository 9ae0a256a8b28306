"""A config.json that says tied (tie_word_embeddings) over a weight file that holds its own, different
lm_head.weight: transformers 5 ties only equal tensors, so it reads the stored head (and warns); qkv reads
it too, says so in one line in the user's language, and gives transformers' logits. A head stored again
equal to W_E stays tied, without a word (hub/read.unembedding decides for every family)."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

from llm_dirs import IDS, byte_level_tokenizer, random_model, save_dir  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402
from test_pretrained_dirs import _bpe_tokenizer_json  # noqa: E402

from qkv.core.hub.pretrained import load_pretrained  # noqa: E402
from qkv.presentation.i18n import speaking  # noqa: E402

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()


def _gpt2(d):
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = _bpe_tokenizer_json(d)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=64, n_embd=32, n_layer=2, n_head=4)
    hf = GPT2LMHeadModel(config)
    hf.save_pretrained(d, safe_serialization=True)
    return "transformer.wte.weight", GPT2LMHeadModel


def _llama(d):
    hf = random_model("llama-tied")
    save_dir(hf, d, byte_level_tokenizer())
    return "model.embed_tokens.weight", type(hf)


FAMILIES = {"gpt2": _gpt2, "llama": _llama}


def _with_head(d, embedding: str, head) -> None:
    """Add lm_head.weight to the directory's one weight file (save_pretrained leaves a tied head out)."""
    tensors = load_file(str(d / "model.safetensors"))
    assert "lm_head.weight" not in tensors and embedding in tensors
    tensors["lm_head.weight"] = head(tensors[embedding]).contiguous()
    save_file(tensors, str(d / "model.safetensors"), metadata={"format": "pt"})


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_stored_head_that_differs_is_read_as_transformers_reads_it(family, tmp_path, capfd):
    embedding, hf_class = FAMILIES[family](tmp_path)
    g = torch.Generator().manual_seed(3)
    _with_head(tmp_path, embedding, lambda w: torch.randn(w.shape, generator=g) * w.std())
    hf = hf_class.from_pretrained(tmp_path).eval()
    stored = load_file(str(tmp_path / "model.safetensors"))["lm_head.weight"]
    assert torch.equal(hf.lm_head.weight, stored)  # transformers kept the stored head: untied
    capfd.readouterr()
    model, tokenizer = load_pretrained(tmp_path)
    said = capfd.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "tie_word_embeddings" in said[0] and "lm_head.weight" in said[0], said
    assert not model.cfg.tie_embeddings
    ids = IDS[:1, :12] % tokenizer.vocab_size
    with torch.no_grad():
        theirs = hf(ids).logits
        ours = model(ids)
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=0)  # today: ~1 apart (W_E read as W_U)


@pytest.mark.slow
def test_the_line_is_said_in_chinese(tmp_path, capfd):
    embedding, _ = _gpt2(tmp_path)
    _with_head(tmp_path, embedding, lambda w: -w)
    capfd.readouterr()
    with speaking("zh"):
        load_pretrained(tmp_path)
    said = capfd.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "transformers 的做法" in said[0] and "lm_head.weight" in said[0], said


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_head_stored_again_equal_to_the_embedding_stays_tied(family, tmp_path, capfd):
    embedding, hf_class = FAMILIES[family](tmp_path)
    _with_head(tmp_path, embedding, lambda w: w.clone())
    hf = hf_class.from_pretrained(tmp_path).eval()
    capfd.readouterr()
    model, tokenizer = load_pretrained(tmp_path)
    assert capfd.readouterr().err == ""
    assert model.cfg.tie_embeddings and model.unembed.weight is model.embed.weight
    ids = IDS[:1, :12] % tokenizer.vocab_size
    with torch.no_grad():
        torch.testing.assert_close(model(ids), hf(ids).logits, atol=1e-5, rtol=0)
