"""Lesson: cross-attention aligns words, measured on a zh→en translation model.

Every held-out pair of qkv's corpus (corpus.pairs("heldout"): frames the generator never trains on)
runs teacher-forced: the source is the Chinese words, the decoder reads <s> w0 .. w(n-1) of the gold
English. Query position j of decoder.blocks.L.cross_attn.hook_pattern is the row that WRITES w_j (its
input is w(j-1), or <s> at j = 0). For each English word with at least one gold link, the Chinese
word that row gives the most weight is the head's alignment; it is right when the corpus linked the
two words. Scored for every layer and head, for each layer's mean pattern, for the mean of all heads,
for an untrained model of the same shape (seeded), and against two baselines that read no attention:
the same relative position (the diagonal) and chance (a uniformly random source word). The row that
READS w_j (position j + 1) is scored too, for comparison.

Then the held-out Chinese is translated (greedy; beam search of BEAM on every BEAM_EVERY-th sentence,
as it decodes one sentence at a time) and scored with sacrebleu's corpus BLEU on the corpus's words.
The word-sense pairs show whether 苹果 / 小米 / 黑莓 come out in the right sense, and a swap of the
tails of the 小米 pairs (a food cue verb with a company tail, and back) tells whether the cue verb or
the tail decides between millet and xiaomi.
"""

from __future__ import annotations

import numpy as np
import torch

from qkv.core.decode import beam as search
from qkv.core.decode import translate as translation
from qkv.core.machine import threads
from qkv.core.text.corpus import lexicon as L
from qkv.core.text.corpus import pairs
from qkv.lessons.align.result import Result

NEEDS_MODEL = "translate"  # run() loads the bundled translation model, or the one --ckpt names
READS = ("encoder-decoder",)  # the model families (Family.design) it reads
BEAM = 4
BEAM_EVERY = (
    8  # beam search decodes one sentence at a time: it runs on every 8th held-out pair, to keep the lesson quick
)
KINDS = ("sense", "order", "drug", "job")
PUNCT = (",", ".")
LINKS = ("single", "phrase", "punct")  # a word linked to one Chinese word, to several (a phrase), punctuation
WORDS = tuple(L.AMBIGUOUS)  # 苹果, 小米, 黑莓
SENSES = ("food", "company")
SPLIT = "小米"  # the word whose English differs by sense (millet / xiaomi)


def english(info: dict, sense: str) -> str:
    """The English of an ambiguous word (an entry of the corpus's lexicon AMBIGUOUS) in `sense` of SENSES."""
    return {"food": info["en_food"], "company": info["en_company"]}[sense]


def cue_words() -> set[str]:
    """The first Chinese word of every cue phrase (吃了, 买了, 投资了, ...)."""
    phrases = [zh for info in L.AMBIGUOUS.values() for zh, _ in info["food_cues"]] + [zh for zh, _ in L.COMPANY_CUES]
    return {p.split()[0] for p in phrases}


def usable(tok, items) -> list:
    """The pairs whose words this model's vocabulary holds all of."""
    return [p for p in items if all(w in tok.ids for w in p.zh + p.en)]


def batch(tok, items, n_ctx: int):
    """src (B, S), src_mask (B, S), tgt_in (B, T) of the pairs, teacher-forced on the gold English."""
    src, mask, tgt_in, _ = translation.collate(translation.make_examples(tok, [(p.zh, p.en) for p in items], n_ctx))
    return src, mask, tgt_in


@torch.no_grad()
def cross_patterns(model, src, mask, tgt_in) -> np.ndarray:
    """Every decoder layer's cross-attention: (n_layers, B, n_heads, T_tgt, S) in float64."""
    names = [f"decoder.blocks.{layer}.cross_attn.hook_pattern" for layer in range(model.cfg.n_layers)]
    _, trace = model.run_with_trace(src, tgt_in, src_mask=mask, names=names)
    return np.stack([trace[name].double().numpy() for name in names])


