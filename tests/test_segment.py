"""Unspaced Chinese is cut as a reader cuts it (issue 32): the bundled word tokenizer reads a run it
does not know whole by its most probable split over its own words (core/text/tokenizers/bestpath.py),
not longest word first, and its note names exactly the characters read one by one or as bytes.

The figure: on tests/data/segment_zh.txt (151 everyday sentences written for this test: names,
times, idioms, book titles, numbers), the share of the words jieba cuts that the model holds as one
token and reads as that token. `pytest tests/test_segment.py -s` prints it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from cli_util import run_ok

from qkv.analysis.segmentation import agreement
from qkv.core.hub.bundled import BUNDLED
from qkv.core.text.tokenizers import load_tokenizer
from qkv.core.text.tokenizers import unknown as unknown_module
from qkv.core.text.tokenizers.bestpath import best_cut, zipf_costs
from qkv.core.text.tokenizers.unknown import unknown_pieces
from qkv.core.text.tokenizers.words import WordTokenizer
from qkv.presentation.byte_tokens import byte_role, byte_value

SENTENCES = Path(__file__).parent / "data" / "segment_zh.txt"


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(BUNDLED / "tokenizer.json")


def sentences() -> list[str]:
    lines = SENTENCES.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def words(tok, text: str) -> list[str]:
    return [tok.display(i) for i in tok.encode(text)]


def test_the_learners_sentence_is_read_as_a_reader_reads_it(tok):
    assert words(tok, "老师说明天下午三点在图书馆见面。") == [
        "老师", "说", "明天", "下午", "三", "点", "在", "图书馆", "见面", "。",
    ]  # fmt: skip
    assert words(tok, "天气预报说明天会下雪。")[:5] == ["天气", "预报", "说", "明天", "会"]
    assert words(tok, "我吃了苹果") == words(tok, "我 吃了 苹果")  # the training text's own split


@pytest.mark.slow
def test_at_least_98_percent_of_jiebas_words_the_model_knows_stay_one_token(tok):
    pytest.importorskip("jieba")
    texts = sentences()
    assert len(texts) >= 150 and len(set(texts)) == len(texts)
    got = agreement(tok, texts)
    print(f"\nkept {got['kept']} of {got['words']} words ({100 * got['share']:.1f}%); missed: {got['missed']}")
    assert got["words"] > 900 and got["share"] >= 0.98
    assert got["han_words"] > 600 and got["han_share"] >= 0.98  # punctuation, which any cut keeps, left out


def test_best_cut_minimises_the_total_cost_and_prefers_the_longer_part_on_a_tie():
    known = {"ab": 0, "a": 1, "b": 2, "c": 3, "bc": 4}
    flat = lambda i: 1.0
    assert best_cut("abc", known, 2, flat, lambda c: 9.0) == [("ab", 0), ("c", 3)]  # 2 parts, the longer first
    costs = {0: 5.0, 1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}
    assert best_cut("abc", known, 2, costs.__getitem__, lambda c: 9.0) == [("a", 1), ("bc", 4)]
    assert best_cut("xab", known, 2, flat, lambda c: 9.0) == [("x", None), ("ab", 0)]
    assert best_cut("", known, 2, flat, lambda c: 9.0) == []


def test_zipf_costs_grow_with_rank_and_a_byte_costs_most():
    cost, byte = zipf_costs(100, 256)
    assert cost(0) < cost(1) < cost(99) < byte
    assert math.isclose(sum(math.exp(-cost(r)) for r in range(356)), 1.0, rel_tol=1e-9)  # a distribution


def test_the_cut_does_not_depend_on_jieba(tok, monkeypatch):
    """The bundled model reads the same ids without jieba (its split uses only its own vocabulary)."""
    text = "老师说明天下午三点在图书馆见面。我在读红楼梦。"
    before = tok.encode(text)
    monkeypatch.setitem(__import__("sys").modules, "jieba", None)  # import jieba now fails
    fresh = load_tokenizer(BUNDLED / "tokenizer.json")
    assert fresh.encode(text) == before
    unknown_module._jieba.cache_clear()
    try:
        assert unknown_pieces(fresh, "红楼梦") == []  # no reader's words known: only fallback characters named
        got = unknown_pieces(fresh, "巅峰之作")
        assert [(u["text"], u["how"]) for u in got] == [("巅", "bytes"), ("峰之", "chars")]
    finally:
        unknown_module._jieba.cache_clear()


def test_the_note_names_exactly_the_characters_read_one_by_one_or_as_bytes(tok):
    pytest.importorskip("jieba")
    named = lambda text: [(u["text"], u["pieces"], u["how"]) for u in unknown_pieces(tok, text)]
    assert named("我在读红楼梦。") == [("红楼梦", ["红", "楼", "梦"], "chars")]
    assert named("他急得团团转。") == [("团团转", ["团", "团", "转"], "chars")]
    bytes_of = lambda c: [f"<0x{b:02X}>" for b in c.encode()]  # a character read as bytes shows its byte tokens
    assert named("这是他的巅峰之作。") == [
        ("巅", bytes_of("巅"), "bytes"),
        ("峰", ["峰"], "chars"),
        ("之", ["之"], "chars"),
    ]
    assert named("老师说明天下午三点在图书馆见面。") == []  # every word known: nothing named
    assert named("这个苹果很好吃。") == []  # two-character words read as two (这 个) are not named


def test_every_character_named_is_read_one_by_one_or_as_bytes(tok):
    """Only those: each named piece is one character, read as a fallback character, as bytes, or as
    one of a reader's word's characters; and every character read as bytes or a fallback character
    is named."""
    pytest.importorskip("jieba")
    for text in sentences():
        found = unknown_pieces(tok, text)
        named = [p for u in found if u["how"] == "chars" for p in u["pieces"]]
        assert all(len(p) == 1 for p in named), text
        below = [tok.display(i) for i in tok.encode(text) if tok.token_kind(i) == "char"]
        assert set(below) <= set(named), text
        read_as_bytes = [tok.display(i) for i in tok.encode(text) if tok.token_kind(i) == "byte"]
        assert read_as_bytes == [p for u in found if u["how"] == "bytes" for p in u["pieces"]], text
        assert all(len(u["text"].encode()) == len(u["pieces"]) for u in found if u["how"] == "bytes"), text


def test_an_untrained_word_tokenizer_cuts_by_frequency():
    """A tokenizer learnt from spaced text: the frequent words win the cut."""
    tok = WordTokenizer.train("他 说 明天 下午 来 。\n" * 5 + "说明 天下 午 。\n", fallback=True, whitespace=False)
    assert [tok.tokens[i] for i in tok.encode("他说明天下午来")] == ["他", "说", "明天", "下午", "来"]


def test_byte_roles_follow_utf8():
    for c in ("a", "é", "中", "🎉"):
        data = c.encode("utf-8")
        assert byte_role(data[0]) == ("ascii" if len(data) == 1 else f"lead{len(data)}")
        assert all(byte_role(b) == "cont" for b in data[1:])
    assert byte_role(0xC0) == byte_role(0xFF) == "bad" and byte_value("<0xE6>") == 0xE6 and byte_value("的") is None


@pytest.mark.slow
def test_explain_shows_byte_candidates_as_bytes_and_says_why(capsys):
    """The bundled model's candidates after 我喜欢吃 hold <0xE3>, the first byte of a character it spells."""
    from qkv.apps.cli import main

    for lang, cell, why in (
        ("en", "<0xE3> (byte: starts a 3-byte character)", "is one UTF-8 byte, not a character"),
        ("zh", "<0xE3>（字节：开始一个三字节的字）", "是一个 UTF-8 字节，不是一个字"),
    ):
        assert main(["explain", "我喜欢吃", "--top", "10", "--lang", lang]) == 0
        out = capsys.readouterr().out
        assert cell in out and why in out, out[-1500:]
    assert main(["explain", "我 吃了 苹果", "--top", "1", "--lang", "en"]) == 0  # ，
    assert "UTF-8 byte" not in capsys.readouterr().out  # no byte among the candidates: no line


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_qkv_explain_says_on_stderr_what_it_read_as_bytes_or_one_by_one(capsys, lang):
    """The command line names the same pieces as the page: a character read as its UTF-8 bytes (the
    byte tokens shown), a reader's word read a character at a time; a text of known words, nothing."""
    pytest.importorskip("jieba")
    _, err = run_ok(capsys, ["explain", "见面，别迟到喔。我在读红楼梦", "--lang", lang])
    lines = err.strip().splitlines()
    assert len(lines) == 2, lines
    assert "喔" in lines[0] and "红楼梦" in lines[1]
    assert "<0xE5> · <0x96> · <0x94>" in lines[0] and "红 · 楼 · 梦" in lines[1]
    assert ("UTF-8" in lines[0]) and (("字节" in lines[0]) == (lang == "zh"))
    _, err = run_ok(capsys, ["explain", "我 吃了 苹果", "--lang", lang])
    assert err == ""


def test_a_text_of_known_words_does_not_load_jiebas_dictionary(tok):
    """jieba's cut (about a second to load) can only change what is named where a part is read below a
    word or three one-character words stand in a row: elsewhere it is not asked."""
    unknown_module._jieba.cache_clear()
    try:
        assert unknown_pieces(tok, "我昨天吃了苹果，味道很好吃。") == []
        assert unknown_module._jieba.cache_info().misses == 0
        unknown_pieces(tok, "我在读红楼梦。")  # 红 · 楼 · 梦: three in a row, so the reader's cut is read
        assert unknown_module._jieba.cache_info().misses == 1
    finally:
        unknown_module._jieba.cache_clear()
