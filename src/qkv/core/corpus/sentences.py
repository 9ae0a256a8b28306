"""The sentence frames of the built-in corpus: how each kind of sentence is built in Chinese and
English, which frames are reserved for held-out probes, and how a random sentence is drawn.

A sentence is a dict {"zh": (context words, target words), "en": (...)} plus the choices that
made it; the full line is context + target + full stop, and probes cut between the two.
"""

from __future__ import annotations

import itertools
import random
from functools import lru_cache

from . import lexicon as L


# ---------------------------------------------------------------------------
# Rendering: a sentence is (context words, target words) in each language.
# The full line is context + target + full stop.  Probes cut between the
# context and the target.
# ---------------------------------------------------------------------------


def _words(*parts: str) -> list[str]:
    """Split and join entries, dropping empty ones."""
    out: list[str] = []
    for part in parts:
        out.extend(part.split())
    return out


def _sense(amb: str, food: bool, subj: int, time: int, mod: int,
           adv: int, cue: int, tail: int) -> dict:
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

    zh = _words(subj_zh, time_zh, adv_zh, cue_zh)
    if mod_zh:
        zh += _words(mod_zh, "的")
    zh += [amb, "，"]

    en = _words(time_en, subj_en, adv_en_pre, cue_en, word_en, adv_en_post)
    if mod_en:
        en += _words(",", mod_en)
    en += [",", "and"]
    return {"zh": (zh, _words(tail_zh)), "en": (en, _words(tail_en))}


def _order(verb: int, a: int, b: int, time: int, place: int) -> dict:
    verb_zh, verb_en, react_zh, react_en = L.ORDER_VERBS[verb]
    a_zh, a_en, a_en_obj = L.PEOPLE[a]
    b_zh, b_en, b_en_obj = L.PEOPLE[b]
    time_zh, time_en = L.ORDER_TIMES[time]
    place_zh, place_en = L.ORDER_PLACES[place]

    zh = _words(time_zh, place_zh)
    en = _words(time_en, place_en)
    if zh:
        zh.append("，")
        en.append(",")
    zh += _words(a_zh, verb_zh, b_zh, "，")
    en += _words(a_en, verb_en, b_en_obj, ",")
    target_zh = _words(react_zh.format(a=a_zh, b=b_zh))
    target_en = _words(react_en.format(a=a_en_obj, b=b_en))
    return {"zh": (zh, target_zh), "en": (en, target_en)}


def _drug(drug: int, patient: int, start: int, fillers: tuple[int, ...],
          delay: int) -> dict:
    drug_zh, drug_en, effect_zh, effect_en = L.DRUGS[drug]
    who_zh, who_en = L.PATIENTS[patient]
    start_zh, start_en = L.DRUG_STARTS[start]
    delay_zh, delay_en = L.DRUG_DELAYS[delay]

    zh = _words(who_zh, start_zh, "开始 服用", drug_zh, "，")
    en = _words(who_en, "started taking", drug_en, start_en, ",")
    for f in fillers:
        f_zh, f_en = L.DRUG_FILLERS[f]
        zh += _words(f_zh, "，")
        en += _words(f_en, ",")
    zh += _words(delay_zh, "后 出现了")
    en += _words("and after", delay_en, "developed")
    return {"zh": (zh, _words(effect_zh)), "en": (en, _words(effect_en))}


def _job(job: int, worker: int, fillers: tuple[int, ...]) -> dict:
    job_zh, job_en, place_zh, place_en = L.JOBS[job]
    name_zh, name_en = L.WORKERS[worker]

    zh = _words(name_zh, "是 一名", job_zh, "，")
    en = _words(name_en, "is", job_en, ",")
    for f in fillers:
        f_zh, f_en = L.WORKER_FILLERS[f]
        zh += _words(f_zh, "，")
        en += _words(f_en, ",")
    zh += _words("平时 工作 的 地方 是")
    en += _words("and usually works")
    return {"zh": (zh, _words(place_zh)), "en": (en, _words(place_en))}


