"""Which heads stand out, by two measures, for the page's head labels (GET /api/heads).

A score alone says little: on the bundled model every head of the detector reads "previous token"
0.08-0.12, where a head that spreads its weight evenly over what it sees already scores 0.07. A label
is shown only where a head stands out:

    stands out  <=>  score >= RATIO * baseline  and  score >= FLOOR

baseline: the same measure's score for an even-spread head on the same tokens; FLOOR: the head gives
that kind of key at least that share of its weight (on a short text an even head's share is large).

Two measures are offered side by side:
    detector    qkv.analysis.head_scores: previous, duplicate, induction, first token, on repeated
                random tokens (any GPT)
    roles       the lesson "heads" (qkv.lessons.heads.measure): cue verb, previous, start, self, from
                the position after the comma of the corpus's sense probes (the bundled model's cue head
                puts 0.8 of its weight on the verb that decides the sense); only for a tokenizer that
                can encode the probes, its work bounded by ROLE_WORK
"""

from __future__ import annotations

from qkv.lessons.heads import measure as roles_lesson
from qkv.presentation.i18n import LANGS, translator

RATIO = 3.0  # at least this many times an even-spread head's score
FLOOR = 0.3  # and at least this share of the head's weight
# the work the roles may cost, in parameters x sentences: every probe for the bundled model (1.8 M
# parameters), 16 for a 500M-parameter model
ROLE_WORK = 2 * 10**9
MIN_SENTENCES = 16


def stands_out(score: float, baseline: float) -> bool:
    """score >= RATIO * baseline and score >= FLOOR (module docstring)."""
    return score >= RATIO * baseline and score >= FLOOR


def rule() -> dict:
    """The threshold, as the page states it."""
    return {"ratio": RATIO, "floor": FLOOR}


def mark_shown(labels: list[list[dict]], baselines: dict[str, float]) -> None:
    """Add "shown" (it stands out) and "ratio" (score / baseline of its kind) to each head's label."""
    for row in labels:
        for lab in row:
            base = baselines[lab["category"]]
            lab["ratio"] = lab["mass"] / base if base > 0 else 0.0
            lab["shown"] = stands_out(lab["mass"], base)


def head_roles(model, tokenizer) -> dict:
    """Each head's measured role (module docstring: roles): the category it gives the most weight to over
    the even-spread baseline (one baseline for all: the mean 1/T of the probes), that weight as "mass",
    every category's in "masses", "ratio" and "shown"; names per language; n_sentences measured. A model
    the lesson cannot measure (not a decoder, no probe its tokenizer encodes): labels null and why_lang."""
    cats = list(roles_lesson.CATEGORIES)
    names = {lang: _role_names(lang, cats) for lang in LANGS}
    if model.family.design not in roles_lesson.READS or tokenizer is None:
        return _no_roles("roles_family", names)
    limit = max(MIN_SENTENCES, ROLE_WORK // sum(p.numel() for p in model.parameters()))
    try:
        r = roles_lesson.measure(model, tokenizer, limit=limit)
    except ValueError:  # no probe this tokenizer encodes, or not a causal model
        return _no_roles("roles_probes", names)
    labels = []
    for layer in range(model.cfg.n_layers):
        row = []
        for head in range(model.cfg.n_heads):
            masses = {c: float(r.mass[c][layer][head]) for c in cats}
            best = max(cats, key=lambda c: masses[c])
            row.append({"category": best, "mass": masses[best], "masses": masses})
        labels.append(row)
    mark_shown(labels, {c: r.baseline for c in cats})
    return {
        "measure": "sense-probes",
        "labels": labels,
        "names": names,
        "categories": cats,
        "baseline": r.baseline,
        "n_sentences": r.n_sentences,
        "example": r.example,
        "example_cue": r.example_cue,
    }


def _role_names(lang: str, cats: list[str]) -> dict:
    say = translator(lang, "page_learner")
    return {c: {"short": say(f"role_short_{c}"), "label": say(f"role_label_{c}")} for c in cats}


def _no_roles(key: str, names: dict) -> dict:
    return {
        "measure": "sense-probes",
        "labels": None,
        "names": names,
        "why_lang": {lang: translator(lang, "page_learner")(key) for lang in LANGS},
    }
