"""The sentence frames of the built-in corpus: how each kind of sentence is built in Chinese and
English, which frames are reserved for held-out probes, and how a random sentence is drawn.

Each builder puts a sentence together from *items*, ``(label, words)``, one list per language.
Items that carry the same label on the two sides translate each other; label ``None`` marks
words with no counterpart (的, "and").  :func:`_build` turns the items into a sentence dict::

    {"zh": (context words, target words), "en": (...),
     "links": ((zh index, en index), ...), "kind": "sense", "tags": (("word", "苹果"), ...)}

The full line is context + target + full stop (the two stops are linked); probes cut between
context and target.
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from functools import lru_cache

from qkv.core.text.corpus import lexicon as L

END = {"zh": "。", "en": "."}

Item = tuple[str | None, str]  # (label, words): words that share a label are linked across languages; None: no link

# How often each kind of sentence is drawn in generate().
MIX = (("sense", 30), ("order", 22), ("drug", 18), ("job", 10), ("plain", 20))


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    """A one-line ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of: {', '.join(choices)}")


def check_count(n_sentences: object) -> None:
    """A one-line ValueError unless ``n_sentences`` is an int >= 1."""
    if isinstance(n_sentences, bool) or not isinstance(n_sentences, int):
        raise ValueError(f"n_sentences must be an int >= 1, got {n_sentences!r}")
    if n_sentences < 1:
        raise ValueError(f"n_sentences must be >= 1, got {n_sentences}")


# ---------------------------------------------------------------------------
# Items and links
# ---------------------------------------------------------------------------


def _flatten(items: list) -> tuple[list[str], list]:
    """The words of a list of items, and each word's label."""
    words: list[str] = []
    labels: list = []
    for label, text in items:
        for word in text.split():
            words.append(word)
            labels.append(label)
    return words, labels


def _build(kind: str, zh: list, en: list, zh_tail: list, en_tail: list, tags: tuple = ()) -> dict:
    """A sentence dict from context items and target (tail) items in each language."""
    zh_words, zh_labels = _flatten(zh + zh_tail + [("stop", END["zh"])])
    en_words, en_labels = _flatten(en + en_tail + [("stop", END["en"])])
    en_at = defaultdict(list)
    for j, label in enumerate(en_labels):
        en_at[label].append(j)
    links = tuple(sorted((i, j) for i, label in enumerate(zh_labels) if label is not None for j in en_at[label]))
    n_zh, n_en = len(_flatten(zh)[0]), len(_flatten(en)[0])
    return {
        "zh": (zh_words[:n_zh], zh_words[n_zh:-1]),
        "en": (en_words[:n_en], en_words[n_en:-1]),
        "links": links,
        "kind": kind,
        "tags": tuple(tags),
    }


def _template(label: str, template: str, values: dict[str, str]) -> list:
    """Items for a template such as ``"{S} 吃了 一些 {X}"``.

    Each placeholder becomes an item labelled ``label.NAME`` holding its value; the template's
    own words all carry ``label``, so they form one phrase.
    """
    items = []
    for word in template.split():
        if word.startswith("{") and word.endswith("}"):
            name = word[1:-1]
            items.append((f"{label}.{name}", values[name]))
        elif "{" in word or "}" in word:
            raise ValueError(f"placeholder must be a whole word in template {template!r}")
        else:
            items.append((label, word))
    return items


def _fillers(table: tuple, fillers: tuple[int, ...], lang: int) -> list:
    """Filler clauses, each followed by its comma; both get their own label."""
    comma = ("，", ",")[lang]
    items = []
    for k, f in enumerate(fillers):
        items += [(f"fill{k}", table[f][lang]), (f"fill{k},", comma)]
    return items


# ---------------------------------------------------------------------------
# The builders
# ---------------------------------------------------------------------------


