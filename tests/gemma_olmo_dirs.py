"""Small random Gemma 2, Gemma 3 (text) and OLMo-2 directories for test_family_gemma.py and
test_family_olmo2.py: each built by transformers offline from its config (vocab 320, width 64, 4 layers,
4 heads of which 2 key/value heads, eager attention), its norm weights far from their start, saved with
a tokenizer.json of the family's layout: Gemma's SentencePiece-style BPE with byte fallback (▁ for a
space, <0xE5> for a byte), OLMo-2's byte-level BPE. The Gemma ones have a sliding window (6) shorter
than the test texts, a head_dim (32) other than width / heads (16), a query_pre_attn_scalar (24) other
than head_dim, and Gemma 2's soft-caps small enough to bite (scores 3, logits 4)."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below may reach the network
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from llm_dirs import TEXT, byte_level_tokenizer  # noqa: E402

from qkv.core.hub.pretrained import load_pretrained  # noqa: E402

transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()

BASE = dict(
    vocab_size=320,
    hidden_size=64,
    intermediate_size=96,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=128,
    initializer_range=0.1,  # peaked patterns, logits of a few units
)
WINDOW = 6
GEMMA = dict(head_dim=32, query_pre_attn_scalar=24, sliding_window=WINDOW)
# name -> (config class, model class, config fields beyond BASE)
VARIANTS = {
    # every other layer slides (the first one first), scores and logits soft-capped
    "gemma2": (
        "Gemma2Config",
        "Gemma2ForCausalLM",
        {**GEMMA, "attn_logit_softcapping": 3.0, "final_logit_softcapping": 4.0},
    ),
    # layers l, l, g, l: two RoPE bases, the global one linearly scaled; untied, per-head q/k norms
    "gemma3": (
        "Gemma3TextConfig",
        "Gemma3ForCausalLM",
        {
            **GEMMA,
            "layer_types": ["sliding_attention", "sliding_attention", "full_attention", "sliding_attention"],
            "rope_parameters": {
                "full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 1000.0},
                "sliding_attention": {"rope_type": "default", "rope_theta": 50.0},
            },
            "tie_word_embeddings": False,
        },
    ),
    "olmo2": ("Olmo2Config", "Olmo2ForCausalLM", {"eos_token_id": 2, "pad_token_id": 1}),
}
T_LEN = 40
IDS = torch.randint(0, BASE["vocab_size"], (2, T_LEN), generator=torch.Generator().manual_seed(1))
ATOL = 1e-5


def piece_tokenizer():
    """A tokenizer.json of Gemma's layout: a space becomes ▁ (no ▁ put in front), BPE over the pieces, and
    a character the vocabulary lacks becomes its UTF-8 bytes <0x..> (byte fallback); <pad> <eos> <bos> <unk>
    first, as Gemma's ids 0-3, and <bos> put before every text."""
    from tokenizers import Tokenizer, decoders, models, normalizers, processors, trainers

    trainer_tok = Tokenizer(models.BPE())
    trainer_tok.normalizer = normalizers.Replace(" ", "▁")
    trainer = trainers.BpeTrainer(vocab_size=56, limit_alphabet=30, show_progress=False)
    trainer_tok.train_from_iterator([TEXT.replace("\n", " ")], trainer=trainer)
    learned = sorted(trainer_tok.get_vocab().items(), key=lambda kv: kv[1])
    specials = ["<pad>", "<eos>", "<bos>", "<unk>"]
    pieces = specials + [f"<0x{b:02X}>" for b in range(256)] + [p for p, _ in learned]
    vocab = {p: i for i, p in enumerate(pieces)}
    merges = [tuple(m.split(" ")) for m in _merges(trainer_tok)]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens(specials)
    tok.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", 2)])
    return tok


def _merges(tok) -> list[str]:
    import json

    merges = json.loads(tok.to_str())["model"]["merges"]
    return [" ".join(m) if isinstance(m, list) else m for m in merges]


def random_model(variant: str):
    """The transformers model of a variant, random (seeded), in eval mode, eager attention; its norm weights
    moved away from where they start (Gemma's offsets from 0, OLMo-2's scales from 1)."""
    config_name, model_name, extra = VARIANTS[variant]
    hc = getattr(transformers, config_name)(**{**BASE, **extra})
    hc._attn_implementation = "eager"
    torch.manual_seed(len(variant))
    model = getattr(transformers, model_name)(hc).eval()
    g = torch.Generator().manual_seed(2)
    start = 0.0 if variant.startswith("gemma") else 1.0
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(start + 0.3 * torch.randn(p.shape, generator=g))
    return model


def tokenizer_for(variant: str):
    return piece_tokenizer() if variant.startswith("gemma") else byte_level_tokenizer()


def save_dir(model, d, tokenizer, **kw):
    model.save_pretrained(d, **kw)
    tokenizer.save(str(d / "tokenizer.json"))
    return d


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    """family(variant) -> (directory, transformers model, qkv model, qkv tokenizer): each built once."""
    made = {}

    def get(variant):
        if variant not in made:
            hf = random_model(variant)
            d = save_dir(hf, tmp_path_factory.mktemp(variant), tokenizer_for(variant))
            model, tok = load_pretrained(d)
            made[variant] = (d, hf, model, tok)
        return made[variant]

    return get
