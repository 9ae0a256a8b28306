"""What a translation model reads: for each target word, which source words its cross-attention weighs.

    doc = explain_translation(model, tokenizer, "我 投资了 苹果 ，")     # a JSON-ready dict
    qkv.presentation.explanation.Explanation(doc).to_text("zh")         # shown

The source is translated first (greedy: the most likely word at every step, core.search.greedy),
unless a `target` translation is given; then the model runs once more, traced and teacher-forced, on
(source, <s> + translation). Decoder position i reads the target words before it (<s> w1 … w_i) and
writes w_{i+1}; its cross-attention row is the one that decides that word, so each row is named by
the word it writes ("written"), the last one by </s>. A cross-attention head of decoder layer L:

    dots[i, j]    = q_i·k_j     q from the decoder's stream at step i, k from source word j (hook_dots)
    pattern[i, j] = A = softmax_j(q_i·k_j / √d_head)                                       (hook_pattern)
    z_i           = Σ_j A_ij v_j, v the values of the *source* words: z lies in their convex hull

`layer` defaults to the last decoder layer; `head` to that layer's sharpest cross-attention head
(the smallest mean entropy of its rows: the head that reads the fewest source words per target
word), and "head_choice" says which rule picked it. `token` is the target step followed step by
step (default: the last word written that is not punctuation; negative counts from the end).

JSON (`explain_translation`), format "qkv-explain" version 1, kind "translation":
    lang         added by qkv.presentation.explanation
    text         the source as read (re-spaced into known words);  translation: the target words
    translated   true: the model's own (greedy) translation; false: the `target` given
    finished     whether the translation ended with </s> (false: cut at n_ctx)
    source       {tokens, ids} the source words
    target       {tokens, ids} what the decoder reads (<s> w1 … wn); {written, written_ids} what each
                 step writes (w1 … wn </s>)
    layer, head, head_choice ("given" | "sharpest"), token (a target step), query (its written word),
    query_reads (the word it reads last)
    model        {n_layers, n_encoder_layers, n_heads, d_model, d_head, n_ctx, norm, pos, arch, design,
                 has_lm_head, generates, translates}
    heads        [{head, entropy_bits}] each cross-attention head of `layer`: the mean entropy of its rows
    reads        one per target step: {pos, token (written), reads, top_pos, top_token, top_weight (this
                 head), mean_top_pos, mean_top_token, mean_top_weight (heads averaged),
                 rows: [{pos, token, dot, weight}] over the source words (this head)}
    attention, z, residual   as in kind "explain" (mode "head") for step `token`, over the source keys;
                 z also has hull {inside, distance}: z against the hull of the source values (a linear
                 program); residual: x is the stream entering cross-attention (resid_mid), attn_out the
                 cross-attention's output, resid_mid the stream after it (resid_mid_cross)
    next         {position, top: [{rank, id, token, prob}], actual: {id, token, prob, rank}} at step `token`:
                 the model's most likely words there and the one the translation has
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import torch

from qkv.analysis.explain import model_fields, next_rows, step_detail
from qkv.core.decode.beam import BOS, EOS, greedy
from qkv.core.decode.translate import SPECIALS, check_language, decode_target, encode_source, is_translation_tokenizer
from qkv.core.io.document import header
from qkv.core.io.refusal import Refusal, family_title, phrase
from qkv.core.model import evaluating
from qkv.core.see.hull import convex_weights
from qkv.core.see.indices import TextError, check_index, check_layer_head

HULL_TOL = 1e-5  # relative: z and the values are float32, as in qkv.core.see.invariants
# training pairs searched for a gold alignment (the bundled model's; a longer list starts with a shorter)
CORPUS_PAIRS = 20_000


@dataclass(frozen=True)
class Reading:
    """A source and its translation as token ids: what the traced, teacher-forced pass runs on."""

    text: str  # the source as read: its words joined by single spaces
    src: list[int]  # the source words
    tgt_in: list[int]  # <s> w1 … wn: what the decoder reads
    written: list[int]  # w1 … wn </s>: what each decoder step writes (same length as tgt_in)
    finished: bool  # the translation ended with </s>
    translated: bool  # the model's own translation (False: a given target)


def check_translation_model(model, tokenizer) -> None:
    """A one-line ValueError unless this is an encoder-decoder with a translation tokenizer."""
    if not model.family.translates:
        raise Refusal.of("errors.not_translation_model", title=family_title(model.family))
    if not is_translation_tokenizer(tokenizer):
        raise Refusal.of("errors.not_translation_tokenizer")


def _words(tokenizer, text, what: str, lang: str | None = None) -> list[int]:
    if not isinstance(text, str):
        raise TextError.of("errors.source_type" if what == "source" else "errors.target_type", type=type(text).__name__)
    try:
        check_language(text, lang, what)  # a zh→en model is not shown reading English
        return encode_source(tokenizer, text, what)
    except ValueError as e:  # unknown words, empty text: one line that names them
        raise TextError.recast(e) from None


@torch.no_grad()
def read(model, tokenizer, text: str, target: str | None = None) -> Reading:
    """Encode the source, translate it greedily (or take `target`), and line up what each step reads and writes."""
    check_translation_model(model, tokenizer)
    n_ctx = model.cfg.n_ctx
    langs = getattr(model, "languages", None) or (None, None)
    src = _words(tokenizer, text, "source", langs[0])
    if len(src) > n_ctx:
        raise TextError.of("errors.source_too_long", n=len(src), n_ctx=n_ctx)
    if target is None:
        with evaluating(model):
            ids = greedy(model, torch.tensor([src], device=next(model.parameters()).device), max_len=n_ctx)[0].ids
        finished = bool(ids) and ids[-1] == EOS
        words = ids[:-1] if finished else ids[: n_ctx - 1]
        written = ids[: len(words) + 1]
    else:
        words = _words(tokenizer, target, "target", langs[1])
        if len(words) + 1 > n_ctx:
            raise TextError.of("errors.target_too_long", n=len(words), n_ctx=n_ctx)
        written, finished = [*words, EOS], True
    return Reading(
        " ".join(tokenizer.tokens[i] for i in src), src, [BOS, *words], list(written), finished, target is None
    )


def trace(model, reading: Reading, names=None):
    """The teacher-forced trace of (source, <s> + translation), in eval mode."""
    device = next(model.parameters()).device
    with evaluating(model):
        with torch.no_grad():
            _, tr = model.run_with_trace(
                torch.tensor([reading.src], device=device), torch.tensor([reading.tgt_in], device=device), names=names
            )
    return tr


def default_step(tokenizer, written: list[int]) -> int:
    """The target step shown when none is asked for: the last that writes a word (not </s>, not punctuation)."""
    words = [n for n, i in enumerate(written) if i >= len(SPECIALS) and any(c.isalnum() for c in tokenizer.tokens[i])]
    return words[-1] if words else 0


def entropy_bits(A: torch.Tensor) -> torch.Tensor:
    """The entropy of each row of A (…, n) in bits; 0·log 0 = 0."""
    A = A.double()
    return -(A * torch.where(A > 0, A.log2(), torch.zeros_like(A))).sum(-1)


def sharpest_head(pattern: torch.Tensor) -> int:
    """pattern (n_heads, T_target, T_source) -> the head whose rows have the smallest mean entropy."""
    return int(entropy_bits(pattern).mean(-1).argmin())


def cross_name(layer: int, hook: str) -> str:
    return f"decoder.blocks.{layer}.cross_attn.{hook}"


@torch.no_grad()
def explain_translation(
    model,
    tokenizer,
    text: str,
    layer: int | None = None,
    head: int | None = None,
    token: int | None = None,
    top: int = 5,
    target: str | None = None,
) -> dict:
    """What each target word of `text`'s translation reads in the source (see the module docstring)."""
    cfg = model.cfg
    check_translation_model(model, tokenizer)
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise Refusal.of("errors.top_type", top=repr(top))
    layer, head = check_layer_head(cfg, cfg.n_layers - 1 if layer is None else layer, head, "decoder")
    r = read(model, tokenizer, text, target)
    T = len(r.tgt_in)
    pos = check_index(
        default_step(tokenizer, r.written) if token is None else token,
        T,
        "token",
        phrase("errors.unit_steps", n=T),
    )
    tr = trace(model, r, _explained(layer).__contains__)
    pattern = tr[cross_name(layer, "hook_pattern")][0]  # (n_heads, T_target, T_source)
    ent = entropy_bits(pattern).mean(-1)  # (n_heads,)
    choice = "given" if head is not None else "sharpest"
    head = sharpest_head(pattern) if head is None else head

    src = [tokenizer.display(i) for i in r.src]
    tgt = [tokenizer.display(i) for i in r.tgt_in]
    written = [tokenizer.display(i) for i in r.written]
    data = {
        **header("translation"),
        "text": r.text,
        "translation": decode_target(tokenizer, r.tgt_in),
        "translated": r.translated,
        "finished": r.finished,
        "source": {"tokens": src, "ids": r.src},
        "target": {"tokens": tgt, "ids": r.tgt_in, "written": written, "written_ids": r.written},
        "layer": layer,
        "head": head,
        "head_choice": choice,
        "token": pos,
        "query": written[pos],
        "query_reads": tgt[pos],
        "model": model_fields(
            model, ("n_layers", "n_encoder_layers", "n_heads", "d_model", "d_head", "n_ctx", "norm", "pos", "arch")
        ),
        "heads": [{"head": h, "entropy_bits": float(e)} for h, e in enumerate(ent.tolist())],
        "max_entropy_bits": math.log2(len(r.src)),
        "reads": _reads(tr, layer, head, src, written, tgt),
    }
    data.update(_step(tr, cfg, layer, head, pos, src, top))
    data["next"] = _next(tr, tokenizer, r.written, pos, top)
    return data


