"""Small random Llama, Mistral, Qwen2 and Qwen3 directories for the tests (test_llm_families.py,
test_llm_dirs.py): each built by transformers offline from its config (vocab 320, width 64, 2 layers,
4 heads of which 2 key/value heads, eager attention), its RMSNorm weights far from 1 and its biases
far from 0, saved with a byte-level BPE tokenizer.json trained here; the fixtures build each once per
test module."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from qkv.core.hub.pretrained import load_pretrained  # noqa: E402

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()  # "Writing model shards", "Loading weights"

TEXT = "hello world, the cat sat on the mat. the dog ate an apple. 我昨天吃了苹果。\n" * 50
LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 32,
}
BASE = dict(
    vocab_size=320,
    hidden_size=64,
    intermediate_size=96,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=128,
    initializer_range=0.1,  # larger than the default 0.02: peaked patterns, logits of a few units
)
# name -> (model_type, config fields beyond BASE)
VARIANTS = {
    "llama": ("llama", {}),
    "llama-rope3": ("llama", {"rope_scaling": LLAMA3}),  # Llama 3's scaled RoPE frequencies
    "llama-tied": ("llama", {"tie_word_embeddings": True, "num_key_value_heads": 4}),  # tied, and no GQA
    "llama-bias": ("llama", {"attention_bias": True, "mlp_bias": True}),
    "mistral": ("mistral", {}),
    "mistral-window": ("mistral", {"sliding_window": 8}),  # each query reads 8 keys of the 40-token text
    "qwen2": ("qwen2", {}),
    "qwen3": ("qwen3", {"head_dim": 24}),  # head_dim != hidden_size / heads (64 / 4 = 16)
}
CLASSES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "mistral": ("MistralConfig", "MistralForCausalLM"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM"),
}
T_LEN = 40
IDS = torch.randint(0, BASE["vocab_size"], (2, T_LEN), generator=torch.Generator().manual_seed(1))
ATOL = 1e-5


def byte_level_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        special_tokens=["<|endoftext|>"],
    )
    tok.train_from_iterator([TEXT], trainer=trainer)
    return tok


def random_model(variant: str):
    """The transformers model of a variant, random (seeded), in eval mode, eager attention."""
    kind, extra = VARIANTS[variant]
    config_cls, model_cls = (getattr(transformers, name) for name in CLASSES[kind])
    hc = config_cls(**{**BASE, **extra})
    hc._attn_implementation = "eager"
    torch.manual_seed(len(variant))
    model = model_cls(hc).eval()
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:  # RMSNorm scales (input, post-attention, final, Qwen3's q/k norms)
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
    return model


def save_dir(model, d, tokenizer, **kw):
    model.save_pretrained(d, **kw)
    tokenizer.save(str(d / "tokenizer.json"))
    return d


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
