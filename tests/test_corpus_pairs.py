"""Tests for the parallel sentence pairs and their gold alignment (qkv.core.text.corpus.pairs)."""

from __future__ import annotations

import hashlib

import pytest

from qkv.core.text.corpus import Pair, default_text, generate, pairs, probes
from qkv.core.text.corpus import lexicon as L
from qkv.core.text.corpus.pairs import KINDS
from qkv.core.text.corpus.sentences import _reserved


@pytest.fixture(scope="module")
def train():
    return pairs("train", seed=0, n_sentences=2000)


@pytest.fixture(scope="module")
def heldout():
    return pairs("heldout", seed=0)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _en_of(pair: Pair, i: int) -> str:
    """The English words linked to Chinese word i, in sentence order."""
    return " ".join(pair.en[j] for j in sorted(pair.aligned("zh", i)))


# ---------------------------------------------------------------------------
# The text is unchanged (hashes taken from the code before pairs existed)
# ---------------------------------------------------------------------------

GENERATE_PINS = [
    (0, 2000, "both", "1894c16ce72940126e45e0156cea77c7066b81fed2fa249004eff20b7aabe9c9"),
    (0, 4000, "zh", "ed3754202bc823082513430ad8864990c96c6b1ed78be70ed7970d28fd5456a5"),
    (1, 500, "en", "01817a82af04478c3319021b964061ed1f8adf9513adaee7d87faeaecc497a97"),
    (7, 300, "both", "c5756ec58aeaf9761ce782b44b512e11ae47cab3ad2bc3e5551a86177a65d216"),
    (123, 1000, "zh", "4bb7001a5f1f2dd3ca0dbb7e8156a9e6d6d87dc65fb472406514e19bfd5b9132"),
]

PROBE_PINS = [
    ("sense", "zh", 0, 144, "caac9cda7bf3a4beb16af0caf41ed42b3076eab176e74ac17b8b732ed6d21e1e"),
    ("sense", "en", 3, 96, "c00f0e94cccb71ccdb3c32f891913994e732c1cc936388952225cffb0eaa9858"),
    ("order", "zh", 0, 64, "c028972cb36edcfd8d81631607a476fca58e814154ca852413af93f2b635f0dc"),
    ("order", "en", 0, 32, "5bac987e1298232a18044779c11695d54512e071cd392081942f327a4593b8af"),
    ("association", "zh", 3, 54, "63724edd0e48bd47607ca41ecef836f090260691ea5fc3451d37fe5e656ee0ad"),
    ("association", "en", 0, 54, "efc366f7ece606ff6cbcbb5d89716b9856826efe7f7f7486d44fe959ddb8632a"),
]


@pytest.mark.parametrize("seed,n,lang,digest", GENERATE_PINS)
def test_generated_text_is_pinned(seed, n, lang, digest):
    assert _sha(generate(seed=seed, n_sentences=n, lang=lang)) == digest


def test_default_text_is_pinned():
    assert _sha(default_text()) == GENERATE_PINS[0][3]


@pytest.mark.parametrize("phenomenon,lang,seed,count,digest", PROBE_PINS)
def test_probes_are_pinned(phenomenon, lang, seed, count, digest):
    items = probes(phenomenon, lang, seed)
    assert len(items) == count
    text = "\n".join(repr((p.prompt, p.expected, p.phenomenon, p.alternatives, p.group, p.lang)) for p in items)
    assert _sha(text) == digest


# ---------------------------------------------------------------------------
# Train split = generate(); held-out split = reserved frames only
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed,n", [(0, 2000), (1, 300), (42, 150)])
def test_train_pairs_are_the_generated_lines(seed, n):
    lines = generate(seed=seed, n_sentences=n, lang="both").splitlines()
    got = pairs("train", seed=seed, n_sentences=n)
    assert len(got) == n
    for k, pair in enumerate(got):
        assert pair.text("zh") == lines[2 * k]
        assert pair.text("en") == lines[2 * k + 1]
        assert pair.kind in KINDS


def test_heldout_is_deterministic_and_depends_on_seed(heldout):
    assert pairs("heldout", seed=0) == heldout
    other = pairs("heldout", seed=1)
    assert len(other) == len(heldout)
    assert other != heldout
    assert {p.kind for p in heldout} == {"sense", "order", "drug", "job"}


