"""SentencePiece's pieces as tokenizer.json holds them (Llama 2, Mistral): qkv reads them as
transformers' own tokenizer does, and shows each token as the text it stands for."""

from __future__ import annotations

import json
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors  # noqa: E402
from tokenizers.implementations import SentencePieceBPETokenizer  # noqa: E402

from qkv.core.hub.pretrained import load_pretrained  # noqa: E402
from qkv.core.text.tokenizers.pieces import PieceTokenizer  # noqa: E402

TEXT = "the cat sat on the mat. the dog ate an apple.\n" * 40
SENTENCES = ["the cat sat", "an apple, the mat", "the dog ate 苹果", "  two spaces"]


def _llama2_like() -> Tokenizer:
    """A BPE over pieces with byte fallback, shaped as transformers converts Llama 2's tokenizer:
    a ▁ put in front and for every space, <0x..> pieces for the bytes of characters it lacks, and
    <s> in front of every text (the post-processor)."""
    trained = SentencePieceBPETokenizer()
    trained.train_from_iterator([TEXT], vocab_size=200, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    vocab = {**{f"<0x{b:02X}>": 3 + b for b in range(256)}}
    base = json.loads(trained._tokenizer.to_str())["model"]
    for piece in base["vocab"]:
        if piece not in ("<unk>", "<s>", "</s>") and piece not in vocab:
            vocab[piece] = len(vocab) + 3
    vocab.update({"<unk>": 0, "<s>": 1, "</s>": 2})
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in base["merges"]]
    merges = [m for m in merges if m[0] in vocab and m[1] in vocab and m[0] + m[1] in vocab]
    hf = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    hf.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    hf.pre_tokenizer = None
    hf.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    hf.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    hf.add_special_tokens(["<unk>", "<s>", "</s>"])
    return hf


@pytest.fixture(scope="module")
def pieces() -> Tokenizer:
    return _llama2_like()


def test_pieces_decode_as_transformers_does(pieces):
    ours = PieceTokenizer(pieces)
    theirs = transformers.PreTrainedTokenizerFast(tokenizer_object=pieces)
    for text in SENTENCES:
        ids = ours.encode(text)
        assert ids == theirs(text)["input_ids"]  # <s> in front, as transformers adds it
        assert ids[0] == 1 and ours.display(ids[0]) == "<s>"
        body = ids[1:]
        assert ours.decode(body) == theirs.decode(body), text  # the leading ▁ taken off, bytes fused
        assert ours.decode(body) == text  # what was typed comes back


def test_a_character_the_pieces_lack_is_its_utf8_bytes(pieces):
    ours = PieceTokenizer(pieces)
    ids = ours.encode("苹")[1:]  # 苹 is not a piece: byte fallback writes its three UTF-8 bytes
    shown = [ours.display(i) for i in ids if ours.token_bytes(i) != b" "]
    assert shown[-3:] == ["<e8>", "<8b>", "<b9>"] and "苹".encode() == bytes.fromhex("e88bb9")
    assert ours.decode(ids) == "苹"
    assert ours.display(ours.encode("the")[1]) == "␣the"  # ▁ is the space it stands for, shown ␣


def test_a_byte_level_vocabulary_is_not_taken_for_pieces():
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    with pytest.raises(ValueError, match="not a SentencePiece vocabulary"):
        PieceTokenizer(hf)


def test_a_llama_directory_with_pieces_gives_transformers_logits(pieces, tmp_path):
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=pieces.get_vocab_size(),
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    hf_model = transformers.LlamaForCausalLM(cfg).eval()
    hf_model.save_pretrained(tmp_path)
    pieces.save(str(tmp_path / "tokenizer.json"))
    model, tokenizer = load_pretrained(tmp_path)
    assert isinstance(tokenizer, PieceTokenizer) and model.stop_ids == (2,)
    ids = tokenizer.encode("the cat sat")
    with torch.no_grad():
        want = hf_model(torch.tensor([ids])).logits
    torch.testing.assert_close(model(torch.tensor([ids])), want, atol=1e-5, rtol=0)


def test_the_analyses_look_past_the_bos_the_tokenizer_adds(pieces):
    """<s> is a special token: a word is found in a sentence (its tokens alone carry no <s>), and the
    query shown by default is the last real token, as for BERT's [CLS] and [SEP]."""
    from qkv.analysis.explain import default_token
    from qkv.analysis.word_similarity import locate

    ours = PieceTokenizer(pieces)
    assert ours.special == {0, 1, 2}
    a, b = "the cat sat on the mat", "the dog ate the mat"
    (_, ids_a), (_, ids_b), (at_a, at_b) = locate(ours, a, b, "mat", 64)  # "mat" alone is [<s>, mat]
    assert ours.display(ids_a[at_a]) == ours.display(ids_b[at_b]) == "␣mat"
    assert default_token(ours, ids_a + [2]) == len(ids_a) - 1  # a closing </s> is passed over too
