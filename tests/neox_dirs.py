"""Small random GPT-NeoX (Pythia) and Phi-3 directories for the tests (test_family_neox.py,
test_family_phi3.py): each built by transformers offline from a config of the family's real shape
made small (vocab 320, width 64, 2 layers, 4 heads, eager attention), its norm weights far from 1 and
its biases far from 0, saved with the byte-level BPE tokenizer.json of llm_dirs.py; the fixture
builds each once per test module."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from llm_dirs import IDS, byte_level_tokenizer, save_dir  # noqa: E402

from qkv.core.hub.pretrained import load_pretrained  # noqa: E402

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()

ATOL = 1e-5
BASE = dict(
    vocab_size=320,
    hidden_size=64,
    intermediate_size=96,
    num_hidden_layers=2,
    num_attention_heads=4,
    max_position_embeddings=128,
    initializer_range=0.1,  # larger than the default 0.02: peaked patterns, logits of a few units
)
# name -> (config class, model class, config fields beyond BASE)
VARIANTS = {
    # Pythia's shape: parallel blocks, RoPE on a quarter of each head (4 of 16 dimensions), GELU, untied
    "pythia": ("GPTNeoXConfig", "GPTNeoXForCausalLM", dict(rotary_pct=0.25, use_parallel_residual=True)),
    # the sequential GPT-NeoX block, half the head rotated at another base, GPT-2's tanh GELU
    "neox-sequential": (
        "GPTNeoXConfig",
        "GPTNeoXForCausalLM",
        dict(rotary_pct=0.5, rotary_emb_base=500.0, use_parallel_residual=False, hidden_act="gelu_new"),
    ),
    # Phi-3 mini's shape: fused qkv_proj and gate_up_proj, grouped-query attention, whole-head RoPE
    "phi3": ("Phi3Config", "Phi3ForCausalLM", dict(num_key_value_heads=2, pad_token_id=0, eos_token_id=2)),
    # Phi-4-mini's switches: partial RoPE (3/4 of each head), tied embeddings; a sliding window of 64
    "phi3-partial": (
        "Phi3Config",
        "Phi3ForCausalLM",
        dict(
            num_key_value_heads=1,
            partial_rotary_factor=0.75,
            tie_word_embeddings=True,
            sliding_window=64,
            rope_theta=500.0,
            pad_token_id=0,
            eos_token_id=2,
        ),
    ),
}


def random_model(variant: str):
    """The transformers model of a variant, random (seeded), in eval mode, eager attention."""
    config_name, model_name, extra = VARIANTS[variant]
    hc = getattr(transformers, config_name)(**{**BASE, **extra})
    hc._attn_implementation = "eager"
    torch.manual_seed(len(variant))
    model = getattr(transformers, model_name)(hc).eval()
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name and name.endswith("weight"):  # LayerNorm / RMSNorm scales
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
    return model


@pytest.fixture(scope="module")
def tokenizer():
    return byte_level_tokenizer()


@pytest.fixture(scope="module")
def family(tmp_path_factory, tokenizer):
    """family(variant) -> (directory, transformers model, qkv model): each built, saved and loaded once."""
    made = {}

    def get(variant):
        if variant not in made:
            hf = random_model(variant)
            d = save_dir(hf, tmp_path_factory.mktemp(variant), tokenizer)
            model, _ = load_pretrained(d)
            made[variant] = (d, hf, model)
        return made[variant]

    return get


__all__ = ["ATOL", "IDS", "VARIANTS", "family", "random_model", "tokenizer"]
