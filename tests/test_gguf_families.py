"""GGUF files of the families beyond Llama's, written as llama.cpp's converter writes each architecture
(gguf_families.py): Phi-3, Gemma 2, Gemma 3 and GPT-2 read by qkv give transformers' own GGUF reading,
number for number (logits within 1e-5 of the largest, float32; greedy tokens; token ids), in F32 and
Q8_0; OLMo-2 and GPT-NeoX, which transformers does not read from GGUF, give the model they were written
from (F32), or that model with its weights quantized and dequantized (Q8_0)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gguf_families import family_model, round_trip, write_family
from gguf_files import SAMPLE, WIDTH, transformers, vocab_size
from test_gguf import IDS, RTOL, assert_same

from qkv.core.hub.pretrained import load_pretrained

ALL = ["phi3", "gemma2", "gemma3", "gpt2", "gptneox", "olmo2"]


def relative(got: torch.Tensor, want: torch.Tensor) -> float:
    return (got - want).abs().max().item() / want.abs().max().item()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["F32", "Q8_0"])
@pytest.mark.parametrize("arch", ["phi3", "gemma2", "gemma3", "gpt2"])
def test_the_families_are_transformers(arch, kind, tmp_path):
    path = write_family(tmp_path / f"{arch}-{kind}.gguf", family_model(arch, vocab_size("gpt2")), arch, kind)
    assert_same(path)


@pytest.mark.parametrize("arch", ALL)
def test_an_f32_file_is_the_model_it_was_written_from(arch, tmp_path):
    """No transformers GGUF reading in between: what the converter did (Gemma's 1 + w, GPT-2's transposes,
    GPT-NeoX's regrouped rows) is undone exactly."""
    original = family_model(arch, vocab_size("gpt2"))
    model, _ = load_pretrained(str(write_family(tmp_path / f"{arch}.gguf", original, arch)))
    with torch.no_grad():
        want, got = original(IDS).logits, model(IDS)
    assert want.abs().max() > 1.0
    assert relative(got, want) <= RTOL


@pytest.mark.parametrize("arch", ["gptneox", "olmo2"])
def test_a_q8_0_file_is_its_dequantized_model(arch, tmp_path):
    original = round_trip(family_model(arch, vocab_size("gpt2")), "Q8_0")  # Q8_0 again gives the same blocks
    model, _ = load_pretrained(str(write_family(tmp_path / f"{arch}.gguf", original, arch, "Q8_0")))
    with torch.no_grad():
        want, got = original(IDS).logits, model(IDS)
    assert relative(got, want) <= RTOL


def test_the_files_say_their_switches(tmp_path):
    """The metadata becomes each family's own switches: Gemma 3's five sliding layers to a global one and
    its two RoPE bases, Gemma 2's soft caps, Pythia's quarter-rotated heads and parallel blocks."""
    said = {}
    for arch in ("gemma2", "gemma3", "gptneox", "gpt2"):
        path = write_family(tmp_path / f"{arch}.gguf", family_model(arch, vocab_size("gpt2")), arch, "Q8_0")
        said[arch] = load_pretrained(str(path))[0]
    g3 = said["gemma3"].cfg
    assert g3.layer_types == "lllllg" and g3.rope_base == 1e6 and g3.rope_base_local == 1e4 and g3.qk_norm
    g2 = said["gemma2"].cfg
    assert g2.attn_scores_soft_cap == 50 and g2.output_logits_soft_cap == 30 and g2.sliding_window == 16
    neox = said["gptneox"].cfg
    assert neox.rotary_dim == 16 and neox.parallel_attn_mlp and neox.bias
    assert said["gpt2"].loaded_from["architecture"] == "gpt2" and said["gpt2"].cfg.pos == "learned"


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["phi3", "gemma2", "gemma3"])
def test_sentencepiece_spaces_are_transformers(arch, tmp_path):
    """A SentencePiece vocabulary read as transformers reads it for the architecture: "▁" before every text
    (phi3), before none (Gemma), a text of leading and doubled spaces included; and decoded back."""
    path = write_family(tmp_path / f"{arch}.gguf", family_model(arch, vocab_size("llama")), arch, "Q8_0", "llama")
    _, tok = load_pretrained(str(path))
    hf_tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    for text in (SAMPLE, " hi  there", "  two spaces first", "x"):
        assert tok.encode(text) == hf_tok(text)["input_ids"], text
        assert tok.decode(tok.encode(text)[1:]) == hf_tok.decode(hf_tok(text)["input_ids"][1:]), text


def test_longrope_factors_are_refused_in_one_line(tmp_path):
    from test_gguf_hostile import assert_refused

    factors = np.ones(WIDTH // 4 // 2, np.float32)  # one a rotated pair
    model = family_model("phi3", vocab_size("gpt2"))
    path = write_family(tmp_path / "long.gguf", model, "phi3", rope_factors_long=factors, rope_factors_short=factors)
    assert_refused(path, "rope_factors")


def test_gemma_scales_scores_as_llama_cpp():
    """llama.cpp scales Gemma's scores by head_dim^-0.5, the 27B models' by (d_model / n_heads)^-0.5 (their
    query_pre_attn_scalar: 144 for Gemma 2 27B, 168 for Gemma 3 27B), and the metadata says which by its
    layer count; a Gemma 2 file without soft caps has none (transformers' defaults would add them)."""
    from qkv.core.hub.gguf.families import gemma_extra

    def md(arch, layers, width, heads, d_head, **more):
        keys = {"block_count": layers, "embedding_length": width, "attention.head_count": heads}
        return {f"{arch}.{k}": v for k, v in {**keys, "attention.key_length": d_head, **more}.items()}

    assert gemma_extra("gemma2")(md("gemma2", 46, 4608, 32, 128), set())["query_pre_attn_scalar"] == 144
    assert gemma_extra("gemma3")(md("gemma3", 62, 5376, 32, 128), set())["query_pre_attn_scalar"] == 168
    nine = gemma_extra("gemma2")(md("gemma2", 42, 3584, 16, 256, attn_logit_softcapping=50.0), set())
    assert nine == {"query_pre_attn_scalar": 256, "final_logit_softcapping": None}
