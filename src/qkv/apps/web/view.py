"""Everything the web page needs to show one text: kind "view" of the qkv-explain format.

    doc = view(model, tokenizer, "我 投资了 苹果 ，")        # a JSON-ready dict

The model runs once, traced, in eval mode; the page then switches layer, head and query token
without asking again. Per layer L, head h, query i and key j the document holds

    dots[L,h,i,j]    = q_i·k_j                     (hook_dots)
    pattern[L,h,i,j] = A = softmax_j(q_i·k_j / √d_head), masked keys 0   (hook_pattern)
    z = Σ_j A_ij v_j, given by its norm and first coordinates, with each value's
    v_2d, z_2d       = both projected on two directions of large spread of that head's values
                       (an affine map, so z_2d = Σ_j A_ij v_2d[j]: z stays inside the projected hull)

The scaled scores are not sent: hook_attn_scores is float32 dots / float32(√d_head), a correctly
rounded division that a reader repeats exactly (in JavaScript: Math.fround(dot / Math.fround(scale));
a test checks that this reproduces the model's scores bit for bit).

and per layer and position the norms of the residual update x → x + attn_out (→ resid_mid → + mlp_out),
then the most likely next tokens at each position (only for a model with an LM head: an encoder
outputs one vector per token and no next-token distribution, so its view has no next_* arrays and
model.has_lm_head is false in the document). Big arrays are packed (see `pack`): float32 or
int32, little-endian, base64 (qkv.analysis.packing) — a browser reads them into a typed array without parsing numbers;
under a causal mask, dots and pattern keep only their lower triangles (an encoder's are sent whole).

doc["unknown"] names what a word tokenizer read below the level of its words (a word tokenizer with
a fallback reads any text; see qkv.core.text.tokenizers.unknown): one entry per run of characters read
one by one or as bytes, read the same way and inside one reader's word, in text order,

    {"text": "好", "pieces": ["好"], "how": "chars", "nearest": ["看好", "好吃"]}

text: the run as typed, ASCII capitals folded (the document's own "text" is the whole text as the
model reads it, for such a tokenizer its decoded ids: "我 吃了 苹果 ， 味道 很 好"); pieces: what it
was read as, words and characters (a character read as UTF-8 bytes is listed whole; in a word of a
spaced script, such as "apples" -> ["apple", "s"], the whole word is the run); how: "chars"
(single-character tokens: fallback characters, or a reader's word of 3+ characters read a character
at a time, 红楼梦 -> 红 楼 梦) or "bytes" (characters read as byte tokens); nearest: up to
5 known words, least edit distance first, among those sharing a character with the run. [] when
every piece is a word, and always for char and BPE tokenizers. For a view of token ids, the runs
are those of the ids' decoded text.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from qkv.analysis.explain import N_COORDS
from qkv.analysis.inputs import check_ids, check_size, read_text
from qkv.analysis.model_info import model_info
from qkv.analysis.packing import pack, unpack
from qkv.core.io.document import header
from qkv.core.io.finite import arrays_note
from qkv.core.model import evaluating
from qkv.core.see.indices import TextError
from qkv.core.text.tokenizers.unknown import unknown_pieces

TOP_NEXT = 10  # next-token candidates kept per position
SUBSPACE_ITERS = 16  # power iterations for the 2-D picture of the values


def layer_arrays(get, k: int, attn: str = "attn", x_hook: str = "hook_resid_pre", mid_hook: str = "hook_resid_mid"):
    """The view's arrays of one stack, every layer at once (the keys of VIEW_ARRAYS but the next_*).

    get(hook) stacks blocks.L.<hook> of the one sequence over the layers: (L, ...). attn is the
    attention the page shows ("attn", "cross_attn"), x_hook what it reads, mid_hook the sum after it."""
    dots, pattern = get(f"{attn}.hook_dots"), get(f"{attn}.hook_pattern")  # (L, H, T_query, T_key)
    z = get(f"{attn}.hook_z").transpose(1, 2)  # (L, H, T_query, d_head)
    v = get(f"{attn}.hook_v")  # (L, T_key, H_kv, d_head): grouped-query attention keeps fewer value heads
    v = v.repeat_interleave(z.shape[1] // v.shape[2], dim=2).transpose(1, 2)  # what each head reads: (L, H, T_key, d)
    v_2d, z_2d, kept = _values_2d(v, z)
    x, attn_out = get(x_hook), get(f"hook_{attn}_out")  # (L, T_query, d_model)
    try:
        mlp_out = get("hook_mlp_out")
    except KeyError:  # an attention-only model (mlp="none"): no MLP adds anything
        mlp_out = torch.zeros_like(x)
    try:
        mid = get(mid_hook)
    except KeyError:  # a parallel block (GPT-NeoX) has no stream between its sub-layers: the row repeats
        mid = x + attn_out  # x + attn_out, and the page leaves it out (model.parallel_attn_mlp)
    return {
        "dots": dots,
        "pattern": pattern,
        "v_norm": v.norm(dim=-1),
        "v_first": v[..., :k],
        "z_norm": z.norm(dim=-1),
        "z_first": z[..., :k],
        "v_2d": v_2d,
        "z_2d": z_2d,
        "kept_2d": kept,
        "head_out_norm": get(f"{attn}.hook_result").norm(dim=-1).transpose(1, 2),  # (L, T, H) -> (L, H, T)
        "x_norm": x.norm(dim=-1),
        "attn_out_norm": attn_out.norm(dim=-1),
        "x_plus_attn_norm": (x + attn_out).norm(dim=-1),
        "resid_mid_norm": mid.norm(dim=-1),
        "mlp_out_norm": mlp_out.norm(dim=-1),
        "resid_post_norm": get("hook_resid_post").norm(dim=-1),
        "update_cos": torch.nn.functional.cosine_similarity(x, attn_out, dim=-1),
    }


def _values_2d(v: torch.Tensor, z: torch.Tensor, iters: int = SUBSPACE_ITERS):
    """Project each head's values (and its z rows) on two directions along which the values spread most.

    v, z: (L, H, T, d). Returns v_2d, z_2d (L, H, T, 2) and the share of the values' variance the
    picture keeps (L, H), exact for the directions used. The directions come from subspace (power)
    iteration on the scatter matrix C = Σ_j (v_j − mean)(v_j − mean)ᵀ, started at the two values
    farthest from the mean, then ordered by variance: within a few % of the principal pair's
    variance (a test compares), at a quarter of the cost of a full eigendecomposition. Any linear
    map keeps convex combinations, so z_2d = Σ_j A_j v_2d[j] whatever the directions.
    """
    v, z = v.double(), z.double()
    d = v.shape[-1]
    if d <= 2:  # nothing to project: keep the coordinates (a zero second one when d = 1)
        comp = torch.eye(2, d, dtype=v.dtype).expand(*v.shape[:2], 2, d)
        kept = torch.ones(v.shape[:2], dtype=v.dtype)
        return v @ comp.transpose(-1, -2), z @ comp.transpose(-1, -2), kept
    mean = v.mean(dim=2, keepdim=True)  # (L, H, 1, d)
    centred = v - mean
    C = centred.transpose(-1, -2) @ centred  # (L, H, d, d)
    far = centred.norm(dim=-1).topk(min(2, v.shape[2]), dim=-1).indices  # (L, H, 2): the two farthest values
    Q = torch.gather(centred, 2, far[..., None].expand(*far.shape, d)).transpose(-1, -2)  # (L, H, d, 2)
    if Q.shape[-1] < 2:  # one token: any second direction will do
        Q = torch.cat([Q, torch.ones_like(Q)], dim=-1)
    Q = torch.linalg.qr(Q)[0]
    for _ in range(iters):
        Q = torch.linalg.qr(C @ Q)[0]
    var, U = torch.linalg.eigh(Q.transpose(-1, -2) @ C @ Q)  # the 2 x 2 problem inside the subspace
    comp = (Q @ U.flip(-1)).transpose(-1, -2)  # (L, H, 2, d): larger variance first
    sign = torch.sign(torch.gather(comp, -1, comp.abs().argmax(-1, keepdim=True)))  # (L, H, 2, 1)
    comp = comp * torch.where(sign == 0, torch.ones_like(sign), sign)  # largest coordinate positive: stable
    total = C.diagonal(dim1=-2, dim2=-1).sum(-1)
    kept = torch.where(total > 0, var.clamp_min(0).sum(-1) / total.clamp_min(1e-300), torch.ones_like(total))
    v2 = (v - mean) @ comp.transpose(-1, -2)  # (L, H, T, d) @ (L, H, d, 2) -> (L, H, T, 2)
    z2 = (z - mean) @ comp.transpose(-1, -2)
    return v2, z2, kept.clamp(max=1.0)


_HOOKS = (
    "attn.hook_dots",
    "attn.hook_pattern",
    "attn.hook_v",
    "attn.hook_z",
    "attn.hook_result",
    "hook_resid_pre",
    "hook_attn_out",
    "hook_resid_mid",
    "hook_mlp_out",
    "hook_resid_post",
)


def _wanted(name: str) -> bool:
    return name == "probs" or name.endswith(_HOOKS)


def _wanted_no_lm(name: str) -> bool:
    return name.endswith(_HOOKS)


@torch.no_grad()
def view(
    model, tokenizer, text: str | None = None, name: str = "", ids: list[int] | None = None, raw: bool = False
) -> dict:
    """The kind-"view" document of `text`, or of token `ids` (then text is their decoding; see the
    module docstring and docs/trace-format.md). A text a word tokenizer can read only once its
    words are cut apart is shown cut (`read_text`), and its "text" says so. raw=True: the arrays'
    "data" is their bytes, not base64 (for qkv.analysis.packing.binary, what the page is sent)."""
    cfg = model.cfg
    if (text is None) == (ids is None):
        raise TextError.of("errors.text_or_ids")
    if ids is None:
        typed = text
        text, ids = read_text(tokenizer, text, cfg.n_ctx)
    else:
        ids = check_ids(ids, cfg)
        text = typed = tokenizer.decode(ids)
    T, Ls = len(ids), range(cfg.n_layers)
    check_size(cfg, T)
    has_lm = model.family.next_token
    device = next(model.parameters()).device
    with evaluating(model):
        _, tr = model.run_with_trace(torch.tensor([ids], device=device), names=_wanted if has_lm else _wanted_no_lm)

    k = min(N_COORDS, cfg.d_head)
    arrays = layer_arrays(lambda hook: torch.stack([tr[f"blocks.{L}.{hook}"][0] for L in Ls]), k)
    shown_ids = set(ids)
    if has_lm:  # an encoder has no next-token distribution: no next_* arrays
        nexts = next_arrays(tr["probs"][0], ids[1:])
        shown_ids |= set(nexts["next_ids"].flatten().tolist())
        arrays.update(nexts)
    special = getattr(tokenizer, "special", None) or ()
    note = arrays_note({f"arrays.{key}": value for key, value in arrays.items()})
    return {
        **header("view"),
        **({"non_finite": note} if note else {}),
        "text": text,
        "ids": [int(i) for i in ids],
        "tokens": [tokenizer.display(i) for i in ids],
        "model": model_info(model, tokenizer, name),
        "special": [n for n, i in enumerate(ids) if i in special],
        "continues": [n for n, i in enumerate(ids) if _continues(tokenizer, i)],
        "scale": cfg.attn_scale or math.sqrt(cfg.d_head),  # Gemma divides by sqrt(query_pre_attn_scalar)
        **_gemma_scores(model),
        "first": k,
        "vocab": {str(i): tokenizer.display(i) for i in sorted(shown_ids)},
        "unknown": unknown_pieces(tokenizer, typed),
        "arrays": {k: pack(a, lower=cfg.causal and k in ("dots", "pattern"), raw=raw) for k, a in arrays.items()},
    }


def _gemma_scores(model) -> dict:
    """What else makes the scores from the dots (Gemma): "soft_cap", scores = cap * tanh(dots / scale / cap),
    and "windows", each layer's sliding window (null: global), keys further back hidden; {} for other models."""
    cfg, said = model.cfg, {}
    if cfg.attn_scores_soft_cap is not None:
        said["soft_cap"] = cfg.attn_scores_soft_cap
    if cfg.sliding_window is not None:
        said["windows"] = [block.attn.window for block in model.blocks]
    return said


def _continues(tokenizer, i: int) -> bool:
    """Whether token i continues the word before it (a WordPiece "##" piece)."""
    test = getattr(tokenizer, "is_continuation", None)
    return bool(test(i)) if test is not None else False


def next_arrays(probs: torch.Tensor, following: list[int]) -> dict:
    """probs (T, d_vocab) -> the top TOP_NEXT next tokens at each position, and the probability and
    rank of the token that actually follows at the first len(following) positions."""
    n = len(following)
    top_p, top_i = torch.topk(probs, min(TOP_NEXT, probs.shape[-1]), dim=-1)  # (T, K)
    nxt = torch.tensor(following, dtype=torch.long, device=probs.device)
    actual_p = probs[torch.arange(n), nxt]  # (n,) the probability of the token that follows
    actual_rank = (probs[:n] > actual_p[:, None]).sum(-1) + 1
    return {"next_ids": top_i, "next_probs": top_p, "actual_prob": actual_p, "actual_rank": actual_rank}


def unpack_view(doc: dict) -> dict[str, np.ndarray]:
    """Every packed array of a view document as a numpy array."""
    return {key: unpack(p) for key, p in doc["arrays"].items()}