def linked_words(items, shift: int = 0) -> dict:
    """The English words with a gold link, as flat arrays: pair b, the row of the pattern that scores
    it (its own index j, plus `shift`), the gold mask over the source words, the pair's kind, the kind
    of link (LINKS), j and the lengths."""
    b, rows, j_, kinds, links, n_src, n_tgt, en = [], [], [], [], [], [], [], []
    S = max(len(p.zh) for p in items)
    gold = []
    for n, p in enumerate(items):
        for j in range(len(p.en)):
            linked = p.aligned("en", j)
            if linked:
                b.append(n), rows.append(j + shift), j_.append(j), kinds.append(p.kind)
                links.append("punct" if p.en[j] in PUNCT else "single" if len(linked) == 1 else "phrase")
                n_src.append(len(p.zh)), n_tgt.append(len(p.en)), en.append(p.en[j])
                gold.append(np.isin(np.arange(S), list(linked)))
    return {
        "b": np.array(b),
        "row": np.array(rows),
        "j": np.array(j_),
        "kind": np.array(kinds),
        "link": np.array(links),
        "gold": np.array(gold),
        "n_src": np.array(n_src),
        "n_tgt": np.array(n_tgt),
        "en": np.array(en),
    }


def picks(P: np.ndarray, words: dict, mask: np.ndarray) -> np.ndarray:
    """P (B, ..., T, S) -> (N, ...): the source position each linked word's row gives the most weight."""
    N = len(words["b"])
    rows = P[words["b"], ..., words["row"], :]  # (N, ..., S)
    real = mask[words["b"]].reshape((N,) + (1,) * (rows.ndim - 2) + (-1,)) > 0
    return np.where(real, rows, -np.inf).argmax(-1)  # padding is never picked


def hits(P: np.ndarray, words: dict, mask: np.ndarray) -> np.ndarray:
    """P (B, ..., T, S) -> (N, ...) bool: is the source word each linked word's row reads most a gold one?"""
    pick = picks(P, words, mask)
    N = len(pick)
    return words["gold"][np.arange(N).reshape((N,) + (1,) * (pick.ndim - 1)), pick]


def _pattern_hits(A: np.ndarray, words: dict, mask: np.ndarray) -> dict:
    """Hits of every head (N, n_layers, n_heads), of each layer's mean (N, n_layers) and of the mean of all
    heads (N,)."""
    per_head = hits(np.moveaxis(A, 0, 1), words, mask)  # A (L, B, H, T, S) -> (B, L, H, T, S)
    per_layer = hits(np.moveaxis(A.mean(2), 0, 1), words, mask)
    mean = hits(A.mean((0, 2)), words, mask)
    return {"head": per_head, "layer": per_layer, "mean": mean}


def baselines(words: dict) -> dict:
    """Accuracy without attention: the diagonal (source word at the same relative position) and chance."""
    i = np.rint(words["j"] * (words["n_src"] - 1) / np.maximum(words["n_tgt"] - 1, 1)).astype(int)
    diagonal = words["gold"][np.arange(len(i)), i]
    chance = words["gold"].sum(-1) / words["n_src"]
    return {"diagonal": diagonal, "chance": chance}