def _sense(amb: str, food: bool, subj: int, time: int, mod: int, adv: int, cue: int, tail: int) -> dict:
    info = L.AMBIGUOUS[amb]
    if food:
        cue_zh, cue_en = info["food_cues"][cue]
        tail_zh, tail_en = info["food_tails"][tail]
        word_en = info["en_food"]
    else:
        cue_zh, cue_en = L.COMPANY_CUES[cue]
        tail_zh, tail_en = L.COMPANY_TAILS[tail]
        word_en = info["en_company"]
    subj_zh, subj_en = L.SENSE_SUBJECTS[subj]
    time_zh, time_en = L.SENSE_TIMES[time]
    mod_zh, mod_en = L.SENSE_MODIFIERS[mod]
    adv_zh, adv_en_pre, adv_en_post = L.SENSE_ADVERBS[adv]

    zh: list[Item] = [("subj", subj_zh), ("time", time_zh), ("adv", adv_zh), ("cue", cue_zh)]
    if mod_zh:
        zh += [("mod", mod_zh), (None, "的")]
    zh += [("word", amb), (",", "，")]

    en: list[Item] = [
        ("time", time_en),
        ("subj", subj_en),
        ("adv", adv_en_pre),
        ("cue", cue_en),
        ("word", word_en),
        ("adv", adv_en_post),
    ]
    if mod_en:
        en += [(None, ","), ("mod", mod_en)]
    en += [(",", ","), (None, "and")]
    tags = (
        ("word", amb),
        ("sense", "food" if food else "company"),
        ("subject", subj_zh),
        ("time", time_zh),
        ("modifier", mod_zh),
    )
    return _build("sense", zh, en, [("tail", tail_zh)], [("tail", tail_en)], tags)


def _order(verb: int, a: int, b: int, time: int, place: int) -> dict:
    verb_zh, verb_en, react_zh, react_en = L.ORDER_VERBS[verb]
    a_zh, a_en, a_en_obj = L.PEOPLE[a]
    b_zh, b_en, b_en_obj = L.PEOPLE[b]
    time_zh, time_en = L.ORDER_TIMES[time]
    place_zh, place_en = L.ORDER_PLACES[place]

    zh = [("time", time_zh), ("place", place_zh)]
    en = [("time", time_en), ("place", place_en)]
    if (time_zh + place_zh).strip():
        zh.append(("setting,", "，"))
        en.append(("setting,", ","))
    zh += [("a", a_zh), ("verb", verb_zh), ("b", b_zh), (",", "，")]
    en += [("a", a_en), ("verb", verb_en), ("b", b_en_obj), (",", ",")]
    target_zh = _template("react", react_zh, {"a": a_zh, "b": b_zh})
    target_en = _template("react", react_en, {"a": a_en_obj, "b": b_en})
    tags = (("verb", verb_zh), ("agent", a_zh), ("patient", b_zh))
    return _build("order", zh, en, target_zh, target_en, tags)


def _drug(drug: int, patient: int, start: int, fillers: tuple[int, ...], delay: int) -> dict:
    drug_zh, drug_en, effect_zh, effect_en = L.DRUGS[drug]
    who_zh, who_en = L.PATIENTS[patient]
    start_zh, start_en = L.DRUG_STARTS[start]
    delay_zh, delay_en = L.DRUG_DELAYS[delay]

    zh: list[Item] = [
        ("who", who_zh),
        ("start", start_zh),
        ("started", "开始"),
        ("taking", "服用"),
        ("drug", drug_zh),
        (",", "，"),
    ]
    en: list[Item] = [
        ("who", who_en),
        ("started", "started"),
        ("taking", "taking"),
        ("drug", drug_en),
        ("start", start_en),
        (",", ","),
    ]
    zh += _fillers(L.DRUG_FILLERS, fillers, 0)
    en += _fillers(L.DRUG_FILLERS, fillers, 1)
    zh += [("delay", delay_zh), ("after", "后"), ("developed", "出现了")]
    en += [(None, "and"), ("after", "after"), ("delay", delay_en), ("developed", "developed")]
    tags = (("drug", drug_zh), ("effect", effect_zh))
    return _build("drug", zh, en, [("effect", effect_zh)], [("effect", effect_en)], tags)


