"""The notebook displays of the analysis results: activation patching, the logit lens, logit attribution,
the head detector, compare (one word in two sentences), a score's origin and heads switched off. Each
kind's blocks (qkv.presentation.text) and one line, in the words of the catalogue's area "displays"
(`say`); the head detector's kinds are named as `qkv heads` names them (area "interpret"). Every table
holds the top few (TOP) rows, the numbers as the result holds them, rounded.
"""

from __future__ import annotations

from qkv.analysis.head_scores import KINDS
from qkv.analysis.patch import LogitDiff
from qkv.apps.displays.runs import cut
from qkv.presentation.i18n import t

TOP = 8  # the rows of a top-k table
LENS_TOP = 3  # the tokens each row of the logit lens names


def num(x: float | None, digits: int = 3) -> str:
    """x rounded to `digits` decimals ("—" for none); never "-0.000"."""
    if x is None:
        return "—"
    s = f"{x:.{digits}f}"
    return s[1:] if s.startswith("-") and not s.strip("-0.") else s


# ------------------------------------------------------------------ activation patching


def patching_blocks(p, say) -> list:
    """What was patched, the two runs' metric, a caution when they barely differ, the strongest pieces."""
    blocks = [("title", patching_line(p, say)), ("p", say("patching_means"))]
    if isinstance(p.metric, LogitDiff):
        answer, wrong = p.words or (f"#{p.metric.answer}", f"#{p.metric.wrong}")  # patch_text keeps the words
        pos = p.metric.position % len(p.clean_ids)
        blocks.append(("p", say("patching_metric", answer=answer, wrong=wrong, pos=pos, tok=_patched_token(p, pos))))
    if p.gap_small:
        blocks.append(("p", say("patching_gap", gap=num(abs(p.clean - p.corrupted)))))
    share = p.normalized
    rows = []
    for layer, i, value in p.strongest(TOP):
        where = "—" if p.whole else str(i)
        token = _patched_token(p, i) if not (p.whole or p.by_head) else ""
        s = "—" if share is None else num(float(share.flatten()[layer * (1 if p.whole else p.values.shape[1]) + i]))
        rows.append([str(layer), where, token, num(value), s])
    across = "c_head" if p.by_head else "c_pos"
    head = [say("c_layer"), say(across), say("c_token"), say("c_metric"), say("c_share")]
    note = ("p", say("patching_top", n=len(rows), total=p.values.numel()))
    return [*blocks, ("table", head, rows, {0, 1, 3, 4}), note]


def _patched_token(p, i: int) -> str:
    """Position i's token: the clean one, and the corrupted one after a slash where they differ (ids without tokens)."""
    a, b = (p.tokens[0][i], p.tokens[1][i]) if p.tokens else (f"#{p.clean_ids[i]}", f"#{p.corrupted_ids[i]}")
    return a if a == b else f"{a}/{b}"


def patching_line(p, say) -> str:
    return say("patching_line", site=p.site, clean=num(p.clean), corrupted=num(p.corrupted),
               shape="×".join(str(n) for n in p.values.shape))  # fmt: skip


# ------------------------------------------------------------------ the logit lens (lens_top)


def _tok(row: dict) -> str:
    return row["token"] if row.get("token") is not None else f"#{row['id']}"


def lens_blocks(doc, say) -> list:
    final = _tok(doc["final"])
    rows = []
    for row in doc["layers"]:
        top = "  ".join(f"{_tok(r)} {num(r['p'])}" for r in row["top"][:LENS_TOP])
        rows.append([str(row["layer"]), row["name"], top, num(row["p_final"])])
    rows, more = cut(rows, say)
    head = [say("c_row"), say("c_stream"), say("c_top", k=min(LENS_TOP, doc["k"])), say("c_p_final", tok=final)]
    means = ("p", say("lens_means", final=final))
    return [("title", lens_line(doc, say)), means, ("table", head, rows, {0, 3}), *more]


def lens_line(doc, say) -> str:
    tokens = doc.get("tokens")
    tok = tokens[doc["position"]] if tokens else f"#{doc['ids'][doc['position']]}"
    final = doc["layers"][-1]["p_final"]
    return say("lens_line", pos=doc["position"], tok=tok, final=_tok(doc["final"]), p=num(final))


# ------------------------------------------------------------------ logit attribution