def untrained(model, seed: int):
    """A fresh model of the same config (seeded, without touching the global random state)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return type(model)(model.cfg).eval()


def alignment(model, fresh, tok, items) -> dict:
    """Alignment accuracy of every head, layer mean and mean of heads, trained and untrained, and per kind."""
    src, mask, tgt_in = batch(tok, items, model.cfg.n_ctx)
    mask = mask.numpy()
    words, reads = linked_words(items), linked_words(items, shift=1)
    A = cross_patterns(model, src, torch.from_numpy(mask), tgt_in)
    got = _pattern_hits(A, words, mask)
    raw = _pattern_hits(cross_patterns(fresh, src, torch.from_numpy(mask), tgt_in), words, mask)
    base = baselines(words)
    heads = got["head"].mean(0)  # (n_layers, n_heads)
    L_, H_ = np.unravel_index(int(heads.argmax()), heads.shape)
    raw_heads = raw["head"].mean(0)
    reads_heads = hits(np.moveaxis(A, 0, 1), reads, mask).mean(0)
    rL, rH = np.unravel_index(int(reads_heads.argmax()), reads_heads.shape)
    n = {
        "n_pairs": len(items),
        "n_words": len(words["b"]),
        "best": [int(L_), int(H_)],
        "best_acc": float(heads[L_, H_]),
        "acc_heads": heads.tolist(),
        "acc_layers": got["layer"].mean(0).tolist(),
        "acc_layer_heads": heads.mean(1).tolist(),
        "acc_mean": float(got["mean"].mean()),
        "untrained_heads": raw_heads.tolist(),
        "untrained_best_acc": float(raw_heads.max()),
        "untrained_mean": float(raw["mean"].mean()),
        "diagonal": float(base["diagonal"].mean()),
        "chance": float(base["chance"].mean()),
        "reads_best": [int(rL), int(rH)],
        "reads_best_acc": float(reads_heads[rL, rH]),
    }
    best = got["head"][:, L_, H_]
    for key, column, names in (("kinds", "kind", KINDS), ("links", "link", LINKS)):
        n[key] = {}
        for name in names:
            k = words[column] == name
            if k.any():
                n[key][name] = {
                    "n": int(k.sum()),
                    "best": float(best[k].mean()),
                    "mean": float(got["mean"][k].mean()),
                    "untrained": float(raw["head"][k].mean(0).max()),
                    "diagonal": float(base["diagonal"][k].mean()),
                    "chance": float(base["chance"][k].mean()),
                }
    # where the best head's row writing a comma looks when it misses the Chinese comma: past it, at what comes next?
    missed = (words["en"] == ",") & ~best
    ahead = picks(A[L_, :, H_], words, mask) > np.where(words["gold"], np.arange(words["gold"].shape[1]), -1).max(-1)
    n.update(
        comma_missed=int(missed.sum()), comma_ahead=int((ahead & missed).sum()), commas=int((words["en"] == ",").sum())
    )
    n["example"] = example(A, items, int(L_), int(H_))
    return n


def example(A: np.ndarray, items, layer: int, head: int) -> dict:
    """The figure's pair: the first 小米 food pair with a modifier clause and a time (it reorders twice)."""
    k = next(
        (
            k
            for k, p in enumerate(items)
            if dict(p.tags).get("word") == SPLIT
            and dict(p.tags).get("modifier")
            and dict(p.tags).get("time")
            and dict(p.tags).get("sense") == "food"
        ),
        0,
    )
    p = items[k]
    S, T = len(p.zh), len(p.en)
    return {
        "zh": list(p.zh),
        "en": list(p.en),
        "links": [list(x) for x in p.links],
        "layer": layer,
        "head": head,
        "head_pattern": A[layer, k, head, :T, :S].tolist(),
        "mean_pattern": A[:, k, :, :T, :S].mean((0, 1)).tolist(),
    }


@torch.no_grad()
def translate_all(model, tok, sources, beam: int = 1) -> list[list[str]]:
    """The model's translations (as words) of source word lists: greedy as one padded batch, or beam search
    one by one."""
    ids = [translation.encode_words(tok, s) for s in sources]
    if beam == 1:
        src, mask, _, _ = translation.collate(
            [translation.Example(tuple(i), (search.BOS,), (search.EOS,)) for i in ids]
        )
        hyps = search.greedy(model, src, mask, max_len=model.cfg.n_ctx)  # src, mask (B, S)
    else:
        hyps = [search.beam_search(model, torch.tensor([i]), beam, model.cfg.n_ctx)[0] for i in ids]
    return [translation.decode_target(tok, h.ids).split() for h in hyps]


def bleu(hypotheses, references) -> float:
    try:
        import sacrebleu
    except ImportError:
        raise ValueError(
            "the align lesson scores translations with sacrebleu, which is not installed: pip install sacrebleu"
        ) from None
    # the corpus's words are already the tokens: no further tokenizing (and no warning that it is tokenized)
    return float(
        sacrebleu.corpus_bleu(
            [" ".join(h) for h in hypotheses], [[" ".join(r) for r in references]], tokenize="none", force=True
        ).score
    )