def _job(job: int, worker: int, fillers: tuple[int, ...]) -> dict:
    job_zh, job_en, place_zh, place_en = L.JOBS[job]
    name_zh, name_en = L.WORKERS[worker]

    # 一名 goes with the job, as English "a" is part of job_en ("a doctor").
    zh: list[Item] = [("name", name_zh), ("is", "是"), ("job", "一名"), ("job", job_zh), (",", "，")]
    en: list[Item] = [("name", name_en), ("is", "is"), ("job", job_en), (",", ",")]
    zh += _fillers(L.WORKER_FILLERS, fillers, 0)
    en += _fillers(L.WORKER_FILLERS, fillers, 1)
    zh += [("usually", "平时"), ("works", "工作"), (None, "的 地方 是")]
    en += [(None, "and"), ("usually", "usually"), ("works", "works")]
    tags = (("job", job_zh), ("place", place_zh))
    return _build("job", zh, en, [("place", place_zh)], [("place", place_en)], tags)


def _plain(category: str, template: int, x: int, y: int, subj: int) -> dict:
    words, templates = L.CATEGORIES[category]
    t_zh, t_en = templates[template]
    x_zh, x_en = words[x]
    y_zh, y_en = words[y]
    s_zh, s_en = L.PLAIN_SUBJECTS[subj]
    zh = _template("plain", t_zh, {"S": s_zh, "X": x_zh, "Y": y_zh})
    en = _template("plain", t_en, {"S": s_en, "X": x_en, "Y": y_en})
    return _build("plain", zh, en, [], [], (("category", category),))


# ---------------------------------------------------------------------------
# Held-out frames.  These depend on nothing but the word tables (not on the
# seed), so probes stay unseen whatever seed the training text used.
# ---------------------------------------------------------------------------

_MAX_FILLERS = 3  # association sentences carry 0..3 neutral clauses


def _caseless(person: int) -> bool:
    """True if the English word is the same as subject and as object."""
    _, subj, obj = L.PEOPLE[person]
    return subj == obj


def _take(keys: list, count: int, salt: str) -> list:
    keys = list(keys)
    random.Random(f"qkv-heldout:{salt}").shuffle(keys)
    return sorted(keys[:count])


