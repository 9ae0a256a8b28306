"""Tests for qkv.tokenizers: exact round trips, saving, display and errors."""

import importlib.util
import json
import re
import sys

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from qkv.core.text.tokenizers import (
    BPETokenizer,
    CharTokenizer,
    UnknownTokenError,
    WordTokenizer,
    _readable,
    load_tokenizer,
    tokenizer_from_dict,
    train_tokenizer,
)

HAS_JIEBA = importlib.util.find_spec("jieba") is not None
needs_jieba = pytest.mark.skipif(not HAS_JIEBA, reason="jieba is not installed")

MIXED_TEXT = (
    "The quick brown fox jumps over the lazy dog.\n"
    "  Two leading spaces,\ttabs\tand\r\nWindows line ends.\n"
    "我爱北京天安门，天安门上太阳升。你好，世界！\n"
    "Emoji 🎉🚀 and music 𝄞, café and cafe\u0301.\n"
) * 5
CHINESE_TEXT = (
    "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。\n"
    "床前明月光，疑是地上霜。举头望明月，低头思故乡。\n"
    "白日依山尽，黄河入海流。欲穷千里目，更上一层楼。\n"
)
# Characters that appear when UTF-8 bytes of Chinese are wrongly read as Latin-1.
MOJIBAKE = set("äåæçèéÃÂ\ufffd")

BPE = train_tokenizer("bpe", MIXED_TEXT, vocab_size=320)

# Any text, plus text that is sure to contain newlines and non-BMP characters.
any_text = st.one_of(st.text(), st.text(alphabet=st.sampled_from(list("ab \n\r\t𝄞😀é\u0301你"))))
cjk_chars = st.one_of(
    st.sampled_from(list("我打你好北京天安门中国人民 \n，。")),
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
)
cjk_text = st.text(alphabet=cjk_chars, min_size=1)


def assert_roundtrip(tok, s):
    ids = tok.encode(s)
    assert tok.decode(ids) == s
    assert b"".join(tok.token_bytes(i) for i in ids).decode("utf-8") == s


@settings(max_examples=150, deadline=None)
@given(any_text.filter(bool))
@pytest.mark.slow
def test_char_roundtrip(s):
    tok = train_tokenizer("char", s)
    assert tok.vocab_size == len(set(s))
    assert len(tok.encode(s)) == len(s)  # one token per code point, even outside the BMP
    assert_roundtrip(tok, s)


@settings(max_examples=150, deadline=None)
@given(any_text.filter(bool))
def test_word_roundtrip_without_segmentation(s):
    tok = train_tokenizer("word", s, segment="none")
    assert_roundtrip(tok, s)


@needs_jieba
@settings(max_examples=60, deadline=None)
@given(cjk_text)
@pytest.mark.slow
def test_word_roundtrip_with_jieba(s):
    tok = train_tokenizer("word", s, segment="jieba")
    assert tok.to_dict()["segment"] == "jieba"
    assert_roundtrip(tok, s)


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_bpe_roundtrip_any_text(s):
    assert_roundtrip(BPE, s)
    # The library's own decoder agrees with our byte-based decode.
    assert BPE.hf.decode(BPE.encode(s)) == s


TRICKY = ["", " ", "  lead", "a  b\n\n c", "\r\n", "\t\t", "你好吗", "e\u0301", "🎉x", "\x00\xff"]


@pytest.mark.parametrize("s", TRICKY)
def test_bpe_roundtrip_tricky_strings(s):
    assert_roundtrip(BPE, s)


def test_bpe_vocabulary_starts_with_all_bytes():
    assert BPE.vocab_size == 320
    singles = {BPE.token_bytes(i) for i in range(BPE.vocab_size) if len(BPE.token_bytes(i)) == 1}
    assert singles == {bytes([b]) for b in range(256)}
    # Merges were learned: common text takes fewer tokens than bytes.
    assert len(BPE.encode("the quick brown fox")) < len("the quick brown fox")


def test_decode_accepts_tensors():
    ids = BPE.encode("hello 你好")
    assert BPE.decode(torch.tensor(ids)) == "hello 你好"
    assert BPE.decode(iter(ids)) == "hello 你好"