def attribution_blocks(a, say) -> list:
    terms = sorted(a.components.items(), key=lambda kv: -abs(kv[1]))
    rows = [[name, num(value)] for name, value in terms[:TOP]]
    blocks = [("title", attribution_line(a, say))]
    blocks.append(("p", say("attribution_means", n=len(terms), total=num(a.total), logit=num(a.logit), norm=a.norm)))
    note = ("p", say("attribution_top", n=len(rows), total=len(terms)))
    return [*blocks, ("table", [say("c_term"), say("c_value")], rows, {1}), note]


def attribution_line(a, say) -> str:
    tok = a.token_text if a.token_text is not None else f"#{a.token}"
    return say("attribution_line", tok=tok, pos=a.position, logit=num(a.logit))


# ------------------------------------------------------------------ the head detector


def heads_blocks(h, say) -> list:
    """Per kind: what it measures (qkv heads' words), the strongest head, its score, an even head's, the ratio."""
    interpret = lambda key: t(f"interpret.{key}", say.lang)  # noqa: E731
    rows = []
    for kind in KINDS:
        layer, head, best = h.best(kind)
        base = h.baselines[kind]
        ratio = f"{best / base:.1f}×" if base > 0 else "—"
        rows.append(
            [interpret(f"short_{kind}"), interpret(f"means_{kind}"), f"L{layer} H{head}", num(best), num(base), ratio]
        )
    cols = [say(k) for k in ("c_kind", "c_measures", "c_best", "c_score", "c_even", "c_ratio")]
    return [("title", heads_line(h, say)), ("p", say("heads_means")), ("table", cols, rows, {3, 4, 5})]


def heads_line(h, say) -> str:
    B, T = h.tokens.shape
    L, H = h.previous.shape
    return say("heads_line", n_layers=L, n_heads=H, B=B, T=T)


# ------------------------------------------------------------------ compare: one word in two sentences


def compare_blocks(doc, say) -> list:
    sentences = [
        ("p", say("compare_sentence", label=label, text=" ".join(doc[side]["tokens"]), pos=doc[side]["pos"]))
        for label, side in (("A", "a"), ("B", "b"))
    ]
    rows = [[s["label"], s["name"], num(s["cosine"]), num(s["cosine_pos"])] for s in doc["stages"]]
    rows, more = cut(rows, say)
    cols = [say("c_stage"), say("c_stream"), say("c_cosine"), say("c_cosine_pos")]
    blocks = [("title", compare_line(doc, say)), *sentences, ("p", say("compare_means"))]
    if doc["control"].get("why"):
        blocks.append(("p", say("compare_no_control")))
    return [*blocks, ("table", cols, rows, {2, 3}), *more]


def compare_line(doc, say) -> str:
    last = doc["stages"][-1]
    return say("compare_line", word=doc["word"], stage=last["label"], cosine=num(last["cosine"]))


# ------------------------------------------------------------------ origin: where a head's scores come from


def origin_blocks(doc, say) -> list:
    keys = sorted(doc["keys"], key=lambda k: -k["scaled"])
    rows = [[str(k["pos"]), k["token"], num(k["dot"]), num(k["scaled"])] for k in keys[:TOP]]
    means = ("p", say("origin_means", scale=num(doc["scale"]), d_head=doc["d_head"], x_name=doc["x_name"]))
    cols = [say("c_pos"), say("c_token"), say("c_dot"), say("c_scaled")]
    note = ("p", say("origin_top", n=len(rows), total=len(keys)))
    return [("title", origin_line(doc, say)), means, ("table", cols, rows, {0, 2, 3}), note]


def origin_line(doc, say) -> str:
    return say("origin_line", layer=doc["layer"], head=doc["head"], pos=doc["token"], tok=doc["query"]["token"])


# ------------------------------------------------------------------ ablate: heads switched off


def ablate_blocks(doc, say) -> list:
    """At each position shown: the most likely next token before and after, and the probability moved."""
    rows = []
    for at in doc["next"]:
        before = at["rows"][0]
        after = max(at["rows"], key=lambda r: r["after"])
        rows.append([str(at["pos"]), at["token"], f"{before['token']} {num(before['before'])}",
                     f"{after['token']} {num(after['after'])}", num(at["moved"])])  # fmt: skip
    rows, more = cut(rows, say, TOP)
    cols = [say(k) for k in ("c_pos", "c_token", "c_before", "c_after", "c_moved")]
    return [("title", ablate_line(doc, say)), ("p", say("ablate_means")), ("table", cols, rows, {0, 4}), *more]


def ablate_line(doc, say) -> str:
    heads = ", ".join(f"L{L} H{h}" for L, h in doc["heads"]) or "—"
    moved = max((at["moved"] for at in doc["next"]), default=0.0)
    return say("ablate_line", heads=heads, moved=num(moved))
