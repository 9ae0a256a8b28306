"""Everyday Chinese: the HSK sentences, their fixed split, and what the bundled models make of them."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter

import pytest

from qkv.analysis.coverage import reading
from qkv.core.decode.translate import UNSURE_BELOW, confidence, translated, unknown_parts
from qkv.core.hub import bundled
from qkv.core.text.corpus import hsk
from qkv.core.text.tokenizers import WordTokenizer, load_tokenizer
from qkv.core.train.checkpoint import load

pytest.importorskip("hsk_sentences_audio")


@pytest.fixture(scope="module")
def gpt_tokenizer():
    return load_tokenizer(bundled.default_ckpt() / "tokenizer.json")


@pytest.fixture(scope="module")
def translator():
    return load(bundled.default_translate_ckpt())


def test_every_record_becomes_its_words_and_marks_in_order():
    every = hsk.sentences()
    assert len(every) == 4354 and [s.id for s in every] == sorted(s.id for s in every)  # ids of 4 digits
    first = every[0]
    assert first.words == ("老师", "，", "您", "好", "！") and first.english == "Hello, teacher!"
    assert first.glosses[0] == "teacher" and first.glosses[1] is None and first.glosses[4] is None
    from hsk_sentences_audio import load_sentences

    by_id = {r["id"]: r for r in load_sentences()}
    for s in every:  # nothing lost, nothing added: the words and marks spell the sentence exactly
        assert s.chinese == by_id[s.id]["chinese"].replace(" ", "")
        assert [w for w, g in zip(s.words, s.glosses) if g is not None] == [t["word"] for t in by_id[s.id]["tokens"]]


def test_the_split_is_disjoint_whole_and_stratified_by_level():
    train, held = hsk.split("train"), hsk.split("heldout")
    assert not {s.id for s in train} & {s.id for s in held}
    assert len(train) + len(held) == len(hsk.sentences())
    levels, held_levels = Counter(s.level for s in hsk.sentences()), Counter(s.level for s in held)
    assert sorted(levels) == [1, 2, 3, 4, 5, 6]
    for level, n in levels.items():  # every tenth of each level, less a repeat of a training sentence
        assert n // hsk.HELD_OUT_EVERY - 1 <= held_levels[level] <= n // hsk.HELD_OUT_EVERY
    assert not {s.chinese for s in held} & {s.chinese for s in train}  # a repeated sentence trains


def test_the_split_does_not_depend_on_the_order_of_the_records(monkeypatch):
    import hsk_sentences_audio

    before = hsk.split("heldout")
    records = list(reversed(hsk_sentences_audio.load_sentences()))
    monkeypatch.setattr(hsk_sentences_audio, "load_sentences", lambda: records)
    hsk.sentences.cache_clear()
    hsk.split.cache_clear()
    try:
        assert hsk.split("heldout") == before
    finally:
        hsk.sentences.cache_clear()
        hsk.split.cache_clear()


def test_a_bad_part_is_refused():
    with pytest.raises(ValueError, match="train and heldout"):
        hsk.split("test")


def test_english_is_written_as_the_corpus_writes_it():
    assert hsk.english_words("Thank you! You're welcome.") == ["thank", "you", "!", "you're", "welcome", "."]
    assert hsk.english_words("It costs 3 yuan.") == ["it", "costs", "3", "yuan", "."]


def test_the_bundled_gpt_trained_on_the_training_text_which_holds_no_held_out_sentence():
    text = bundled.training_text()
    config = json.loads((bundled.default_ckpt() / "config.json").read_text())
    assert config["data"]["sha256"] == hashlib.sha256(text.encode("utf-8")).hexdigest()
    lines = set(text.splitlines())
    assert all(s.spaced in lines for s in hsk.split("train"))
    assert not any(s.spaced in lines for s in hsk.split("heldout"))


def test_the_bundled_vocabulary_covers_the_training_words_marks_digits_and_letters(gpt_tokenizer):
    tok = gpt_tokenizer
    words = {w for s in hsk.split("train") for w in s.words}
    assert all(tok.token_kind(tok.ids[w]) == "word" for w in words)
    for c in hsk.MARKS + hsk.DIGITS + "abcdefghijklmnopqrstuvwxyz":
        assert c in tok.ids, c  # a token of its own: never UTF-8 bytes


def test_the_bundled_gpt_reads_held_out_everyday_chinese_almost_without_bytes(gpt_tokenizer):
    r = reading(gpt_tokenizer, [s.chinese for s in hsk.split("heldout")])
    assert r["shares"]["byte"] <= 0.005, r["unknown"]
    assert r["kinds"]["word"] > r["kinds"]["char"]


def test_a_reading_counts_each_kind_and_names_the_characters_read_as_bytes():
    tok = WordTokenizer(["我", "吃了"], whitespace=False, chars=["苹"], fallback=True)
    r = reading(tok, ["我吃了苹果", "我"])
    assert r["kinds"]["word"] == 3 and r["kinds"]["char"] == 1 and r["kinds"]["byte"] == 3  # 果: three bytes
    assert r["tokens"] == 7 and math.isclose(r["shares"]["byte"], 3 / 7)
    assert r["unknown"] == [["果", 1]] and r["characters"] == 6


def test_the_translator_learned_the_hsk_pairs_and_reads_an_unspaced_sentence(translator):
    model, tok = translator
    config = json.loads((bundled.default_translate_ckpt() / "config.json").read_text())
    assert config["data"]["everyday"] == "hsk"
    t = translated(model, tok, "我打你")  # the articles' own example, typed without spaces
    assert t.source == "我 打 你" and t.text


def test_an_unknown_character_is_named_alone_never_the_whole_sentence(translator):
    model, tok = translator
    assert unknown_parts(tok, "我打龘你") == ["龘"]
    assert unknown_parts(tok, "我打龘你 。") == ["龘"]  # a space before the mark: still typed without spaces
    assert unknown_parts(tok, "我 吃了 火龙果。") == ["火龙果"]  # spaced words: the word, without its mark
    assert unknown_parts(tok, "我 吃了 榴莲 和 火龙果") == ["榴莲", "火龙果"]
    with pytest.raises(ValueError, match="never saw: '龘'") as e:
        translated(model, tok, "我打龘你")
    assert "我打龘你" not in str(e.value)


def test_confidence_is_the_probability_of_the_least_likely_word():
    assert confidence([0.9, 0.3, 1.0]) == 0.3 and confidence([]) == 0.0
    assert 0 < UNSURE_BELOW < 1


def test_the_cli_says_beside_a_translation_that_the_model_is_unsure(capsys):
    from qkv.apps.cli.translate import _say
    from qkv.core.decode.translate import Translated

    _say(Translated("i ate an apple .", "我 吃了 苹果 。", 0.97, ".", True))
    assert capsys.readouterr() == ("i ate an apple .\n", "")
    guess = Translated("this patient started taking isoniazid .", "妈妈 今天 买了", 0.36, "isoniazid", True, ("“",))
    _say(guess, "en", 3)
    out, err = capsys.readouterr()
    assert out == "this patient started taking isoniazid .\n"
    assert err.splitlines()[:2] == [
        "qkv: note: line 3: the model never saw '“': it translated the sentence without them",
        "qkv: note: line 3: the model is unsure of this translation: it wrote “isoniazid” with probability 0.36 "
        "(below 0.5), choosing between words; read it as a guess",
    ]  # then the words no source word yields, with the rule (tests/test_translate_honesty.py)
    _say(guess, "zh")
    assert capsys.readouterr().err.splitlines()[:2] == [
        "qkv: 注意：模型没见过标点「“」，翻译时当它们不存在",
        "qkv: 注意：模型对这句译文没有把握：它写下「isoniazid」时的概率只有 0.36（低于 0.5），"
        "是在几个词之间挑的，请把它当作猜测",
    ]


def test_qkv_translate_reads_the_articles_example(capsys):
    from qkv.apps.cli import main

    assert main(["translate", "我打你"]) == 0
    out = capsys.readouterr().out.strip()
    assert out and not any("\u4e00" <= c <= "\u9fff" for c in out)  # English words


def test_the_built_in_held_out_pairs_are_translated_surely_and_an_invented_one_is_not(translator):
    from qkv.core.text.corpus import pairs

    model, tok = translator
    held = pairs("heldout")
    assert sum(translated(model, tok, p.text("zh")).unsure for p in held) <= len(held) // 20
    assert translated(model, tok, "妈妈今天买了三斤香蕉。").unsure  # the invented translation


def test_the_bundled_gpt_is_small_enough_to_ship():
    assert sum(p.stat().st_size for p in bundled.default_ckpt().iterdir()) <= 8_000_000
    assert (bundled.default_ckpt() / "README.md").read_text().count("CC-BY-SA-4.0") == 1
    assert "CC-BY-SA-4.0" in (bundled.default_translate_ckpt() / "README.md").read_text()


def test_the_page_and_the_cli_measure_the_same_confidence(translator):
    from qkv.apps.web.translation_view import translation_view

    model, tok = translator
    doc = translation_view(model, tok, "妈妈今天买了三斤香蕉。")
    t = translated(model, tok, "妈妈今天买了三斤香蕉。")
    assert doc["translation"] == t.text and doc["weakest"] == t.weakest
    assert doc["unsure"] is t.unsure is True and math.isclose(doc["confidence"], t.confidence, rel_tol=1e-4)


def test_marks_the_translator_never_saw_are_left_out_and_said(translator):
    model, tok = translator
    t = translated(model, tok, "小明说：“我昨天吃了苹果，味道很甜！”")  # the HSK sentences have no quotes
    assert t.left_out == ("：", "“", "”") and "“" not in t.source and t.text
    assert translated(model, tok, "我昨天吃了苹果，味道很甜！").left_out == ()


def test_the_recipe_rebuilds_the_bundled_tokenizer_exactly(gpt_tokenizer):
    pytest.importorskip("jieba")
    rebuilt = bundled.learner_tokenizer(bundled.training_text(), extra_chars=bundled.common_chars())
    assert rebuilt.to_dict() == gpt_tokenizer.to_dict()


def test_a_sentence_of_unknown_marks_alone_is_empty(translator):
    from qkv.core.decode.translate import encode_source

    with pytest.raises(ValueError, match="the sentence to translate is empty"):
        encode_source(translator[1], "“ ”")
