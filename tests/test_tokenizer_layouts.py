"""Tokenizers as real LLMs lay them out (tokenizer_layouts.py): qkv's ids are transformers' ids on a
text of Chinese, English, code, digits, emoji and chat special tokens, decode gives the text back,
a character the vocabulary cannot spell is named (never silently dropped), a word typed in a form is
the token the model reads in running text, and a layout qkv cannot read is refused in one line."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")
from tokenizer_layouts import LAYOUTS, TEXT, build  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402

from qkv.analysis.inputs import running_ids, token_id  # noqa: E402
from qkv.core.io.refusal import Refusal  # noqa: E402
from qkv.core.see.indices import TextError  # noqa: E402
from qkv.core.text.tokenizers.bpe import BPETokenizer  # noqa: E402
from qkv.core.text.tokenizers.layout import from_hf, layout_of  # noqa: E402
from qkv.core.text.tokenizers.pieces import PieceTokenizer  # noqa: E402
from qkv.core.text.tokenizers.unknown import unknown_pieces  # noqa: E402
from qkv.core.text.tokenizers.wordpiece import WordPieceTokenizer  # noqa: E402
from qkv.presentation.i18n import say_error  # noqa: E402

KINDS = {"bert": WordPieceTokenizer, **{n: PieceTokenizer for n in ("gemma", "llama2", "nobytes", "unigram")}}


def _pair(name: str):
    hf = build(name)
    return from_hf(hf), transformers.PreTrainedTokenizerFast(tokenizer_object=hf)


@pytest.mark.parametrize("name", LAYOUTS)
def test_ids_are_transformers_ids_on_a_text_of_every_kind(name):
    ours, theirs = _pair(name)
    assert type(ours) is KINDS.get(name, BPETokenizer)
    ids = ours.encode(TEXT)
    assert ids == theirs.encode(TEXT), name
    assert ids == theirs(TEXT)["input_ids"]
    if name != "bert":
        assert ours.unspellable(TEXT) == []  # every character of TEXT is in the training corpus (or its bytes)
        assert theirs.convert_tokens_to_ids("<|im_start|>") in ids  # matched whole, as transformers matches it


@pytest.mark.parametrize("name", [n for n in LAYOUTS if n != "bert"])
def test_decode_gives_the_text_back(name):
    ours, theirs = _pair(name)
    ids = ours.encode(TEXT)
    body = ours.hf.encode(TEXT, add_special_tokens=False).ids  # without what the post-processor adds (BOS)
    assert ids[-len(body) :] == body
    assert ours.decode(body) == TEXT, name
    if not (ours.prefix_space or ours.space_after_added):  # transformers keeps the space the layout put in
        assert ours.decode(ids) == theirs.decode(ids), name
    streamed = ours.decode(body[:7]) + ours.decode(body[7:], prev=body[6])
    assert streamed == TEXT  # a continuation decoded after its prompt reads on


@pytest.mark.parametrize("name", ["prefix", "llama2"])
def test_the_space_a_layout_puts_in_front_is_taken_off_again(name):
    ours, theirs = _pair(name)
    assert ours.prefix_space and ours.space_after_added
    for text in ("Mary said hello", "John<|im_end|>Mary", "  two spaces"):
        ids = ours.hf.encode(text, add_special_tokens=False).ids
        if text.startswith(" ") and name == "prefix":  # ByteLevel puts no space before one: " x" reads as "x"
            assert ours.decode(ids) == text[1:]
        else:
            assert ours.decode(ids) == text, text
        if name == "prefix":
            assert theirs.decode(ids).startswith(" ")  # transformers keeps the space the layout put in


def test_gemma_puts_no_space_in_front_and_keeps_the_one_typed():
    ours, _ = _pair("gemma")
    assert not ours.prefix_space and not ours.space_after_added
    ids = ours.encode(" Mary")[1:]  # after <bos>
    assert ours.display(ids[0]).startswith("␣") and ours.decode(ids) == " Mary"


def test_added_tokens_whatever_their_characters_are_read_as_written():
    hf = build("smollm2")
    hf.add_special_tokens(["<｜end▁of▁sentence｜>"])
    ours, theirs = from_hf(hf), transformers.PreTrainedTokenizerFast(tokenizer_object=hf)
    i = hf.token_to_id("<｜end▁of▁sentence｜>")
    assert ours.display(i) == "<｜end▁of▁sentence｜>" and i in ours.special
    text = "Mary<｜end▁of▁sentence｜>John"
    assert ours.encode(text) == theirs.encode(text) and ours.decode(ours.encode(text)) == text


# ------------------------------------------------------------------ what a vocabulary cannot spell


def test_a_byte_the_vocabulary_lacks_is_named_where_transformers_drops_it():
    ours, theirs = _pair("smollm2")
    text = "Mary\x07 said Ω."  # the bell and Ω's first byte (0xCE) are not in the corpus
    assert {0x07, 0xCE} <= set(ours.missing_bytes) and "ß".encode()[0] not in ours.missing_bytes
    assert theirs.decode(theirs.encode(text)) != text  # transformers leaves them out, silently
    assert ours.unspellable(text) == ["\x07", "Ω"]
    assert ours.unspellable("ß <|im_start|>") == []  # ß from bytes it has; an added token read whole
    with pytest.raises(Refusal) as err:
        ours.encode_exact(text)
    assert err.value.key == "tokenizer.unspellable"
    line = say_error(err.value, "en")
    assert "'\\x07' (U+0007)" in line and "'Ω' (U+03A9)" in line and "\n" not in line
    assert "拼不出" in say_error(err.value, "zh")
    assert unknown_pieces(ours, text) == [
        {"text": c, "pieces": [], "how": "unspelled", "nearest": []} for c in ("\x07", "Ω")
    ]


def test_byte_fallback_spells_everything_and_without_it_the_unknown_token_is_named():
    gemma, _ = _pair("gemma")
    assert gemma.unspellable("Ω ß \x07 🦀") == []  # its <0x..> pieces
    ids = gemma.encode("Ω 🦀")
    assert gemma.decode(ids[1:]) == "Ω 🦀"
    nobytes, theirs = _pair("nobytes")
    assert nobytes.unspellable("Mary Ω 🦀") == ["Ω", "🦀"]
    assert theirs.convert_tokens_to_ids("<unk>") in theirs.encode("Ω")  # transformers: <unk>, no word said


def test_wordpiece_names_what_it_reads_as_unk():
    bert, _ = _pair("bert")
    assert bert.unspellable("Mary Ω") == ["Ω"]
    assert bert.unspellable("MARY said") == []  # lower-cased, not lost


# ------------------------------------------------------------------ a word typed in a form


@pytest.mark.parametrize("name", ["smollm2", "qwen2", "llama3", "gemma", "llama2"])
def test_a_typed_word_is_the_token_the_model_reads_in_running_text(name):
    ours, _ = _pair(name)
    sentence = [i for i in ours.encode("When Mary and John went") if i not in ours.special]
    mary = token_id(ours, "Mary")
    assert ours.display(mary) == "␣Mary" and mary in sentence  # " Mary", "▁Mary": as in the sentence
    assert running_ids(ours, " Mary") == [mary]  # typed with its space: the same token
    assert running_ids(ours, "你好") == [i for i in ours.encode("你好") if i not in ours.special]  # no space before


def test_a_typed_word_with_characters_the_vocabulary_lacks_is_refused():
    ours, _ = _pair("smollm2")
    with pytest.raises(TextError) as err:
        token_id(ours, "Ω")
    assert err.value.key == "tokenizer.unspellable"


# ------------------------------------------------------------------ the layouts qkv reads, and the others


def test_layouts_are_told_apart_and_the_unreadable_refused():
    assert [layout_of(__import__("json").loads(build(n).to_str())) for n in ("qwen2", "gemma", "bert")] == [
        "bpe",
        "pieces",
        "wordpiece",
    ]
    words = Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    with pytest.raises(Refusal) as err:
        from_hf(words)
    assert err.value.key == "tokenizer.model_unsupported" and "WordLevel" in say_error(err.value, "en")
    spaceless = Tokenizer(models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]))
    spaceless.pre_tokenizer = pre_tokenizers.Whitespace()  # throws the spaces away: no token says where they were
    with pytest.raises(Refusal) as err:
        from_hf(spaceless)
    assert err.value.key == "tokenizer.layout_unknown"


def test_a_llama_directory_reads_each_layout_and_refuses_the_others_naming_the_file(tmp_path):
    from qkv.core.hub.adapters.llama import read_tokenizer

    for name in ("llama3", "gemma"):
        build(name).save(str(tmp_path / "tokenizer.json"))
        assert type(read_tokenizer(tmp_path, None)) is KINDS.get(name, BPETokenizer)
    Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]")).save(str(tmp_path / "tokenizer.json"))
    with pytest.raises(Refusal) as err:
        read_tokenizer(tmp_path, None)
    line = say_error(err.value, "en")
    assert str(tmp_path / "tokenizer.json") in line and "WordLevel" in line and "\n" not in line


@pytest.mark.parametrize("name", LAYOUTS)
def test_saved_with_a_checkpoint_it_reads_back_the_same(name):
    from qkv.core.text.tokenizers import tokenizer_from_dict

    ours = from_hf(build(name))
    back = tokenizer_from_dict(ours.to_dict())
    assert type(back) is type(ours) and back.encode(TEXT) == ours.encode(TEXT)
    with pytest.raises(ValueError, match="field 'kind' says"):
        tokenizer_from_dict({**ours.to_dict(), "kind": "wordpiece" if name != "bert" else "bpe"})


# ------------------------------------------------------------------ where a text is read: the CLI and the page


def test_the_cli_warns_of_what_the_vocabulary_cannot_spell(capsys):
    from qkv.apps.cli.reading import say_unread

    ours, _ = _pair("smollm2")
    say_unread(ours, "Mary said Ω", "zh")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'Ω' (U+03A9)" in err and "警告" in err
    say_unread(ours, "Mary said hello", "en")
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("llama2", {"tokenizer_class": "LlamaTokenizer"}),  # ▁ at the start only (legacy false by default)
        ("llama2", {"tokenizer_class": "LlamaTokenizerFast", "legacy": True}),  # ▁ after each added token too
        ("llama2", {"tokenizer_class": "LlamaTokenizer", "add_prefix_space": False}),
        ("gemma", {"tokenizer_class": "GemmaTokenizer", "bos_token": "<bos>"}),
        ("qwen2", {"tokenizer_class": "Qwen2Tokenizer", "eos_token": "<|im_end|>"}),
        ("llama3", {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|begin_of_text|>"}),
        ("smollm2", {"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|im_start|>"}),
        ("smollm2", {"tokenizer_class": "GPT2Tokenizer", "add_prefix_space": True}),  # a space in front
        ("llama3", {"tokenizer_class": "GPT2Tokenizer"}),  # GPT-2's regex, not the file's
        ("qwen2", {"tokenizer_class": "Qwen2Tokenizer", "add_prefix_space": True}),
        ("llama3", {"tokenizer_class": "PreTrainedTokenizerFast", "add_prefix_space": True}),  # the file as written
        ("smollm2", {"add_prefix_space": True}),
    ],
)
def test_a_directory_reads_as_transformers_autotokenizer_reads_it(name, config, tmp_path):
    """transformers 5 rebuilds a LlamaTokenizer's or GPT2Tokenizer's pipeline from its class
    (tokenizer_config.json), not from tokenizer.json: the ids differ unless qkv does the same (hf_config.py)."""
    import json

    from qkv.core.hub.adapters.llama import read_tokenizer

    build(name).save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    ours = read_tokenizer(tmp_path, None)
    for text in (TEXT, "Mary said hello", "Mary<|im_end|>John", "  two spaces"):
        assert ours.encode(text) == theirs.encode(text), text
        lossy = name == "qwen2" and config.get("add_prefix_space")  # a space before each piece of its Split: " ,"
        if not text.startswith(" ") and not lossy:  # Metaspace puts no ▁ before one: " two" reads as "two" does
            assert ours.decode(ours.hf.encode(text, add_special_tokens=False).ids) == text


@pytest.fixture(scope="module")
def tiny_lm():
    """A random 1-layer GPT over the SmolLM2-like vocabulary (the ids are all that matter here)."""
    import torch

    from qkv.core.model import make_model
    from qkv.core.spec.config import ModelConfig

    ours, _ = _pair("smollm2")
    torch.manual_seed(0)
    cfg = ModelConfig(d_vocab=ours.vocab_size, n_ctx=64, d_model=16, n_heads=2, n_layers=1)
    return make_model(cfg).eval(), ours


@pytest.mark.slow
def test_the_page_names_what_it_cannot_spell_and_shows_the_space(tiny_lm):
    from qkv.apps.web.view import view

    model, ours = tiny_lm
    doc = view(model, ours, "Mary said Ω")
    assert [u["text"] for u in doc["unknown"]] == ["Ω"] and doc["unknown"][0]["how"] == "unspelled"
    assert "␣Mary" not in doc["tokens"] and "␣said" in doc["tokens"]  # a token's leading space, visible


def test_the_forms_read_a_typed_word_as_in_running_text(tiny_lm):
    from qkv.analysis.attribution import logit_attribution
    from qkv.analysis.patch import patch_text

    model, ours = tiny_lm
    mary = ours.encode(" Mary")
    assert len(mary) == 1
    r = patch_text(model, ours, "When Mary and John went", "When John and Mary went", "Mary", "John", site="z")
    doc = r.to_json(ours)
    assert doc["answer_id"] == mary[0] and doc["answer"] == "␣Mary"
    from qkv.presentation.patching_table import render

    assert f"␣Mary (id {mary[0]})" in render(doc, "en") and f"␣Mary（id {mary[0]}）" in render(doc, "zh")
    ids = ours.encode("When Mary and John went to the store, John gave a drink to")
    assert logit_attribution(model, ids, token="Mary", tokenizer=ours).token == mary[0]


def test_the_vocabulary_browser_finds_a_token_by_its_leading_space():
    from qkv.analysis.vocab import vocab

    ours, _ = _pair("smollm2")
    shown = [row["token"] for row in vocab(ours, query=" mar")["tokens"]]
    assert "␣Mary" in shown and all(s.casefold().startswith("␣mar") for s in shown)


def test_an_nfc_normalizer_gives_back_the_composed_text():
    """Qwen2's NFC: "e" + U+0301 reads as "é" (the vocabulary spells both); decode gives what was read."""
    import unicodedata

    ours, theirs = _pair("qwen2")
    text = "cafe\u0301 Mary"
    ids = ours.encode(text)
    assert ids == theirs.encode(text) and ids == ours.encode("café Mary")
    assert ours.decode(ids) == unicodedata.normalize("NFC", text) and ours.unspellable(text) == []