def _explained(layer: int) -> set[str]:
    """The names explain_translation reads: decoder layer `layer`'s cross-attention, the stream around it, probs."""
    b = f"decoder.blocks.{layer}."
    cross = ("hook_dots", "hook_attn_scores", "hook_pattern", "hook_v", "hook_z", "hook_result")
    return {
        "probs",
        *(cross_name(layer, h) for h in cross),
        b + "hook_resid_mid",
        b + "hook_cross_attn_out",
        b + "hook_resid_mid_cross",
    }


def _reads(tr, L, H, src, written, tgt) -> list[dict]:
    """For each target step: the source words its cross-attention (head H, and all heads averaged) weighs."""
    dots = tr[cross_name(L, "hook_dots")][0, H]  # (T_target, T_source): q·k
    A = tr[cross_name(L, "hook_pattern")][0]  # (n_heads, T_target, T_source)
    mean = A.double().mean(0)  # (T_target, T_source): heads averaged
    out = []
    for i in range(A.shape[1]):
        w, m = A[H, i], mean[i]
        j, jm = int(w.argmax()), int(m.argmax())
        out.append(
            {
                "pos": i,
                "token": written[i],
                "reads": tgt[i],
                "top_pos": j,
                "top_token": src[j],
                "top_weight": float(w[j]),
                "mean_top_pos": jm,
                "mean_top_token": src[jm],
                "mean_top_weight": float(m[jm]),
                "rows": [
                    {"pos": k, "token": src[k], "dot": d, "weight": a}
                    for k, (d, a) in enumerate(zip(dots[i].tolist(), w.tolist()))
                ],
            }
        )
    return out