def _plain(category: str, template: int, x: int, y: int, subj: int) -> dict:
    words, templates = L.CATEGORIES[category]
    t_zh, t_en = templates[template]
    x_zh, x_en = words[x]
    y_zh, y_en = words[y]
    s_zh, s_en = L.PLAIN_SUBJECTS[subj]
    zh = _words(t_zh.format(S=s_zh, X=x_zh, Y=y_zh))
    en = _words(t_en.format(S=s_en, X=x_en, Y=y_en))
    return {"zh": (zh, []), "en": (en, [])}


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
        frames = itertools.product(
            range(len(L.SENSE_SUBJECTS)),
            range(len(L.SENSE_TIMES)),
            range(len(L.SENSE_MODIFIERS)),
        )
        frames = list(frames)
        sense[amb] = _take(frames, len(frames) // 10, f"sense:{amb}")

    order = {}
    pairs = list(itertools.combinations(range(len(L.PEOPLE)), 2))
    plain_pairs = [p for p in pairs if _caseless(p[0]) and _caseless(p[1])]
    other_pairs = [p for p in pairs if p not in plain_pairs]
    for v in range(len(L.ORDER_VERBS)):
        # Two pairs that also work as English probes, two that may not.
        order[v] = sorted(
            _take(plain_pairs, 2, f"order:{v}:plain")
            + _take(other_pairs, 2, f"order:{v}:other")
        )

    drug = {}
    for d in range(len(L.DRUGS)):
        frames = list(itertools.product(range(len(L.PATIENTS)),
                                        range(_MAX_FILLERS + 1)))
        drug[d] = _take(frames, 3, f"drug:{d}")

    job = {}
    for j in range(len(L.JOBS)):
        frames = list(itertools.product(range(len(L.WORKERS)),
                                        range(_MAX_FILLERS + 1)))
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
        frame = (rng.randrange(len(L.SENSE_SUBJECTS)),
                 rng.randrange(len(L.SENSE_TIMES)),
                 rng.randrange(len(L.SENSE_MODIFIERS)))
        if frame not in held["sense"][amb]:
            break
    subj, time, mod = frame
    food = rng.random() < 0.5
    info = L.AMBIGUOUS[amb]
    cues = info["food_cues"] if food else L.COMPANY_CUES
    tails = info["food_tails"] if food else L.COMPANY_TAILS
    return _sense(amb, food, subj, time, mod,
                  adv=rng.randrange(len(L.SENSE_ADVERBS)),
                  cue=rng.randrange(len(cues)),
                  tail=rng.randrange(len(tails)))


def _draw_order(rng: random.Random, held: dict) -> dict:
    verb = rng.randrange(len(L.ORDER_VERBS))
    while True:
        a, b = rng.sample(range(len(L.PEOPLE)), 2)
        if (min(a, b), max(a, b)) not in held["order"][verb]:
            break
    return _order(verb, a, b,
                  time=rng.randrange(len(L.ORDER_TIMES)),
                  place=rng.randrange(len(L.ORDER_PLACES)))


def _draw_frame(rng: random.Random, n_people: int, reserved: set) -> tuple[int, int]:
    """A (person, number of filler clauses) frame that is not reserved for the probes."""
    while True:
        frame = (rng.randrange(n_people), rng.randrange(_MAX_FILLERS + 1))
        if frame not in reserved:
            return frame


def _draw_drug(rng: random.Random, held: dict) -> dict:
    drug = rng.randrange(len(L.DRUGS))
    patient, n_fill = _draw_frame(rng, len(L.PATIENTS), held["drug"][drug])
    return _drug(drug, patient,
                 start=rng.randrange(len(L.DRUG_STARTS)),
                 fillers=tuple(rng.sample(range(len(L.DRUG_FILLERS)), n_fill)),
                 delay=rng.randrange(len(L.DRUG_DELAYS)))


def _draw_job(rng: random.Random, held: dict) -> dict:
    job = rng.randrange(len(L.JOBS))
    worker, n_fill = _draw_frame(rng, len(L.WORKERS), held["job"][job])
    fillers = tuple(rng.sample(range(len(L.WORKER_FILLERS)), n_fill))
    return _job(job, worker, fillers)


def _draw_plain(rng: random.Random, held: dict) -> dict:
    category = rng.choice(tuple(L.CATEGORIES))
    words, templates = L.CATEGORIES[category]
    x, y = rng.sample(range(len(words)), 2)
    return _plain(category,
                  template=rng.randrange(len(templates)),
                  x=x, y=y,
                  subj=rng.randrange(len(L.PLAIN_SUBJECTS)))


_DRAW = {
    "sense": _draw_sense,
    "order": _draw_order,
    "drug": _draw_drug,
    "job": _draw_job,
    "plain": _draw_plain,
}