def senses(items, greedy_out) -> dict:
    """Per ambiguous word and sense: the pairs, how often its English word is the sense's, the tail right, all right."""
    out = {}
    for p, hyp in zip(items, greedy_out):
        tags = dict(p.tags)
        if p.kind != "sense":
            continue
        info = L.AMBIGUOUS[tags["word"]]
        other_sense = "company" if tags["sense"] == "food" else "food"
        want, other = english(info, tags["sense"]), english(info, other_sense)
        tail = _tail(p.en)
        r = out.setdefault(tags["word"], {}).setdefault(
            tags["sense"], {"en": want, "n": 0, "word": 0, "tail": 0, "exact": 0}
        )
        r["n"] += 1
        r["word"] += int(want in hyp and (want == other or other not in hyp))
        r["tail"] += int(_tail(hyp) == tail)
        r["exact"] += int(tuple(hyp) == p.en)
    return out


def tails(sense: str) -> set[tuple[str, ...]]:
    """The English tails (the clause after ", and") the corpus writes for any ambiguous word in `sense`, with
    the full stop."""
    table = [t for info in L.AMBIGUOUS.values() for t in info["food_tails"]] if sense == "food" else L.COMPANY_TAILS
    return {tuple(en.split()) + (".",) for _, en in table}


def _tail(en) -> tuple[str, ...]:
    """The words after the last "and" (the tail clause and the full stop)."""
    en = tuple(en)
    return en[len(en) - en[::-1].index("and") :] if "and" in en else ()


def swapped(items) -> list[tuple[str, list[str], tuple[str, ...]]]:
    """The 小米 pairs with the tail of their twin of the other sense (the same subject, time and modifier):
    (sense of the cue verb, zh words, the English of the tail they now end with)."""
    twins: dict[tuple, dict] = {}
    for p in items:
        tags = dict(p.tags)
        if p.kind == "sense" and tags["word"] == SPLIT:
            twins.setdefault((tags["subject"], tags["time"], tags["modifier"]), {})[tags["sense"]] = p
    out = []
    for twin in twins.values():
        if len(twin) < 2:
            continue
        for sense, other in (("food", "company"), ("company", "food")):
            a, b = twin[sense], twin[other]
            out.append((sense, list(a.zh[: a.zh.index("，") + 1] + b.zh[b.zh.index("，") + 1 :]), _tail(b.en)))
    return out


def swap_test(model, tok, items, split_en: dict) -> dict:
    """Translate the swapped 小米 sentences: does the English word follow the cue verb or the tail, and is
    the tail translated as written (faithful) or replaced by a tail of the verb's sense?"""
    swaps = swapped(items)
    out = translate_all(model, tok, [zh for _, zh, _ in swaps]) if swaps else []
    r = {"n": len(swaps), "cue": 0, "tail": 0, "neither": 0, "faithful": 0, "verb_tail": 0}
    for (sense, _, tail), hyp in zip(swaps, out):
        other = "company" if sense == "food" else "food"
        word = [s for s in (sense, other) if split_en[s] in hyp]
        r["cue" if word == [sense] else "tail" if word == [other] else "neither"] += 1
        r["faithful"] += int(_tail(hyp) == tail)
        r["verb_tail"] += int(_tail(hyp) in tails(sense))
    k = next(
        (k for k, (_, _, tail) in enumerate(swaps) if _tail(out[k]) != tail), 0
    )  # one that is not faithful, if any
    r["example_zh"], r["example_en"] = (swaps[k][1], out[k]) if swaps else ([], [])
    return r


