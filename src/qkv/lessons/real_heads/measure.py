"""Lesson: where each of a real encoder's heads looks (all-MiniLM-L6-v2: 6 layers × 12 heads).

For SENTENCES (varied English, many with a word that comes back) and every query position i whose
neighbours i − 1 and i + 1 are both words (not [CLS] or [SEP]), each head's attention weight is added
up on six kinds of key, all different positions:

    cls       position 0, [CLS]
    sep       the last position, [SEP]
    previous  i − 1
    next      i + 1
    self      i
    same      every other position j (|j − i| ≥ 2, not [CLS] or [SEP]) holding the same token id as i:
              the same word (or word piece) again; averaged only over the queries whose token comes back

and averaged over the queries (mass[c][layer][head]). A head "specialises" when one kind gets more
than THRESHOLD of its weight. A head spreading its weight evenly over the T tokens would give each
single position 1/T: the uniform baseline (its mean over the queries).
"""

from __future__ import annotations

import numpy as np
import torch

from qkv.lessons.common.real import model_name
from qkv.lessons.real_heads.result import Best, Result, Specialised

NEEDS_MODEL = "minilm"  # run() loads MiniLM, or the BERT-family encoder --ckpt names
READS = ("encoder",)  # the model families (Family.design) it reads
CATEGORIES = ("cls", "sep", "previous", "next", "same", "self")
THRESHOLD = 0.5
EXAMPLE = "Bees carry pollen from flower to flower."  # one of SENTENCES, quoted by the text

SENTENCES = (
    "The cat chased the dog and the dog chased the cat.",
    "She said that she would call her sister after she finished work.",
    "A red car passed a blue car on the narrow road.",
    "The teacher asked the students to read the book before the test.",
    "My friend bought a new phone because his old phone stopped working.",
    "Rain fell all night, and by morning the river had flooded the village.",
    "We walked to the station, but the train had already left the station.",
    "The committee postponed the decision until the next meeting.",
    "Water boils at a lower temperature high in the mountains.",
    "He wrote a letter to his mother and posted the letter on Monday.",
    "The museum displays paintings, sculptures and ancient coins.",
    "Every morning the baker bakes bread, and every evening he sells the bread.",
    "Scientists measured the temperature of the ocean at different depths.",
    "The children played football in the park until it got dark.",
    "If you heat ice, the ice melts into water.",
    "The old man planted a tree that his grandchildren still climb.",
    "Our neighbours adopted a puppy, and the puppy barks at every bird.",
    "The pilot announced that the plane would land in twenty minutes.",
    "Reading is easier when the room is quiet and the light is good.",
    "The company hired a new manager to reorganise the sales team.",
    "A small boat drifted across the lake toward the far shore.",
    "The doctor told the patient to rest and drink plenty of water.",
    "She opened the window, then closed the window when the wind grew cold.",
    "Tokenization splits unfamiliar words into smaller pieces.",
    "The orchestra rehearsed the symphony twice before the concert.",
    "Bees carry pollen from flower to flower.",
    "The library lends books, films and music to anyone with a card.",
    "When the bell rang, the students left the classroom quickly.",
    "He forgot his umbrella, so he got wet walking home in the rain.",
    "The photographer waited hours for the perfect light over the mountains.",
)


def key_sets(ids: list[int]) -> list[tuple[int, dict[str, list[int]]]]:
    """(query position, category -> key positions) for every query of one sentence ([CLS] ... [SEP]);
    "same" is left out where the query's token does not come back."""
    T = len(ids)
    out = []
    for i in range(2, T - 2):  # both neighbours are words
        keys = {"cls": [0], "sep": [T - 1], "previous": [i - 1], "next": [i + 1], "self": [i]}
        same = [j for j in range(1, T - 1) if abs(j - i) >= 2 and ids[j] == ids[i]]
        if same:
            keys["same"] = same
        out.append((i, keys))
    return out


@torch.no_grad()
def attention_mass(model, id_lists: list[list[int]], pad_id: int = 0) -> dict:
    """mass[c]: (n_layers, n_heads), the mean weight per category; the query counts; the uniform baseline."""
    from qkv.core.model.encoder import pad_batch

    cfg = model.cfg
    batch, mask = pad_batch(id_lists, pad_id)  # (N, T_max) each: padding keys get no weight
    _, trace = model.run_with_trace(batch, names=lambda name: name.endswith("hook_pattern"), attention_mask=mask)
    total = {c: np.zeros((cfg.n_layers, cfg.n_heads)) for c in CATEGORIES}
    count = dict.fromkeys(CATEGORIES, 0)
    inverse_T = []
    for b, ids in enumerate(id_lists):
        queries = key_sets(ids)
        for _, keys in queries:
            for c in keys:
                count[c] += 1
            inverse_T.append(1.0 / len(ids))
        for layer in range(cfg.n_layers):
            A = trace["pattern", layer][b].double().numpy()  # (n_heads, T_max, T_max)
            for i, keys in queries:
                for c, js in keys.items():
                    total[c][layer] += A[:, i, js].sum(-1)  # (n_heads,)
    if not count["cls"]:
        raise ValueError("no sentence has a query with words on both sides")
    mass = {c: total[c] / max(count[c], 1) for c in CATEGORIES}
    return {"mass": mass, "queries": count, "baseline": float(np.mean(inverse_T))}


def measure(model, tokenizer, seed: int = 0) -> Result:
    """Every head's mean attention mass per category, and the heads that put more than THRESHOLD on one."""
    ids = [tokenizer.encode(s) for s in SENTENCES]
    m = attention_mass(model, ids, getattr(tokenizer, "pad_id", 0))
    mass = m["mass"]
    specialised = []
    for c in CATEGORIES:
        found = [(float(mass[c][L, H]), int(L), int(H)) for L, H in zip(*np.nonzero(mass[c] > THRESHOLD))]
        specialised += [Specialised(category=c, layer=L, head=H, mass=v) for v, L, H in sorted(found, reverse=True)]
    best = {}
    for c in CATEGORIES:
        L, H = np.unravel_index(int(np.argmax(mass[c])), mass[c].shape)
        best[c] = Best(layer=int(L), head=int(H), mass=float(mass[c][L, H]))
    return Result(
        model_name=model_name(model),
        n_layers=model.cfg.n_layers,
        n_heads=model.cfg.n_heads,
        sentences=list(SENTENCES),
        n_sentences=len(SENTENCES),
        example=EXAMPLE,
        categories=list(CATEGORIES),
        threshold=THRESHOLD,
        baseline=m["baseline"],
        queries=m["queries"],
        mass={c: mass[c].tolist() for c in CATEGORIES},
        specialised=specialised,
        n_specialised={c: sum(s.category == c for s in specialised) for c in CATEGORIES},
        n_specialised_heads=len({(s.layer, s.head) for s in specialised}),
        cls_layers=sorted({s.layer for s in specialised if s.category == "cls"}),
        best=best,
    )
