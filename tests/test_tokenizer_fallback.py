"""The word tokenizer of the bundled model: no whitespace tokens, ASCII case folded, and a fallback
(known words, the most probable split, then characters, then UTF-8 bytes) so that any text is read; the
spelled training ids that teach the fallback; and the names of what is unknown."""

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qkv.core.text.tokenizers import (
    UnknownTokenError,
    WordTokenizer,
    load_tokenizer,
    tokenizer_from_dict,
    train_tokenizer,
)
from qkv.core.text.tokenizers.nearest import edit_distance, nearest_words
from qkv.core.text.tokenizers.spelling import Spelled
from qkv.core.text.tokenizers.unknown import unknown_pieces

TEXT = (
    "我 吃了 苹果 ， 味道 很 甜 。\n我 投资了 苹果 ， 股价 上涨了 。\ni ate apple , it tasted sweet .\n好吃 的 梨 。\n"
)


def learner(text: str = TEXT) -> WordTokenizer:
    return train_tokenizer("word", text, segment="none", whitespace=False, fallback=True, fold_case=True)


def plain(text: str = TEXT) -> WordTokenizer:
    return train_tokenizer("word", text, segment="none", whitespace=False)


def ascii_lower(s: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def streamed(tok, ids) -> str:
    return b"".join(tok.separator(p, i) + tok.token_bytes(i) for p, i in zip([None, *ids], ids)).decode("utf-8")


def test_vocabulary_is_words_then_characters_then_bytes():
    tok, words = learner(), plain()
    assert tok.tokens[: tok.n_words] == words.tokens  # the same words, in the same order, first
    chars = tok.tokens[tok.n_words : tok.byte_base]
    assert chars == sorted(set("".join(TEXT.split())) - set(words.tokens))  # every other character of the text
    assert tok.vocab_size == tok.n_words + len(chars) + 256
    for b in (0x00, 0x41, 0xE5, 0xFF):
        i = tok.byte_base + b
        assert tok.token_bytes(i) == bytes([b]) and tok.display(i) == f"<0x{b:02X}>" and tok.token_kind(i) == "byte"
    assert tok.token_kind(0) == "word" and tok.token_kind(tok.n_words) == "char"
    assert not any(tok.tokens[i].isspace() and tok.tokens[i] != "\n" for i in range(tok.byte_base))


def test_unknown_runs_are_cut_into_known_words():
    tok = learner()
    assert tok.encode("我吃了苹果") == tok.encode("我 吃了 苹果")  # 苹果 stays one token
    assert tok.encode("我吃了苹果，味道很好") == tok.encode("我 吃了 苹果 ， 味道 很 好")  # 好: a character
    assert tok.token_kind(tok.encode("好")[0]) == "char"
    assert tok.encode("I ATE Apple") == tok.encode("i ate apple")


def test_characters_the_text_lacks_become_their_utf8_bytes():
    tok = learner()
    for ch in ("猫", "é", "🎉", "7"):
        assert tok.encode(ch) == [tok.byte_base + b for b in ch.encode("utf-8")]
        assert tok.decode(tok.encode(ch)) == ch
    ids = tok.encode("苹果猫")
    assert ids[0] == tok.encode("苹果")[0] and len(ids) == 1 + 3


_any = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
_mixed = st.text(alphabet="我吃了苹果很好猫ABCabc éß🎉7，。,.!\n\t ", max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_any, _mixed))
def test_any_text_is_read_and_decodes_to_its_characters(s):
    tok = learner()
    ids = tok.encode(s)
    once = tok.decode(ids)
    assert "".join(once.split()) == "".join(ascii_lower(s).split())  # only spacing may change
    assert streamed(tok, ids) == once
    assert tok.encode(once) == ids  # the corpus form reads as the same tokens


def test_corpus_text_round_trips_exactly():
    tok = learner()
    assert tok.decode(tok.encode(TEXT)) == TEXT
    assert all(tok.token_kind(i) == "word" for i in tok.encode(TEXT))


