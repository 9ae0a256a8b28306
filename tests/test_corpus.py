"""Tests for the built-in generated corpus (qkv.corpus)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import pytest

from qkv.core.text import corpus
from qkv.core.text.corpus import PHENOMENA, Probe, default_text, generate, probes
from qkv.core.text.corpus import lexicon as L

N = 3000  # sentences per language in the generated test texts

_CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def texts():
    """Generated texts for two seeds in both languages."""
    return {(seed, lang): generate(seed=seed, n_sentences=N, lang=lang) for seed in (0, 1) for lang in ("zh", "en")}


def _lines(text: str) -> list[str]:
    assert text.endswith("\n")
    return text[:-1].split("\n")


# ---------------------------------------------------------------------------
# Determinism, size, format
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en", "both"])
def test_same_seed_same_text_other_seed_other_text(lang):
    a = generate(seed=5, n_sentences=300, lang=lang)
    assert a == generate(seed=5, n_sentences=300, lang=lang)
    assert a != generate(seed=6, n_sentences=300, lang=lang)


def test_line_count_and_trailing_newline():
    assert len(_lines(generate(0, 7, "zh"))) == 7
    assert len(_lines(generate(0, 7, "en"))) == 7
    assert len(_lines(generate(0, 7, "both"))) == 14
    assert len(_lines(generate(0, 1, "zh"))) == 1


def test_default_text_size():
    text = default_text()
    assert 150_000 <= len(text.encode("utf-8")) <= 400_000
    assert text == generate(seed=0, n_sentences=corpus.DEFAULT_SENTENCES, lang="both")


def test_line_endings(texts):
    for (_, lang), text in texts.items():
        end = " 。" if lang == "zh" else " ."
        for line in _lines(text):
            assert line.endswith(end), line
            assert "  " not in line and line == line.strip(), line


def test_both_interleaves_zh_and_en():
    both = _lines(generate(3, 200, "both"))
    assert both[0::2] == _lines(generate(3, 200, "zh"))
    assert both[1::2] == _lines(generate(3, 200, "en"))


def test_character_sets(texts):
    zh = texts[(0, "zh")]
    en = texts[(0, "en")]
    assert not re.search(r"[A-Za-z]", zh)
    assert not _CJK.search(en)
    assert en == en.lower()


def test_required_words_present(texts):
    zh = texts[(0, "zh")]
    for word in ("原子能", "香蕉", "梨", "葡萄", *L.AMBIGUOUS):
        assert word in zh.split(), word
    assert "原子能" in default_text()


# ---------------------------------------------------------------------------
# Word sense in the training text
# ---------------------------------------------------------------------------


def _has_phrase(words: list[str], phrase: str) -> bool:
    p = phrase.split()
    return any(words[i : i + len(p)] == p for i in range(len(words) - len(p) + 1))


def test_sense_continuation_follows_the_cue(texts):
    company_cues = [zh for zh, _ in L.COMPANY_CUES]
    company_tails = {zh for zh, _ in L.COMPANY_TAILS}
    all_food_tails = {zh for info in L.AMBIGUOUS.values() for zh, _ in info["food_tails"]}
    assert not company_tails & all_food_tails
    assert "吃了" in [zh for zh, _ in L.AMBIGUOUS["苹果"]["food_cues"]]
    assert "投资了" in company_cues

    seen = Counter()
    for seed in (0, 1):
        for line in _lines(texts[(seed, "zh")]):
            words = line.split()
            for i, word in enumerate(words[:-1]):
                if word not in L.AMBIGUOUS or words[i + 1] != "，":
                    continue
                before, tail = words[:i], " ".join(words[i + 2 : -1])
                food_cues = [zh for zh, _ in L.AMBIGUOUS[word]["food_cues"]]
                food = any(_has_phrase(before, c) for c in food_cues)
                company = any(_has_phrase(before, c) for c in company_cues)
                assert food != company, line
                if food:
                    foods = {zh for zh, _ in L.AMBIGUOUS[word]["food_tails"]}
                    assert tail in foods, line
                    seen[word, "food"] += 1
                else:
                    assert tail in company_tails, line
                    seen[word, "company"] += 1
    for word in L.AMBIGUOUS:
        assert seen[word, "food"] > 20 and seen[word, "company"] > 20, seen


# ---------------------------------------------------------------------------
# Probes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("phenomenon", PHENOMENA)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_probes_are_well_formed(phenomenon, lang):
    items = probes(phenomenon, lang)
    assert len(items) >= 20
    assert items == probes(phenomenon, lang)  # deterministic
    for p in items:
        assert isinstance(p, Probe)
        assert p.phenomenon == phenomenon and p.lang == lang
        assert p.prompt and p.expected and p.alternatives
        assert p.expected not in p.alternatives
        assert p.line == f"{p.prompt} {p.expected} {corpus.sentence_end(lang)}"
        if lang == "zh":
            assert not re.search(r"[A-Za-z]", p.line)
        else:
            assert not _CJK.search(p.line)


@pytest.mark.parametrize("phenomenon", PHENOMENA)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_probes_are_held_out(texts, phenomenon, lang):
    for seed in (0, 1):
        lines = _lines(texts[(seed, lang)])
        if seed == 0:
            both = _lines(default_text())
            lines += both[0::2] if lang == "zh" else both[1::2]
        line_set = set(lines)
        # Every word-aligned beginning of every training line.
        starts = set()
        for line in lines:
            words = line.split()
            starts.update(" ".join(words[:k]) for k in range(1, len(words)))
        for p in probes(phenomenon, lang, seed=seed):
            assert p.line not in line_set, p
            # Stronger: the whole context is unseen, not just the sentence.
            assert p.prompt not in starts, p


def _groups(items: list[Probe]) -> dict[str, list[Probe]]:
    groups = defaultdict(list)
    for p in items:
        groups[p.group].append(p)
    return groups


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_order_probes_defeat_bag_of_words(lang):
    items = probes("order", lang)
    groups = _groups(items)
    assert len(groups) * 2 == len(items)
    for first, second in groups.values():
        assert Counter(first.prompt.split()) == Counter(second.prompt.split())
        assert first.prompt != second.prompt
        assert first.expected != second.expected
        assert second.expected in first.alternatives
        assert first.expected in second.alternatives


def test_order_probe_example_shape():
    # The patient of the action is the one who reacts.
    for p in probes("order", "zh"):
        words = p.prompt.split()
        assert words[-1] == "，"
        patient = words[-2]
        assert p.expected.split()[0] == patient


def test_sense_probes_pair_one_food_and_one_company_reading():
    company_tails = {zh for zh, _ in L.COMPANY_TAILS}
    items = probes("sense", "zh")
    for first, second in _groups(items).values():
        assert first.prompt.split()[-2:] == second.prompt.split()[-2:]
        assert first.expected not in company_tails
        assert second.expected in company_tails
        assert first.alternatives == (second.expected,)
    words_seen = {p.prompt.split()[-2] for p in items}
    assert words_seen == set(L.AMBIGUOUS)
    # 小米 is "millet" or "xiaomi" in English, so it is not an English probe.
    en_words = {p.prompt.split()[-3] for p in probes("sense", "en") if "which" not in p.prompt}
    assert "xiaomi" not in en_words and "millet" not in en_words


def test_probe_seed_changes_details_not_frames():
    a, b = probes("order", "zh", seed=0), probes("order", "zh", seed=1)
    assert [p.group for p in a] == [p.group for p in b]
    assert [p.prompt for p in a] != [p.prompt for p in b]


# ---------------------------------------------------------------------------
# Bad arguments
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: generate(lang="fr"),
        lambda: generate(n_sentences=0),
        lambda: generate(n_sentences=-3),
        lambda: probes("grammar"),
        lambda: probes("sense", lang="both"),
    ],
)
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError) as info:
        call()
    assert "\n" not in str(info.value)


def test_error_message_lists_choices():
    with pytest.raises(ValueError, match="zh, en, both"):
        generate(lang="de")
    with pytest.raises(ValueError, match="sense, order, association"):
        probes("nope")
