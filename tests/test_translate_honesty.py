"""The translator's honesty mark: a content word of a translation that no source word yields is marked
invented (qkv.analysis.invented_words), by a lexicon of glosses and training pairs
(qkv.analysis.translation_lexicon); `qkv translate` says it with its rule, and
benchmarks/translate_honesty.py measures it on the HSK held-out sentences."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_util import run_ok

from qkv.analysis import translation_lexicon as tl
from qkv.analysis.english_words import content_stems, is_content, stem
from qkv.analysis.invented_words import applies, honesty, invented, invented_words, source_words, unglossed
from qkv.core.text.corpus.pairs import Pair

ROOT = Path(__file__).resolve().parents[1]
HAS_HSK = importlib.util.find_spec("hsk_sentences_audio") is not None
needs_hsk = pytest.mark.skipif(not HAS_HSK, reason="needs hsk-sentences-audio (pip install 'qkv[zh]')")
APPLES = "这家店的苹果又大又甜，才五块钱一斤！"


def lexicon(**words: str) -> tl.Lexicon:
    """A hand-made lexicon: each Chinese word yields the stems of its English words."""
    return tl.Lexicon({z: frozenset(content_stems(e.split())) for z, e in words.items()}, ("hand",))


HAND = lexicon(苹果="apple", 吃="eat meal", 甜="sweet", 五="five", 斤="catty pound", 洗手间="restroom toilet", 买="buy")


def test_english_function_words_marks_and_contractions_are_never_judged():
    assert [w for w in "the apple of my eye , don't it's teacher's 5 </s> is".split() if is_content(w)] == [
        "apple",
        "eye",
        "teacher's",
        "5",
    ]


@pytest.mark.parametrize(
    "forms",
    [
        ("ate", "eat", "eating", "eats", "eaten"),
        ("apples", "apple"),
        ("tasted", "taste"),
        ("families", "family"),
        ("stopped", "stop"),
        ("glasses", "glass"),
        ("bigger", "big"),
        ("bought", "buy", "buying"),
    ],
)
def test_the_forms_of_a_word_share_one_stem(forms):
    assert len({stem(w) for w in forms}) == 1, {w: stem(w) for w in forms}


def test_a_word_no_source_word_yields_is_marked_and_the_others_are_not():
    words = "the apple i ate was sweet and cost five pounds of levothyroxine .".split()
    marks = invented(HAND, ["苹果", "甜", "吃", "五", "斤"], words)
    assert [m.word for m in marks] == ["apple", "ate", "sweet", "cost", "five", "pounds", "levothyroxine"]
    assert [m.word for m in marks if m.invented] == ["cost", "levothyroxine"]
    assert all(words[m.pos] == m.word for m in marks)  # each mark names its place in the translation


def test_function_words_are_never_marked_even_with_no_source_word():
    assert invented_words(HAND, ["苹果"], "the apple is on it and in the of .".split()) == []


def test_a_source_word_counts_inside_a_token_and_across_tokens():
    assert source_words(HAND, ["买了", "洗", "手", "间"]) == ["买", "洗手间"]  # 买了 holds 买; 洗 手 间 hold 洗手间
    assert invented_words(HAND, ["我", "买了", "苹果"], "i bought apples".split()) == []
    assert invented_words(HAND, ["洗", "手", "间"], "the restroom".split()) == []
    assert invented_words(HAND, ["洗", "手"], "the restroom".split()) == ["restroom"]  # 洗手 is not 洗手间


def test_digits_and_latin_words_yield_themselves():
    assert invented_words(HAND, ["3", "斤", "HSK"], "3 pounds three hsk".split()) == []
    assert invented_words(HAND, ["12", "斤"], "12 pounds seven".split()) == ["seven"]


def test_source_words_the_lexicon_knows_nothing_of_are_named():
    assert unglossed(HAND, ["苹果", "龘", "，", "5"]) == ["龘"]


def test_only_chinese_to_english_is_judged():
    assert applies(("zh", "en"), ["苹果"], ["apple"]) and applies(None, ["苹果"], ["apple"])
    assert not applies(("en", "zh"), ["apple"], ["苹果"]) and not applies(None, ["apple"], ["apple"])
    assert honesty(["apple"], ["苹果"], ("en", "zh"), HAND) == {
        "checked": False,
        "invented": [],
        "words": [],
        "unglossed": [],
    }
    h = honesty(["苹果", "很", "甜"], "the apple is very sweet and cheap and cheap".split(), None, HAND)
    assert h == {"checked": True, "invented": [6, 8], "words": ["cheap"], "unglossed": ["很"]}


def test_a_gloss_gives_the_senses_that_translate_and_skips_the_others():
    assert tl.gloss_stems("to eat; (bound form) meal") == {"eat", "meal"}
    assert tl.gloss_stems("surname Qian") == frozenset()
    assert tl.gloss_stems("used in 傢伙|家伙[jia1 huo5]") == frozenset()
    assert tl.gloss_stems("see 延長縣|延长县[Yan2 chang2 Xian4]") == frozenset()
    assert tl.gloss_stems("(pronoun) this; these") == frozenset()  # only function words
    assert tl.gloss_stems(None) == frozenset()


def test_training_pairs_yield_what_goes_together_and_not_what_meets_once_in_a_crowd():
    pairs = [
        (["钱", "很", "多"], ["much", "money"]),
        (["我", "有", "钱"], ["i", "have", "money"]),
        (["我", "看", "书"], ["i", "read", "a", "book"]),
        (["我", "买", "书"], ["i", "bought", "books"]),
        (["我", "很", "好"], ["i", "am", "fine"]),
        (["我", "来", "了"], ["i", "came"]),
    ]
    table: dict[str, set[str]] = {}
    tl.from_pairs(pairs, table, min_pairs=2, min_dice=0.6)
    assert table == {"钱": {stem("money")}, "书": {stem("book")}}  # 我 meets book in 2 of its 5 pairs: Dice 4/7


def test_built_in_links_are_kept_only_where_the_words_go_together():
    # 的 is linked across a phrase to porridge once, but is in every sentence: it does not yield porridge
    p1 = Pair(("粥", "的", "香"), ("porridge", "smelled", "good"), ((0, 0), (1, 0), (2, 1), (2, 2)), "plain")
    p2 = Pair(("我", "的", "书"), ("my", "book"), ((2, 1),), "plain")
    p3 = Pair(("他", "的", "书"), ("his", "book"), ((2, 1),), "plain")
    table: dict[str, set[str]] = {}
    tl.from_links([p1, p2, p3], table, min_dice=0.6)
    assert table["粥"] == {stem("porridge")} and "的" not in table and table["书"] == {stem("book")}


def test_a_placeholder_english_is_no_translation():
    assert all(tl.is_placeholder(e) for e in ("placeholder", "placeholder-p12", "Placeholder-q1"))
    assert not tl.is_placeholder("He left a placeholder on the desk.")


def test_unknown_lexicon_sources_are_refused():
    with pytest.raises(ValueError, match="lexicon sources"):
        tl.build(sources=("glosses", "wikipedia"))


@pytest.mark.slow
@needs_hsk
def test_the_learners_sentence_about_levothyroxine_is_marked():
    """The issue's sentence and what the bundled model wrote for it: the drug and the palpitations are
    marked, the apples, five, big and sweet (which the source says) are not."""
    lex = tl.bundled_lexicon()
    source = "这 家 店 的 苹果 又 大 又 甜 ， 才 五 块 钱 一 斤 ！".split()
    written = "this an old man started taking levothyroxine , and after a month developed palpitations .".split()
    found = invented_words(lex, source, written)
    assert {"levothyroxine", "palpitations", "month", "started"} <= set(found)
    assert not {"this", "an", "old"} & set(found)  # a function word; 大 "older" and 店 "old-style hotel"
    assert invented_words(lex, source, "the apples here are big and sweet , only five yuan a catty !".split()) == []


@pytest.mark.slow
@needs_hsk
@pytest.mark.parametrize(
    ("lang", "said"), [("en", ["invented", "levothyroxine", "rule:"]), ("zh", ["凭空编出", "levothyroxine", "规则："])]
)
def test_qkv_translate_says_the_invented_words_and_the_rule(capsys, lang, said):
    out, err = run_ok(capsys, ["translate", APPLES, "--lang", lang])
    assert "levothyroxine" in out
    assert all(s in err for s in said), err
    assert "unsure" in err or "没有把握" in err  # the other mark, the least likely word, is still said


@pytest.mark.slow
@needs_hsk
def test_a_faithful_translation_gets_no_invented_note(capsys):
    out, err = run_ok(capsys, ["translate", "他是我的老师。"])
    assert out == "he is my teacher .\n" and "invented" not in err


@pytest.mark.slow
@pytest.mark.subprocess
@needs_hsk
def test_the_figure_script_runs_on_a_small_slice():
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "translate_honesty.py"), "--limit", "12"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert run.returncode == 0, run.stderr
    assert "HSK held-out: 12 sentences" in run.stdout
    assert (
        "recall (invented words flagged): " in run.stdout and "false flag rate (correct words flagged): " in run.stdout
    )


@pytest.mark.slow
@needs_hsk
def test_the_pages_document_marks_the_invented_words_of_the_translation():
    from qkv.analysis.schema import validate
    from qkv.apps.web.translation_view import translation_view
    from qkv.core.hub.bundled import default_translate_ckpt
    from qkv.core.train.checkpoint import load

    model, tok = load(default_translate_ckpt())
    doc = translation_view(model, tok, APPLES)
    assert validate(doc) is None
    h, words = doc["honesty"], doc["translation"].split()
    assert h["checked"] and "levothyroxine" in h["words"] and "palpitations" in h["words"]
    assert {words[i] for i in h["invented"]} == set(h["words"])  # the positions are the translation's words