def test_saved_as_format_2_and_format_1_still_loads(tmp_path):
    tok = learner()
    tok.save(tmp_path / "t.json")
    d = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert d["version"] == 2 and d["fallback"] == "bytes" and d["fold_case"] is True
    back = load_tokenizer(tmp_path / "t.json")
    for s in ("我吃了苹果，味道很好 🎉", "I ate an apple", TEXT):
        assert back.encode(s) == tok.encode(s) and back.decode(back.encode(s)) == tok.decode(tok.encode(s))
    old = plain().to_dict()
    assert old["version"] == 1 and "fallback" not in old  # no new field: older qkv reads it too
    assert not tokenizer_from_dict(old).fallback


@pytest.mark.parametrize(
    "change, match",
    [
        ({"fallback": "maybe"}, "fallback"),
        ({"fold_case": "yes"}, "fold_case"),
        ({"chars": ["ab"]}, "chars"),
        ({"fallback": "none"}, "chars"),
        ({"version": 3}, "version"),
        ({"chars": ["我"]}, "chars"),
    ],
)
def test_bad_format_2_fields_are_refused(change, match):
    d = {**learner().to_dict(), **change}
    with pytest.raises(ValueError, match=match):
        tokenizer_from_dict(d)


@pytest.mark.parametrize("kind", ["char", "bpe"])
def test_fallback_and_case_folding_are_word_options(kind):
    for option in ("fallback", "fold_case"):
        with pytest.raises(ValueError, match=option):
            train_tokenizer(kind, "a b c", **{option: True})
        with pytest.raises(ValueError, match=option):
            train_tokenizer("word", "a b", **{option: "yes"})


def test_a_cut_vocabulary_still_reads_the_whole_text():
    tok = train_tokenizer("word", TEXT, segment="none", whitespace=False, fallback=True, vocab_size=5)
    assert tok.n_words == 5
    ids = tok.encode(TEXT)
    assert "".join(tok.decode(ids).split()) == "".join(TEXT.split())
    assert {tok.token_kind(i) for i in ids} == {"word", "char"}  # the words cut off are read as characters


def test_spelled_ids_spell_words_and_are_seeded():
    tok = learner()
    text = TEXT * 50
    assert Spelled(tok, 0.0, 0.0).encode(text) == tok.encode(text)
    a, b = Spelled(tok, seed=1).encode(text), Spelled(tok, seed=1).encode(text)
    assert a == b and a != Spelled(tok, seed=2).encode(text)
    for rates in ((0.3, 0.0), (0.3, 0.3), (1.0, 1.0)):
        sp = Spelled(tok, *rates)
        ids = sp.encode(text)
        assert "".join(tok.decode(ids).split()) == "".join(text.split())  # the same characters
        kinds = {tok.token_kind(i) for i in ids}
        assert ("char" in kinds) == (rates[1] < 1) and ("byte" in kinds) == (rates[1] > 0)
    every = Spelled(tok, 1.0, 0.0).encode(text)
    assert all(len(tok.tokens[i]) == 1 for i in every)  # every word spelled: single characters and line breaks
    assert Spelled(tok).to_dict() == tok.to_dict()
    with pytest.raises(ValueError, match="fallback"):
        Spelled(plain())
    with pytest.raises(ValueError, match="char_rate"):
        Spelled(tok, 1.5)


def test_unknown_pieces_name_what_is_not_a_word():
    tok = learner()
    assert unknown_pieces(tok, "我 吃了 苹果 ， 味道 很 甜 。") == []
    got = unknown_pieces(tok, "我吃了苹果，味道很好")
    assert [(u["text"], u["pieces"], u["how"]) for u in got] == [("好", ["好"], "chars")]
    assert got[0]["nearest"] == nearest_words(tok.tokens[: tok.n_words], "好") and "好吃" in got[0]["nearest"]
    got = unknown_pieces(tok, "苹果猫咪好 apples 🎉")
    assert [(u["text"], u["how"]) for u in got] == [
        ("猫咪", "bytes"),
        ("好", "chars"),
        ("apples", "chars"),
        ("🎉", "bytes"),
    ]
    assert got[2]["pieces"] == ["apple", "s"] and got[2]["nearest"][0] == "apple" and got[3]["nearest"] == []
    assert unknown_pieces(train_tokenizer("char", TEXT), "猫") == []