def test_bad_id_is_a_clear_error():
    tok = train_tokenizer("char", "ab")
    with pytest.raises(ValueError, match="token id 5 is out of range"):
        tok.decode([5])


@pytest.mark.parametrize("kind", ["char", "word", "bpe"])
def test_save_load_gives_same_encoding(kind, tmp_path):
    tok = train_tokenizer(kind, MIXED_TEXT, vocab_size=300 if kind == "bpe" else None, segment="none")
    path = tmp_path / f"{kind}.json"
    tok.save(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["kind"] == kind and saved["version"] == 1
    assert "我" in path.read_text(encoding="utf-8") or kind == "bpe"  # ensure_ascii=False
    loaded = load_tokenizer(path)
    assert type(loaded) is type(tok)
    assert loaded.vocab_size == tok.vocab_size
    assert loaded.encode(MIXED_TEXT) == tok.encode(MIXED_TEXT)
    ids = tok.encode(MIXED_TEXT)
    assert [loaded.display(i) for i in ids] == [tok.display(i) for i in ids]


@needs_jieba
def test_save_load_jieba_word_tokenizer(tmp_path):
    tok = train_tokenizer("word", CHINESE_TEXT)  # "auto" picks jieba for Chinese text
    assert tok.use_jieba
    tok.save(tmp_path / "w.json")
    loaded = load_tokenizer(tmp_path / "w.json")
    assert loaded.use_jieba
    assert loaded.encode(CHINESE_TEXT) == tok.encode(CHINESE_TEXT)


def test_auto_segment_without_chinese_does_not_use_jieba():
    assert train_tokenizer("word", "hello world").to_dict()["segment"] == "none"


def test_loading_jieba_tokenizer_without_jieba(monkeypatch):
    monkeypatch.setitem(sys.modules, "jieba", None)  # makes `import jieba` fail
    d = {"kind": "word", "version": 1, "segment": "jieba", "words": ["你好"]}
    with pytest.raises(ValueError, match="needs jieba: pip install jieba"):
        tokenizer_from_dict(d)


def test_word_tokens_without_segmentation():
    text = "我 打 你\n你 打 我"
    tok = train_tokenizer("word", text, segment="none")
    assert isinstance(tok, WordTokenizer)
    pieces = [tok.tokens[i] for i in tok.encode(text)]
    assert pieces == ["我", " ", "打", " ", "你", "\n", "你", " ", "打", " ", "我"]
    # Most frequent first, ties broken by the string itself.
    assert tok.tokens == [" ", "你", "我", "打", "\n"]


def test_word_tokens_split_punctuation_and_keep_whitespace():
    tok = train_tokenizer("word", "Hello,  world!\n")
    assert [tok.tokens[i] for i in tok.encode("Hello,  world!\n")] == ["Hello", ",", "  ", "world", "!", "\n"]


def test_word_vocab_size_keeps_most_frequent():
    tok = train_tokenizer("word", "a a a b b c", vocab_size=3)
    assert tok.tokens == [" ", "a", "b"]
    with pytest.raises(UnknownTokenError, match="1 word is not in the tokenizer's vocabulary: 'c'"):
        tok.encode("a c")


def test_unknown_characters_are_named():
    tok = train_tokenizer("char", "abc")
    with pytest.raises(UnknownTokenError) as info:
        tok.encode("a𝄞bΩ𝄞")
    message = str(info.value)
    assert message == "2 characters are not in the tokenizer's vocabulary: '𝄞', 'Ω'"
    assert isinstance(info.value, ValueError)


def test_many_unknown_characters_are_cut_short():
    tok = train_tokenizer("char", "a")
    with pytest.raises(UnknownTokenError) as info:
        tok.encode("0123456789xyz\n")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("14 characters")
    assert message.endswith("'9' and 4 more")


def test_display_of_bytes():
    assert _readable("你".encode() + b"\xe5") == "你<e5>"
    assert _readable(b"\xbd\xa0") == "<bd a0>"
    assert _readable(b"\xa0" + "好".encode()) == "<a0>好"
    assert _readable(b"\n") == "\\n"
    assert _readable(b"\t\r") == "\\t\\r"
    assert _readable(b"   ") == "␣␣␣"
    assert _readable(b" the") == "␣the"  # the space a word-start token carries, visible
    assert _readable(b" \xf0\x9f") == "␣<f0 9f>"  # its leading space visible too
    assert _readable("é𝄞".encode()) == "é𝄞"


def test_display_of_split_chinese_characters():
    tok = train_tokenizer("bpe", CHINESE_TEXT, vocab_size=270)
    shown = [tok.display(i) for i in range(tok.vocab_size)]
    assert not any(MOJIBAKE & set(s) for s in shown)
    hex_piece = re.compile(r"<[0-9a-f]{2}( [0-9a-f]{2})*>")
    # Most Chinese characters are split by such a small vocabulary, so their
    # pieces must be shown in hex; the single byte 0xe4 shows as "<e4>".
    assert sum(bool(hex_piece.search(s)) for s in shown) > 128
    assert shown[tok.encode("\n")[0]] == "\\n"
    ids_of_bytes = {tok.token_bytes(i): i for i in range(tok.vocab_size)}
    assert shown[ids_of_bytes[b"\xe4"]] == "<e4>"
    assert shown[ids_of_bytes[b" "]] == "␣"


def test_display_for_char_and_word_tokens():
    char = train_tokenizer("char", "a\nb")
    assert [char.display(i) for i in range(char.vocab_size)] == ["\\n", "a", "b"]
    word = train_tokenizer("word", "a  b", segment="none")
    assert word.display(word.ids["  "]) == "␣␣"


def test_train_errors():
    with pytest.raises(ValueError, match="cannot build a tokenizer from empty text"):
        train_tokenizer("char", "")
    with pytest.raises(ValueError, match="char, word, bpe"):
        train_tokenizer("sentencepiece", "abc")
    with pytest.raises(ValueError, match="at least 256"):
        train_tokenizer("bpe", "abc", vocab_size=100)


def test_kinds_and_classes():
    assert isinstance(train_tokenizer("char", "ab"), CharTokenizer)
    assert isinstance(BPE, BPETokenizer)
    tokenizers = (train_tokenizer("char", "ab"), train_tokenizer("word", "ab"), BPE)
    assert [t.kind for t in tokenizers] == ["char", "word", "bpe"]


def test_load_bad_json_names_the_path(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_tokenizer(path)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_load_missing_file_and_wrong_content(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_tokenizer(tmp_path / "nope.json")
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps({"kind": "char", "version": 1}), encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_tokenizer(path)
    assert str(path) in str(info.value) and "'chars'" in str(info.value)


@pytest.mark.parametrize(
    "d, words",
    [
        ({"kind": "char", "version": 2, "chars": ["a"]}, "version"),
        ({"kind": "lstm", "version": 1}, "kind"),
        ({"kind": "char", "version": 1, "chars": ["ab"]}, "single characters"),
        ({"kind": "word", "version": 1, "words": ["a"]}, "segment"),
        ({"kind": "word", "version": 1, "segment": "none", "words": ["a", "a"]}, "duplicate"),
        ({"kind": "word", "version": 1, "segment": "none", "whitespace": "no", "words": ["a"]}, "whitespace"),
        ({"kind": "bpe", "version": 1, "hf_tokenizer": {"model": {"type": "WordPiece"}}}, "hf_tokenizer"),
        ([1, 2], "JSON object"),
    ],
)
def test_tokenizer_from_dict_validates(d, words):
    with pytest.raises(ValueError, match=words) as info:
        tokenizer_from_dict(d)
    assert "\n" not in str(info.value)


def test_bpe_dict_with_prefix_space_reads_and_decodes_back():
    d = BPE.to_dict()
    d["hf_tokenizer"]["pre_tokenizer"]["add_prefix_space"] = True  # a space put in front of every text
    tok = tokenizer_from_dict(d)
    assert tok.prefix_space and tok.token_bytes(tok.encode("hello")[0]).startswith(b" ")
    assert tok.decode(tok.encode("hello 你好")) == "hello 你好"  # decode takes that space off again


def test_bpe_dict_with_broken_library_json():
    d = BPE.to_dict()
    d["hf_tokenizer"]["model"]["merges"] = "not a list"
    with pytest.raises(ValueError, match="hf_tokenizer") as info:
        tokenizer_from_dict(d)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------- words without whitespace tokens

_word = st.one_of(st.text(alphabet="abcxyzé_1你好中文苹果", min_size=1), st.sampled_from(list(",.!?，。🎉")))
_line = st.lists(_word, max_size=6).map(" ".join)
# Text written as qkv's corpus writes it: single spaces between words, bare line breaks between lines.
corpus_like = st.builds(
    lambda lines, nl: nl.join(lines), st.lists(_line, min_size=1, max_size=5), st.sampled_from(["\n", "\r\n"])
).filter(lambda s: s.strip())


def words_only(s: str) -> WordTokenizer:
    return train_tokenizer("word", s, segment="none", whitespace=False)


def streamed(tok, ids) -> str:
    return b"".join(tok.separator(p, i) + tok.token_bytes(i) for p, i in zip([None, *ids], ids)).decode("utf-8")


@settings(max_examples=200, deadline=None)
@given(corpus_like)
def test_words_only_roundtrip_corpus_like_text(s):
    tok = words_only(s)
    ids = tok.encode(s)
    assert tok.decode(ids) == s
    assert streamed(tok, ids) == s
    pieces = [tok.tokens[i] for i in ids]
    assert " " not in "".join(pieces)  # no token holds a space
    assert [p for p in pieces if not p.isspace()] == s.split()  # the words, in order


@settings(max_examples=200, deadline=None)
@given(any_text.filter(str.strip))
def test_words_only_decode_writes_any_text_in_corpus_form(s):
    tok = words_only(s)
    once = tok.decode(tok.encode(s))
    assert tok.encode(once) == tok.encode(s)  # the same tokens: no word was lost or merged
    assert tok.decode(tok.encode(once)) == once  # and the corpus form round-trips
    assert streamed(tok, tok.encode(s)) == once


def test_words_only_examples():
    tok = words_only("Hi,  you\there.\n  \nnext line ")
    assert sorted(tok.tokens) == sorted(["Hi", ",", "you", "here", ".", "\n\n", "next", "line"])
    assert tok.decode(tok.encode("Hi,  you\there.\n  \nnext line ")) == "Hi , you here .\n\nnext line"
    assert tok.respace("Hi,you") == "Hi , you"
    with pytest.raises(ValueError, match="without words"):
        words_only("  \t ")
    for kind, value in (("char", False), ("bpe", False), ("word", "no"), ("word", 0)):
        with pytest.raises(ValueError, match="whitespace"):
            train_tokenizer(kind, "a b", whitespace=value)


def test_words_only_drops_what_the_whitespace_tokens_held():
    """The ids of whitespace=False are the word tokenizer's ids without its single-space tokens,
    for the corpus (the tokenizer the training lessons use, lessons/common/training.py)."""
    from qkv.core.text.corpus import generate

    text = generate(n_sentences=100)
    full, words = train_tokenizer("word", text, segment="none"), words_only(text)
    assert [words.tokens[i] for i in words.encode(text)] == [
        full.tokens[i] for i in full.encode(text) if full.tokens[i] != " "
    ]
    assert words.vocab_size == full.vocab_size - 1
    assert words.decode(words.encode(text)) == text


def test_words_only_is_saved_and_old_files_keep_whitespace(tmp_path):
    tok = words_only(MIXED_TEXT)
    tok.save(tmp_path / "w.json")
    assert json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))["whitespace"] is False
    loaded = load_tokenizer(tmp_path / "w.json")
    assert not loaded.whitespace and loaded.encode(MIXED_TEXT) == tok.encode(MIXED_TEXT)
    old = train_tokenizer("word", MIXED_TEXT, segment="none").to_dict()
    del old["whitespace"]  # a file written before the option existed
    assert tokenizer_from_dict(old).whitespace and " " in tokenizer_from_dict(old).split("a b")


@pytest.mark.parametrize(
    "size, match", [(255, "at least 256"), (10**30, "at most 10,000,000"), (10_000_001, "at most")]
)
def test_bpe_vocab_size_out_of_range(size, match):
    with pytest.raises(ValueError, match=match):
        train_tokenizer("bpe", "a b", vocab_size=size)
    assert train_tokenizer("word", "a b", vocab_size=10**30).vocab_size == 3  # a word list is only cut
