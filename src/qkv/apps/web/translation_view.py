"""Everything the web page needs to show a translation model on one source sentence: kind
"translation-view" of the qkv-explain format.

    doc = translation_view(model, tokenizer, "我 投资了 苹果 。")        # a JSON-ready dict

The source is translated greedily and the teacher-forced pass traced once (qkv.analysis.cross_attention.read);
the page then switches attention, layer, head and query without asking again. The model has three
kinds of attention, each a "part" with the arrays of a GPT's view (qkv.apps.web.view), for queries
i and keys j of its own:

    "cross"    decoder layer L's cross-attention: queries = the target steps, keys = the source words
    "decoder"  decoder layer L's causal self-attention: queries = the target steps, keys = what they read
    "encoder"  encoder layer L's self-attention: queries and keys = the source words (no mask)

    dots[L,h,i,j] = q_i·k_j,  pattern[L,h,i,j] = A  (L, H, T_query, T_key; the decoder's sent as
    lower triangles), v_* (L, H, T_key, …) the keys' values, z_* and head_out_norm (L, H, T_query, …),
    and the residual update of the stream the attention reads, per layer and query (L, T_query):
    x -> x + attn_out -> resid_mid, then the block's MLP (mlp_out) and output (resid_post); for
    "cross" x is the decoder's resid_mid and the stream after it resid_mid_cross.

Target step i reads target token i (<s> w1 … wn) and writes word i (w1 … wn </s>): the top-level
arrays next_ids, next_probs (T_target, TOP_NEXT) are its most likely words, actual_prob and
actual_rank (T_target,) the probability and rank of the word the translation writes there.
"confidence" is the smallest of them (qkv.core.decode.translate.confidence), "weakest" the word written
with it, and "unsure" says it is below "unsure_below" (UNSURE_BELOW): there the model was choosing
between words, so its translation is a guess. "left_out": the punctuation marks of the text the model
never saw (it reads the sentence without them). "honesty": the words of the translation that translate no
source word (qkv.analysis.invented_words.honesty: "checked", "invented" = their positions among the
words of "translation", "words", "unglossed" = the source words its word list knows nothing of).
"""

from __future__ import annotations

import math

import torch

from qkv.analysis import cross_attention as cross
from qkv.analysis.explain import N_COORDS
from qkv.analysis.inputs import MAX_CELLS
from qkv.analysis.invented_words import honesty
from qkv.analysis.model_info import model_info
from qkv.analysis.packing import pack
from qkv.apps.web.view import layer_arrays, next_arrays
from qkv.core.decode.translate import UNSURE_BELOW, decode_target, unknown_marks, weakest
from qkv.core.io.document import header
from qkv.core.io.finite import arrays_note
from qkv.core.see.indices import TextError
from qkv.core.spec.family import family_of

PARTS = ("cross", "decoder", "encoder")
# part -> (stack, attention, the residual hook it reads, the one it writes)
_SITES = {
    "cross": ("decoder", "cross_attn", "hook_resid_mid", "hook_resid_mid_cross"),
    "decoder": ("decoder", "attn", "hook_resid_pre", "hook_resid_mid"),
    "encoder": ("encoder", "attn", "hook_resid_pre", "hook_resid_mid"),
}
_ATTN = ("hook_dots", "hook_pattern", "hook_v", "hook_z", "hook_result")
_BLOCK = (
    "hook_resid_pre",
    "hook_resid_mid",
    "hook_resid_mid_cross",
    "hook_attn_out",
    "hook_cross_attn_out",
    "hook_mlp_out",
    "hook_resid_post",
)


def _wanted(name: str) -> bool:
    return name == "probs" or name.endswith(_BLOCK) or name.rsplit(".", 1)[-1] in _ATTN


def check_size(cfg, n_src: int, n_tgt: int) -> None:
    """Refuse a view whose attention matrices would not fit a page (about MAX_CELLS in all)."""
    cells = cfg.n_heads * (cfg.n_encoder_layers * n_src**2 + cfg.n_layers * (n_tgt**2 + n_tgt * n_src))
    if cells > MAX_CELLS:
        raise TextError.of("errors.translation_too_large", n_src=n_src, n_tgt=n_tgt, cells=cells, max=MAX_CELLS)


def _part(tr, cfg, name: str, k: int, raw: dict) -> dict:
    """One stack's attention arrays, packed; `raw` gains them unpacked, by their place in the document."""
    stack, attn, x_hook, mid_hook = _SITES[name]
    n_layers = family_of(cfg).layers(cfg, stack)
    get = lambda hook: torch.stack([tr[f"{stack}.blocks.{L}.{hook}"][0] for L in range(n_layers)])  # (L, ...)
    arrays = layer_arrays(get, k, attn, x_hook, mid_hook)
    raw.update({f"parts.{name}.arrays.{key}": value for key, value in arrays.items()})
    causal = name == "decoder"
    return {
        "queries": "source" if stack == "encoder" else "target",
        "keys": "target" if causal else "source",
        "n_layers": n_layers,
        "causal": causal,
        "stream": [x_hook[5:], mid_hook[5:]],
        "arrays": {key: pack(value, lower=causal and key in ("dots", "pattern")) for key, value in arrays.items()},
    }


@torch.no_grad()
def translation_view(model, tokenizer, text: str, name: str = "") -> dict:
    """The kind-"translation-view" document of source `text` (see the module docstring)."""
    cfg = model.cfg
    r = cross.read(model, tokenizer, text)
    check_size(cfg, len(r.src), len(r.tgt_in))
    tr = cross.trace(model, r, _wanted)
    k = min(N_COORDS, cfg.d_head)
    nexts = next_arrays(tr["probs"][0], r.written)  # at each target step, what the translation writes there
    shown = set(r.src) | set(r.tgt_in) | set(r.written) | set(nexts["next_ids"].flatten().tolist())
    display = lambda ids: [tokenizer.display(i) for i in ids]
    raw = {f"arrays.{key}": value for key, value in nexts.items()}
    parts = {p: _part(tr, cfg, p, k, raw) for p in PARTS}
    note = arrays_note(raw)
    sure, at = weakest(nexts["actual_prob"].tolist())  # of the words written and </s>
    return {
        **header("translation-view"),
        **({"non_finite": note} if note else {}),
        "text": r.text,
        "translation": decode_target(tokenizer, r.tgt_in),
        "translated": r.translated,
        "finished": r.finished,
        "confidence": sure,
        "unsure": sure < UNSURE_BELOW,
        "unsure_below": UNSURE_BELOW,
        "weakest": tokenizer.display(r.written[at]) if r.written else "",
        "left_out": unknown_marks(tokenizer, text),
        "honesty": honesty(
            display(r.src), decode_target(tokenizer, r.tgt_in).split(), getattr(model, "languages", None)
        ),
        "source": {"ids": r.src, "tokens": display(r.src)},
        "target": {
            "ids": r.tgt_in,
            "tokens": display(r.tgt_in),
            "written_ids": r.written,
            "written": display(r.written),
        },
        "default_token": cross.default_step(tokenizer, r.written),
        "model": model_info(model, tokenizer, name),
        "scale": math.sqrt(cfg.d_head),
        "first": k,
        "vocab": {str(i): tokenizer.display(i) for i in sorted(shown)},
        "parts": parts,
        "arrays": {key: pack(value) for key, value in nexts.items()},
    }