def test_without_fallback_the_error_names_only_what_no_word_covers():
    tok = plain()
    with pytest.raises(UnknownTokenError) as err:
        tok.encode("我吃了苹果，味道很好")
    message = str(err.value)
    assert "'好'" in message and "我吃了苹果" not in message and "好吃" in message and "\n" not in message
    with pytest.raises(UnknownTokenError, match=r"'我吃了苹果' \(known words once cut: 我 吃了 苹果\)"):
        tok.encode("我吃了苹果")
    with pytest.raises(UnknownTokenError, match=r"'I' \(nearest known words: i"):
        tok.encode("I ate apple")
    assert [u["how"] for u in unknown_pieces(tok, "很好")] == ["none"]


def _reference_distance(a: str, b: str) -> int:
    """The edit distance by its recursive definition, memoised."""

    @functools.cache
    def ref(i, j):
        if i == 0 or j == 0:
            return i + j
        return min(ref(i - 1, j) + 1, ref(i, j - 1) + 1, ref(i - 1, j - 1) + (a[i - 1] != b[j - 1]))

    return ref(len(a), len(b))


def test_edit_distance_and_nearest_words():
    for a, b in (("kitten", "sitting"), ("", "abc"), ("苹果", "苹果树"), ("flaw", "lawn")):
        assert edit_distance(a, b) == _reference_distance(a, b) == edit_distance(b, a)
    assert nearest_words(["apple", "cat", "applet", "pear"], "Apples") == ["apple", "applet", "pear", "cat"]
    assert nearest_words(["猫"], "🎉") == []


def test_the_view_document_lists_what_is_unknown():
    import torch

    from qkv.apps.web.view import view
    from qkv.core.model.gpt import GPT
    from qkv.core.see.indices import TextError
    from qkv.core.spec.config import ModelConfig

    tok = learner()
    torch.manual_seed(0)
    model = GPT(ModelConfig(d_vocab=tok.vocab_size, n_ctx=32, d_model=16, n_heads=2, n_layers=1)).eval()
    for text in ("我吃了苹果，味道很好", "I ate an apple 🎉", "我 投资了 苹果 ，"):
        doc = view(model, tok, text)
        assert doc["unknown"] == unknown_pieces(tok, text) and doc["ids"] == tok.encode(text)
        assert doc["text"] == tok.decode(tok.encode(text))  # shown as it is read
    assert view(model, tok, "I ate")["text"] == "i ate"
    assert view(model, tok, "我 投资了 苹果 ，")["unknown"] == []
    assert [u["text"] for u in view(model, tok, "我吃了苹果，味道很好")["unknown"]] == ["好"]
    with pytest.raises(TextError, match=r"^1 word is not in the tokenizer's vocabulary: '好' \(nearest known words: "):
        view(
            GPT(ModelConfig(d_vocab=plain().vocab_size, n_ctx=32, d_model=16, n_heads=2, n_layers=1)),
            plain(),
            "我吃了苹果，味道很好",
        )


def test_hugging_face_export_folds_case_and_refuses_the_fallback():
    from qkv.core.text.tokenizers.to_hf import to_hf_tokenizer

    with pytest.raises(ValueError, match="fallback") as err:
        to_hf_tokenizer(learner())
    assert "\n" not in str(err.value)
    folded = train_tokenizer("word", TEXT, segment="none", whitespace=False, fold_case=True)
    hf = to_hf_tokenizer(folded)
    for s in ("I ATE Apple , it tasted sweet .", "我 吃了 苹果 。\nI ate apple ."):
        assert hf.encode(s).ids == folded.encode(s) and hf.decode(folded.encode(s)) == folded.decode(folded.encode(s))