def split_rows(model, tok, items) -> dict:
    """What the decoder reads when it writes millet / xiaomi (teacher-forced on the gold English): the mean
    over all heads of the cross-attention row, summed over the word 小米, its cue verb, the tail and the rest."""
    info = L.AMBIGUOUS[SPLIT]
    cues = cue_words()
    chosen = [p for p in items if p.kind == "sense" and dict(p.tags)["word"] == SPLIT]
    src, mask, tgt_in = batch(tok, chosen, model.cfg.n_ctx)
    A = cross_patterns(model, src, mask, tgt_in)  # (L, B, H, T, S)
    parts = {s: {"word": [], "cue": [], "tail": [], "cue_head_max": []} for s in SENSES}
    examples = {}
    for k, p in enumerate(chosen):
        sense = dict(p.tags)["sense"]
        j = p.en.index(english(info, sense))
        rows = A[:, k, :, j, : len(p.zh)]  # (L, H, S): every head's row writing the word
        mean = rows.mean((0, 1))  # (S,)
        w, c = p.zh.index(SPLIT), next(i for i, z in enumerate(p.zh) if z in cues)
        tail = list(range(p.zh.index("，") + 1, len(p.zh) - 1))
        r = parts[sense]
        r["word"].append(mean[w]), r["cue"].append(mean[c]), r["tail"].append(mean[tail].sum())
        r["cue_head_max"].append(rows[..., c].max())
        if sense not in examples:
            L_, H_ = np.unravel_index(int(rows[..., c].argmax()), rows.shape[:2])
            examples[sense] = {
                "zh": list(p.zh),
                "en": list(p.en),
                "row": j,
                "written": p.en[j],
                "cue": p.zh[c],
                "mean": mean.tolist(),
                "cue_head": [int(L_), int(H_)],
                "cue_head_row": rows[L_, H_].tolist(),
            }
    return {"parts": {s: {k: float(np.mean(v)) for k, v in r.items()} for s, r in parts.items()}, "examples": examples}


def measure(model, tokenizer, seed: int = 0) -> Result:
    """Alignment accuracy, BLEU (greedy and beam), the senses, and the 小米 swap, on the held-out pairs.
    (The helpers above count into plain dicts, by the names of Result's fields; they become the result here.)"""
    with threads.fixed(1):  # a small model runs fastest on one thread, and the sums keep one order on any machine
        return Result.from_numbers(_measure(model, tokenizer, seed))


def _measure(model, tokenizer, seed: int) -> dict:
    items = usable(tokenizer, pairs("heldout", seed=seed))
    if not any(p.kind == "sense" and dict(p.tags)["word"] == SPLIT for p in items):
        raise ValueError(
            f"this translation model's vocabulary lacks the words of the held-out pairs of qkv's corpus "
            f"(those with {SPLIT} at least)"
        )
    sources, refs = [list(p.zh) for p in items], [list(p.en) for p in items]
    greedy_out = translate_all(model, tokenizer, sources)
    cjk = sum(any("\u4e00" <= ch <= "\u9fff" for ch in w) for h in greedy_out for w in h)
    if cjk > 0.5 * max(1, sum(map(len, greedy_out))):
        raise ValueError("this model writes Chinese: the align lesson reads a zh→en translation model")
    n = alignment(model, untrained(model, seed), tokenizer, items)
    some = slice(None, None, BEAM_EVERY)
    beam_out = translate_all(model, tokenizer, sources[some], BEAM)
    exact = lambda hyps, refs: float(np.mean([h == r for h, r in zip(hyps, refs)]))
    n.update(
        bleu_greedy=bleu(greedy_out, refs),
        exact_greedy=exact(greedy_out, refs),
        beam=BEAM,
        beam_every=BEAM_EVERY,
        n_beam=len(beam_out),
        bleu_beam=bleu(beam_out, refs[some]),
        exact_beam=exact(beam_out, refs[some]),
        bleu_greedy_some=bleu(greedy_out[some], refs[some]),
        exact_greedy_some=exact(greedy_out[some], refs[some]),
        n_layers=model.cfg.n_layers,
        n_heads=model.cfg.n_heads,
        d_model=model.cfg.d_model,
        senses=senses(items, greedy_out),
        split_word=SPLIT,
        split_en={s: english(L.AMBIGUOUS[SPLIT], s) for s in SENSES},
    )
    n["swap"] = swap_test(model, tokenizer, items, n["split_en"])
    n.update(split_rows(model, tokenizer, items))
    return n