def test_heldout_never_appears_in_training_text(heldout):
    lines = set(default_text().splitlines())
    for pair in heldout:
        assert pair.text("zh") not in lines
        assert pair.text("en") not in lines


def test_heldout_covers_every_reserved_frame(heldout):
    held = _reserved()
    want_sense = {
        (amb, sense, L.SENSE_SUBJECTS[s][0], L.SENSE_TIMES[t][0], L.SENSE_MODIFIERS[m][0])
        for amb, frames in held["sense_list"].items()
        for s, t, m in frames
        for sense in ("food", "company")
    }
    want_order = {
        (L.ORDER_VERBS[v][0], L.PEOPLE[x][0], L.PEOPLE[y][0])
        for v, people in held["order_list"].items()
        for a, b in people
        for x, y in ((a, b), (b, a))
    }
    want_drug = {
        (L.DRUGS[d][0], L.PATIENTS[p][0].split()[0], n) for d, frames in held["drug_list"].items() for p, n in frames
    }
    want_job = {(L.JOBS[j][0], L.WORKERS[w][0], n) for j, frames in held["job_list"].items() for w, n in frames}

    by_kind = {kind: [p for p in heldout if p.kind == kind] for kind in KINDS}
    tags = {kind: [dict(p.tags) for p in by_kind[kind]] for kind in KINDS}
    got_sense = {(t["word"], t["sense"], t["subject"], t["time"], t["modifier"]) for t in tags["sense"]}
    got_order = {(t["verb"], t["agent"], t["patient"]) for t in tags["order"]}
    # The number of filler clauses is the number of commas less one.
    got_drug = {(t["drug"], p.zh[0], p.zh.count("，") - 1) for t, p in zip(tags["drug"], by_kind["drug"])}
    got_job = {(t["job"], p.zh[0], p.zh.count("，") - 1) for t, p in zip(tags["job"], by_kind["job"])}

    assert got_sense == want_sense and len(by_kind["sense"]) == len(want_sense)
    assert got_order == want_order and len(by_kind["order"]) == len(want_order)
    assert got_drug == want_drug and len(by_kind["drug"]) == len(want_drug)
    assert got_job == want_job and len(by_kind["job"]) == len(want_job)
    # 小米 shows up in English as both millet and xiaomi.
    xiaomi = {p.en[i] for p in by_kind["sense"] for i in range(len(p.en)) if p.en[i] in ("millet", "xiaomi")}
    assert xiaomi == {"millet", "xiaomi"}


# ---------------------------------------------------------------------------
# The alignment
# ---------------------------------------------------------------------------


def test_links_are_sorted_unique_and_in_bounds(train, heldout):
    for pair in train + heldout:
        assert list(pair.links) == sorted(set(pair.links))
        for i, j in pair.links:
            assert 0 <= i < len(pair.zh) and 0 <= j < len(pair.en)
        assert (len(pair.zh) - 1, len(pair.en) - 1) in pair.links  # 。 <-> .


def test_only_function_words_are_unlinked(train, heldout):
    for pair in train + heldout:
        for i, word in enumerate(pair.zh):
            if not pair.aligned("zh", i):
                assert word in ("的", "地方", "是"), (pair.text("zh"), word)
        for j, word in enumerate(pair.en):
            if not pair.aligned("en", j):
                assert word in ("and", ","), (pair.text("en"), word)


def test_punctuation_links_to_punctuation(train):
    for pair in train:
        for i, word in enumerate(pair.zh):
            if word in ("，", "。"):
                linked = [pair.en[j] for j in pair.aligned("zh", i)]
                assert linked == [{"，": ",", "。": "."}[word]]


def test_ambiguous_words_link_to_their_english_word(train, heldout):
    seen = set()
    for pair in train + heldout:
        if pair.kind != "sense":
            continue
        tags = dict(pair.tags)
        info = L.AMBIGUOUS[tags["word"]]
        want = info["en_food"] if tags["sense"] == "food" else info["en_company"]
        assert _en_of(pair, pair.zh.index(tags["word"])) == want
        seen.add((tags["word"], want))
    assert ("小米", "millet") in seen and ("小米", "xiaomi") in seen
    assert ("苹果", "apple") in seen and ("黑莓", "blackberry") in seen