def _step(tr, cfg, L, H, pos, src, top) -> dict:
    """Steps 1–3 for target step `pos` and cross-attention head H: the weights over the source words,
    the mix of their values (and z against their hull), the update of the decoder's stream."""
    b = f"decoder.blocks.{L}."
    v = tr[cross_name(L, "hook_v")][0, :, H]  # (T_source, d_head): the source words' values
    z = tr[cross_name(L, "hook_z")][0, pos, H]  # (d_head,)
    detail = step_detail(
        cfg,
        src,
        top,
        dots=tr[cross_name(L, "hook_dots")][0, H, pos],
        scaled=tr[cross_name(L, "hook_attn_scores")][0, H, pos],
        weight=tr[cross_name(L, "hook_pattern")][0, H, pos],
        v=v,
        z=z,
        head_out=tr[cross_name(L, "hook_result")][0, pos, H],
        x=tr[b + "hook_resid_mid"][0, pos],
        attn_out=tr[b + "hook_cross_attn_out"][0, pos],
        resid_mid=tr[b + "hook_resid_mid_cross"][0, pos],
    )
    hull = convex_weights(z.double().cpu().numpy(), v.double().cpu().numpy(), tol=HULL_TOL)  # z is float32
    detail["z"]["hull"] = {"inside": bool(hull.inside), "distance": float(hull.distance)}
    return detail


def _next(tr, tokenizer, written, pos, top) -> dict:
    """The most likely words at step `pos`, and the probability and rank of the one the translation has."""
    return {"position": pos, **next_rows(tr["probs"][0, pos], tokenizer, top, written[pos])}


@lru_cache(maxsize=1)  # one index, ~60 MB at CORPUS_PAIRS (the only size qkv asks for): a translation model's pages
def _corpus_index(n_sentences: int) -> dict:
    from qkv.core.text.corpus import pairs

    index = {}
    for split in ("heldout", "train"):  # train last: its pairs win a tie
        for p in pairs(split, n_sentences=n_sentences):
            index[p.zh] = (p, "zh")
            index[p.en] = (p, "en")
    return index


def gold_alignment(source: list[str], written: list[str], n_sentences: int = CORPUS_PAIRS) -> tuple[list | None, str]:
    """(cells, why): the corpus's gold links as (target step, source word) cells, when `source` is a
    corpus sentence (a training pair of the default seed, or a held-out one) and `written` (the words
    each step writes, </s> last) is exactly its counterpart; else None and why: "no_pair" (not a corpus
    sentence) or "differs" (the translation is not the corpus's). why is "gold" with cells."""
    found = _corpus_index(n_sentences).get(tuple(source))
    if found is None:
        return None, "no_pair"
    pair, lang = found
    if tuple(written[:-1]) != (pair.en if lang == "zh" else pair.zh):
        return None, "differs"
    return sorted((e, z) if lang == "zh" else (z, e) for z, e in pair.links), "gold"