@lru_cache(maxsize=1)
def _reserved() -> dict:
    """Frames that generate() never uses; probes are made from them."""
    sense = {}
    for amb in L.AMBIGUOUS:
        triples = list(
            itertools.product(
                range(len(L.SENSE_SUBJECTS)),
                range(len(L.SENSE_TIMES)),
                range(len(L.SENSE_MODIFIERS)),
            )
        )  # (subject, time, modifier)
        sense[amb] = _take(triples, len(triples) // 10, f"sense:{amb}")

    order = {}
    pairs = list(itertools.combinations(range(len(L.PEOPLE)), 2))
    plain_pairs = [p for p in pairs if _caseless(p[0]) and _caseless(p[1])]
    other_pairs = [p for p in pairs if p not in plain_pairs]
    for v in range(len(L.ORDER_VERBS)):
        # Two pairs that also work as English probes, two that may not.
        order[v] = sorted(_take(plain_pairs, 2, f"order:{v}:plain") + _take(other_pairs, 2, f"order:{v}:other"))

    drug = {}
    for d in range(len(L.DRUGS)):
        frames = list(itertools.product(range(len(L.PATIENTS)), range(_MAX_FILLERS + 1)))
        drug[d] = _take(frames, 3, f"drug:{d}")

    job = {}
    for j in range(len(L.JOBS)):
        frames = list(itertools.product(range(len(L.WORKERS)), range(_MAX_FILLERS + 1)))
        job[j] = _take(frames, 3, f"job:{j}")

    return {
        "sense": {amb: frozenset(v) for amb, v in sense.items()},
        "sense_list": sense,
        "order": {v: frozenset(p) for v, p in order.items()},
        "order_list": order,
        "drug": {d: frozenset(v) for d, v in drug.items()},
        "drug_list": drug,
        "job": {j: frozenset(v) for j, v in job.items()},
        "job_list": job,
    }


# ---------------------------------------------------------------------------
# Drawing training sentences
# ---------------------------------------------------------------------------


def _draw_sense(rng: random.Random, held: dict) -> dict:
    amb = rng.choice(tuple(L.AMBIGUOUS))
    while True:
        frame = (
            rng.randrange(len(L.SENSE_SUBJECTS)),
            rng.randrange(len(L.SENSE_TIMES)),
            rng.randrange(len(L.SENSE_MODIFIERS)),
        )
        if frame not in held["sense"][amb]:
            break
    return _sense_drawn(rng, amb, rng.random() < 0.5, *frame)


def _sense_drawn(rng: random.Random, amb: str, food: bool, subj: int, time: int, mod: int) -> dict:
    """The sense sentence of this frame, its adverb, cue and tail drawn from rng (in that order)."""
    info = L.AMBIGUOUS[amb]
    cues = info["food_cues"] if food else L.COMPANY_CUES
    tails = info["food_tails"] if food else L.COMPANY_TAILS
    adv = rng.randrange(len(L.SENSE_ADVERBS))
    cue = rng.randrange(len(cues))
    return _sense(amb, food, subj, time, mod, adv=adv, cue=cue, tail=rng.randrange(len(tails)))


def _draw_order(rng: random.Random, held: dict) -> dict:
    verb = rng.randrange(len(L.ORDER_VERBS))
    while True:
        a, b = rng.sample(range(len(L.PEOPLE)), 2)
        if (min(a, b), max(a, b)) not in held["order"][verb]:
            break
    return _order(verb, a, b, time=rng.randrange(len(L.ORDER_TIMES)), place=rng.randrange(len(L.ORDER_PLACES)))


def _draw_frame(rng: random.Random, n_people: int, reserved: set) -> tuple[int, int]:
    """A (person, number of filler clauses) frame that is not reserved for the probes."""
    while True:
        frame = (rng.randrange(n_people), rng.randrange(_MAX_FILLERS + 1))
        if frame not in reserved:
            return frame


def _draw_drug(rng: random.Random, held: dict) -> dict:
    drug = rng.randrange(len(L.DRUGS))
    patient, n_fill = _draw_frame(rng, len(L.PATIENTS), held["drug"][drug])
    return _drug(
        drug,
        patient,
        start=rng.randrange(len(L.DRUG_STARTS)),
        fillers=tuple(rng.sample(range(len(L.DRUG_FILLERS)), n_fill)),
        delay=rng.randrange(len(L.DRUG_DELAYS)),
    )


def _draw_job(rng: random.Random, held: dict) -> dict:
    job = rng.randrange(len(L.JOBS))
    worker, n_fill = _draw_frame(rng, len(L.WORKERS), held["job"][job])
    fillers = tuple(rng.sample(range(len(L.WORKER_FILLERS)), n_fill))
    return _job(job, worker, fillers)


def _draw_plain(rng: random.Random, held: dict) -> dict:
    category = rng.choice(tuple(L.CATEGORIES))
    words, templates = L.CATEGORIES[category]
    x, y = rng.sample(range(len(words)), 2)
    return _plain(category, template=rng.randrange(len(templates)), x=x, y=y, subj=rng.randrange(len(L.PLAIN_SUBJECTS)))


_DRAW = {
    "sense": _draw_sense,
    "order": _draw_order,
    "drug": _draw_drug,
    "job": _draw_job,
    "plain": _draw_plain,
}


def draw_sentences(seed: int, n_sentences: int):
    """Yield the ``n_sentences`` sentence dicts of the training text for ``seed``, in order."""
    kinds = [kind for kind, _ in MIX]
    weights = [w for _, w in MIX]
    held = _reserved()
    rng = random.Random(seed)
    for _ in range(n_sentences):
        kind = rng.choices(kinds, weights)[0]
        yield _DRAW[kind](rng, held)