def test_drug_names_and_effects_link_to_their_english(train, heldout):
    english = {zh: (en, effect_en) for zh, en, _, effect_en in L.DRUGS}
    checked = set()
    for pair in train + heldout:
        if pair.kind != "drug":
            continue
        tags = dict(pair.tags)
        drug_en, effect_en = english[tags["drug"]]
        assert _en_of(pair, pair.zh.index(tags["drug"])) == drug_en
        first_effect = len(pair.zh) - 1 - len(tags["effect"].split())
        assert _en_of(pair, first_effect) == effect_en
        checked.add(tags["drug"])
    assert checked == set(english)


def test_people_in_order_sentences_link_to_subject_and_object(train, heldout):
    people = {zh: (subj, obj) for zh, subj, obj in L.PEOPLE}
    for pair in train + heldout:
        if pair.kind != "order":
            continue
        tags = dict(pair.tags)
        verb = pair.zh.index(tags["verb"])
        agent, patient = verb - 1, verb + 1
        assert (pair.zh[agent], pair.zh[patient]) == (tags["agent"], tags["patient"])
        assert _en_of(pair, agent) == people[tags["agent"]][0]  # subject form: i, he
        assert _en_of(pair, patient) == people[tags["patient"]][1]  # object form: me, him
        # The agent comes before the verb in English as well.
        assert max(pair.aligned("zh", agent)) < min(pair.aligned("zh", verb))
        # The reaction starts with the person acted on, now an English subject.
        assert pair.zh[verb + 3] == tags["patient"]
        assert _en_of(pair, verb + 3) == people[tags["patient"]][0]


def test_placeholder_words_in_plain_sentences_link_to_their_english(train):
    checked = 0
    for pair in train:
        if pair.kind != "plain":
            continue
        words, _ = L.CATEGORIES[dict(pair.tags)["category"]]
        english = dict(words)
        for i, word in enumerate(pair.zh):
            if word in english:
                assert _en_of(pair, i) == english[word]
                checked += 1
    assert checked > 300


def test_hand_checked_sense_pair(train):
    pair = train[9]
    assert pair.text("zh") == "爸爸 又 投资了 网上 很 火 的 小米 ， 新 手机 上市了 。"
    assert pair.text("en") == ("dad invested in xiaomi again , which is popular online , and its new phone came out .")
    mod = [(i, j) for i in (3, 4, 5) for j in (6, 7, 8, 9)]  # 网上 很 火 / which is popular online
    tail = [(i, j) for i in (9, 10, 11) for j in (12, 13, 14, 15, 16)]
    want = [(0, 0), (1, 4), (2, 1), (2, 2), *mod, (7, 3), (8, 10), *tail, (12, 17)]
    assert pair.links == tuple(sorted(want))
    assert pair.kind == "sense"
    assert dict(pair.tags)["word"] == "小米" and dict(pair.tags)["sense"] == "company"


def test_hand_checked_order_pair(train):
    pair = train[111]
    assert pair.text("zh") == "今天 早上 在 家里 ， 他 帮了 老师 ， 老师 谢谢 他 。"
    assert pair.text("en") == ("this morning at home , he helped the teacher , the teacher thanked him .")
    want = [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),  # 今天 早上 / this morning
        (2, 2),
        (2, 3),
        (3, 2),
        (3, 3),  # 在 家里 / at home
        (4, 4),
        (5, 5),
        (6, 6),
        (7, 7),
        (7, 8),
        (8, 9),
        (9, 10),
        (9, 11),
        (10, 12),
        (11, 13),
        (12, 14),
    ]
    assert pair.links == tuple(want)
    assert dict(pair.tags) == {"verb": "帮了", "agent": "他", "patient": "老师"}
    assert pair.aligned("en", 8) == {7}
    assert pair.side("en") is pair.en and pair.side("zh") is pair.zh


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: pairs("test"),
        lambda: pairs("train", n_sentences=0),
        lambda: pairs("heldout", n_sentences="many"),
        lambda: pairs("train", n_sentences=3)[0].side("fr"),
        lambda: pairs("train", n_sentences=3)[0].aligned("zh", 99),
        lambda: pairs("train", n_sentences=3)[0].aligned("en", -1),
    ],
)
def test_bad_input_is_a_one_line_value_error(call):
    with pytest.raises(ValueError) as err:
        call()
    assert "\n" not in str(err.value)
