"""Hugging Face directories (save_pretrained layout) of the GPT-2 and BERT families load as qkv models.

No hub here: the directories are saved from random-weight transformers models, with tokenizers
trained on a small text, exactly the files a hub download would give.
"""

import json
import os
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from qkv.core.hub.pretrained import is_pretrained_ref, load_pretrained
from qkv.core.see.invariants import check
from qkv.core.train.checkpoint import load

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TEXT = "the cat sat on the mat. the dog ate an apple, and 我 吃了 苹果 。\n" * 20


def _bpe_tokenizer_json(path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator([TEXT], trainer=trainer)
    tok.save(str(path / "tokenizer.json"))
    return tok


def randomise_norms(hf):
    """LayerNorm weights and biases away from 1 and 0 (and all biases nonzero), so a swapped or
    missing mapping of any of them changes the outputs."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in hf.named_parameters():
            if p.dim() == 1:
                p.copy_(
                    torch.randn(p.shape, generator=g) * 0.3
                    + (1.0 if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight", "LayerNorm.weight")) else 0.0)
                )


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    from transformers import GPT2Config, GPT2LMHeadModel

    d = tmp_path_factory.mktemp("gpt2")
    tok = _bpe_tokenizer_json(d)
    torch.manual_seed(0)
    hf = GPT2LMHeadModel(GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=32, n_embd=32, n_layer=2, n_head=4))
    randomise_norms(hf)
    hf.save_pretrained(d, safe_serialization=True)
    return d, hf.eval()


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel

    d = tmp_path_factory.mktemp("bert")
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(
        [TEXT], trainers.WordPieceTrainer(vocab_size=120, special_tokens=specials, show_progress=False)
    )
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    tok.save(str(d / "tokenizer.json"))
    torch.manual_seed(0)
    hf = BertModel(
        BertConfig(
            vocab_size=tok.get_vocab_size(),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=40,
        ),
        add_pooling_layer=True,
    )
    randomise_norms(hf)
    hf.save_pretrained(d, safe_serialization=True)
    return d, hf.eval()


def test_gpt2_directory_gives_the_same_logits(gpt2_dir):
    d, hf = gpt2_dir
    assert is_pretrained_ref(d)
    model, tok = load(d)
    ids = tok.encode("the cat ate an apple 我 吃了")
    assert len(ids) > 3
    with torch.no_grad():
        theirs = hf(torch.tensor([ids])).logits
        ours, tr = model.run_with_trace(torch.tensor([ids]))
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=0)
    assert check(tr).passed
    assert model.loaded_from["architecture"] == "gpt2"
    assert tok.decode(ids) == "the cat ate an apple 我 吃了"


def test_bert_directory_gives_the_same_hidden_states(bert_dir):
    d, hf = bert_dir
    model, tok = load(d)
    ids = tok.encode("the dog sat on an apple")
    assert tok.display(ids[0]) == "[CLS]" and tok.display(ids[-1]) == "[SEP]"
    with torch.no_grad():
        theirs = hf(torch.tensor([ids]), output_hidden_states=True).hidden_states
        _, tr = model.run_with_trace(torch.tensor([ids]))
    for layer in range(2):
        torch.testing.assert_close(tr["resid_post", layer], theirs[layer + 1], atol=1e-5, rtol=0)
    assert check(tr).passed
    types = torch.tensor([[0] * 3 + [1] * (len(ids) - 3)])  # sentence A, then B
    with torch.no_grad():
        theirs = hf(torch.tensor([ids]), token_type_ids=types).last_hidden_state
        torch.testing.assert_close(model(torch.tensor([ids]), token_type_ids=types), theirs, atol=1e-5, rtol=0)


def test_bert_directory_with_vocab_txt_only(bert_dir, tmp_path):
    from tokenizers import Tokenizer

    d, _ = bert_dir
    for name in ("config.json", "model.safetensors"):
        shutil.copy(d / name, tmp_path / name)
    vocab = Tokenizer.from_file(str(d / "tokenizer.json")).get_vocab()  # token -> id
    (tmp_path / "vocab.txt").write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)), encoding="utf-8")
    _, from_vocab = load_pretrained(tmp_path)
    _, from_json = load_pretrained(d)
    assert from_vocab.encode("the cat sat") == from_json.encode("the cat sat")


def _copy(d, tmp_path):
    out = tmp_path / "model"
    shutil.copytree(d, out)
    return out


def test_unsupported_architecture_is_named(gpt2_dir, tmp_path):
    d = _copy(gpt2_dir[0], tmp_path)
    config = json.loads((d / "config.json").read_text())
    config.update(model_type="gemma", architectures=["GemmaForCausalLM"])
    (d / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"model_type 'gemma' \(GemmaForCausalLM\) is not supported; qkv reads GPT-2"):
        load(d)


def test_a_field_a_family_needs_and_the_config_lacks_is_named_missing(gpt2_dir, tmp_path):
    d = _copy(gpt2_dir[0], tmp_path)
    config = json.loads((d / "config.json").read_text())
    config.update(model_type="llama", architectures=["LlamaForCausalLM"])  # GPT-2's fields: no hidden_size
    (d / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"config\.json: field 'hidden_size' is missing \(it must be an integer"):
        load(d)


def test_missing_tensor_is_named(bert_dir, tmp_path):
    d = _copy(bert_dir[0], tmp_path)
    tensors = load_file(str(d / "model.safetensors"))
    del tensors["encoder.layer.1.attention.self.key.weight"]
    save_file(tensors, str(d / "model.safetensors"))
    with pytest.raises(ValueError, match=r"tensor encoder\.layer\.1\.attention\.self\.key\.weight is missing"):
        load(d)


def test_mismatched_tensor_is_named(gpt2_dir, tmp_path):
    d = _copy(gpt2_dir[0], tmp_path)
    tensors = load_file(str(d / "model.safetensors"))
    key = next(k for k in tensors if k.endswith("h.0.mlp.c_fc.weight"))
    tensors[key] = tensors[key][:, :10].contiguous()
    save_file(tensors, str(d / "model.safetensors"))
    with pytest.raises(ValueError, match=r"tensor for blocks\.0\.mlp\.fc_in\.weight has shape \(10, 32\)"):
        load(d)


def test_unknown_tensor_is_named(gpt2_dir, tmp_path):
    d = _copy(gpt2_dir[0], tmp_path)
    tensors = load_file(str(d / "model.safetensors"))
    tensors["transformer.h.0.adapter.weight"] = torch.zeros(2, 2)
    save_file(tensors, str(d / "model.safetensors"))
    with pytest.raises(ValueError, match=r"tensor transformer\.h\.0\.adapter\.weight is not part of the architecture"):
        load(d)


def test_directory_without_weights_or_tokenizer(gpt2_dir, tmp_path):
    d = _copy(gpt2_dir[0], tmp_path)
    (d / "tokenizer.json").unlink()
    with pytest.raises(ValueError, match="no tokenizer.json, nor vocab.json and merges.txt"):
        load(d)
    (d / "model.safetensors").unlink()
    with pytest.raises(ValueError, match="holds no .safetensors weights"):
        load(d)


def test_bad_config_json(gpt2_dir, tmp_path):
    d = _copy(gpt2_dir[0], tmp_path)
    (d / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="could not be read as JSON"):
        load_pretrained(d)


def test_hub_name_offline_is_one_line_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError, match="could not fetch 'gpt2' from the Hugging Face hub") as err:
        load("hf:gpt2")
    assert "\n" not in str(err.value)


def test_missing_path_hints_at_hub_names():
    with pytest.raises(ValueError, match="does not exist"):
        load("no/such/run")


@pytest.mark.slow
@pytest.mark.subprocess
def test_cli_trace_and_check_on_an_hf_directory(gpt2_dir, tmp_path):
    import subprocess
    import sys

    d, _ = gpt2_dir
    out = subprocess.run(
        [sys.executable, "-m", "qkv", "trace", "the cat", "--ckpt", str(d), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "checks pass" in out.stdout + out.stderr


def test_broken_tokenizer_file_is_named(bert_dir, tmp_path):
    d = _copy(bert_dir[0], tmp_path)
    (d / "tokenizer.json").write_text('{"version": "1.0", oops')
    with pytest.raises(ValueError, match=r"tokenizer\.json is not a valid tokenizer file") as err:
        load(d)
    assert "\n" not in str(err.value)


def test_missing_lm_head_of_an_untied_gpt2_is_named(tmp_path):
    from transformers import GPT2Config, GPT2LMHeadModel

    hf = GPT2LMHeadModel(
        GPT2Config(vocab_size=300, n_positions=8, n_embd=16, n_layer=1, n_head=2, tie_word_embeddings=False)
    )
    hf.save_pretrained(tmp_path, safe_serialization=True)
    _bpe_tokenizer_json(tmp_path)
    tensors = load_file(str(tmp_path / "model.safetensors"))
    del tensors["lm_head.weight"]
    save_file(tensors, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match=r"tensor lm_head\.weight is missing"):
        load(tmp_path)


def test_a_run_directory_named_minilm_stays_yours(runs, tmp_path, monkeypatch):
    shutil.copytree(runs["base"], tmp_path / "minilm")
    monkeypatch.chdir(tmp_path)
    assert not is_pretrained_ref("minilm")
    model, _ = load("minilm")
    assert model.cfg.arch == "gpt" and model.loaded_from is None


def test_a_gpt_refuses_another_architecture():
    from qkv.core.model.gpt import GPT
    from qkv.core.spec.config import ModelConfig

    with pytest.raises(ValueError, match="a GPT needs arch='gpt'"):
        GPT(ModelConfig(arch="bert", n_token_types=2))


def test_hub_name_loads_what_the_hub_gives(gpt2_dir, monkeypatch):
    """hf:NAME fetches the files (huggingface_hub, stubbed here: no network) and loads them as a directory."""
    import huggingface_hub

    asked = {}

    def fake_download(name, allow_patterns):
        asked.update(name=name, patterns=allow_patterns)
        return str(gpt2_dir[0])

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_download)
    model, tok = load("hf:someone/tiny-gpt2")
    assert asked["name"] == "someone/tiny-gpt2" and "*.safetensors" in asked["patterns"]
    assert model.loaded_from["title"] == "someone/tiny-gpt2" and model.loaded_from["architecture"] == "gpt2"
    ids = tok.encode("the cat")
    with torch.no_grad():
        torch.testing.assert_close(
            model(torch.tensor([ids])), gpt2_dir[1](torch.tensor([ids])).logits, atol=1e-5, rtol=0
        )
