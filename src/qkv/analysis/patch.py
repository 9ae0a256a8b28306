"""Activation patching: which activations carry what the clean text has and the corrupted one lacks.

Two texts of the same length differ in one detail: the clean one ("我 昨天 吃了 苹果 ，") leads the model
to one answer (味道, the fruit's taste), the corrupted one ("我 上周 投资了 苹果 ，") to another (股价,
the company's stock). A metric m(logits) measures the answer, e.g. the logit difference

    m = logit[answer] - logit[wrong]      at one position (the last by default)

Patching runs the corrupted text, but at one piece of one activation puts in the value that piece had
in the clean run, lets the rest of the forward pass compute on from there, and measures m again.
A piece that moves m from m_corrupted to m_clean carries (all of) the difference; its share is

    normalized = (m_patched - m_corrupted) / (m_clean - m_corrupted)     (0: nothing; 1: everything)

A share divides by the gap m_clean - m_corrupted, so when the two runs barely differ the shares are
noise blown up (a gap of 0.03 makes a piece that moves m by 0.09 a "share" of 3): gap_small says so.

Sites, as TransformerLens's patching names them (blocks.L.<name>):

    resid_pre   the residual stream entering block L, at one position     values (n_layers, T)
    attn_out    what block L's attention adds, at one position            values (n_layers, T)
    mlp_out     what block L's MLP adds, at one position                  values (n_layers, T)
    z           head h of layer L (its z_h = A_h v_h), at every position  values (n_layers, n_heads)

Since a causal model computes position i from positions <= i only, patching resid_pre at layer 0 at
every position is the clean run itself; at one position it swaps that token's embedding.

whole=True patches a layer's whole piece of the site at once instead, every position (and for z every
head): one value per layer, values (n_layers,). For z that is the layer's attention as a whole (all its
heads together), for attn_out and mlp_out all that the sublayer adds, for resid_pre the whole stream
entering the layer (at layer 0, the clean run itself).

    result = patch(model, clean_ids, corrupted_ids, "resid_pre", logit_diff(answer_id, wrong_id))
    per_layer = patch(model, clean_ids, corrupted_ids, "z", metric, whole=True)   # values (n_layers,)
    result.values, result.clean, result.corrupted, result.normalized, result.gap_small
    r = patch_text(model, tokenizer, "我 昨天 吃了 苹果 ，", "我 上周 投资了 苹果 ，", "味道", "股价", site="z")
    r.to_json(tokenizer)                 # the kind-"patching" document

The clean activations are recorded once (one traced forward); the patched runs are batched: each row of
a batch is the corrupted text with its own piece patched (hooks on the model: model.run_with_hooks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import torch

from qkv.analysis.inputs import check_ids, one_sequence, read_text, token_id
from qkv.core.io.document import header
from qkv.core.io.refusal import family_title
from qkv.core.io.shown import Shown
from qkv.core.model import evaluating
from qkv.core.see.indices import TextError, check_token

SITES = ("resid_pre", "attn_out", "mlp_out", "z")
BY_HEAD = ("z",)  # sites patched per head (all positions at once); the others per position
_NAMES = {
    "resid_pre": "blocks.{L}.hook_resid_pre",
    "attn_out": "blocks.{L}.hook_attn_out",
    "mlp_out": "blocks.{L}.hook_mlp_out",
    "z": "blocks.{L}.attn.hook_z",
}
LOGITS_BUDGET = 2**24  # logits numbers one patched forward may hold (B * T * d_vocab): 64 MB in float32
# The gap below which the shares are not to be trusted. For a logit difference the unit is known, so the
# bar is a fixed one: a gap of 1 logit means the clean run makes the answer e = 2.7 times likelier against
# the wrong word than the corrupted run does; below that the two texts barely change the prediction, and
# a share is a small difference divided by another small one. A metric of unknown unit (any callable)
# gets a bar relative to the values instead: the gap is small when some single piece moves the metric
# more than twice as far as the whole gap (a share beyond +-2), i.e. the gap is within the pieces' spread.
GAP_LOGITS = 1.0
GAP_SPREAD = 2.0


# ------------------------------------------------------------------ the metric


@dataclass(frozen=True)
class LogitDiff:
    """m(logits) = logits[:, position, answer] - logits[:, position, wrong]: one number per sequence."""

    answer: int
    wrong: int
    position: int = -1

    def __call__(self, logits: torch.Tensor) -> torch.Tensor:
        at = logits[:, self.position]  # (B, d_vocab)
        return at[:, self.answer] - at[:, self.wrong]  # (B,)


def logit_diff(answer: int, wrong: int, position: int = -1) -> LogitDiff:
    """The metric logit(answer) - logit(wrong) at `position` (token ids; see token_id for a word)."""
    return LogitDiff(int(answer), int(wrong), int(position))


# ------------------------------------------------------------------ the result


@dataclass(repr=False)
class Patching(Shown):
    """What patch() measured: values[L, i] = the metric with piece (L, i) of the clean run patched in
    (i a position, or a head for site "z"; values[L] with whole=True: layer L's whole piece), and the
    metric of the clean and the corrupted run."""

    site: str
    values: torch.Tensor  # (n_layers, T) or (n_layers, n_heads), or (n_layers,) when whole; float64
    clean: float
    corrupted: float
    clean_ids: list[int]
    corrupted_ids: list[int]
    metric: Callable
    rounding: float = 1e-6  # relative: two metrics closer than this are equal (8 eps of the model's dtype)
    whole: bool = False  # each layer's piece patched whole (every position and head): one value per layer
    tokens: tuple[list[str], list[str]] | None = None  # (clean, corrupted) as the tokenizer shows them (patch_text)
    words: tuple[str, str] | None = None  # (answer, wrong) as the tokenizer shows them (patch_text)
    shown_as = "patching"  # a notebook's display (qkv.apps.displays); not a field

    def brief(self) -> str:
        shape = tuple(self.values.shape)
        return f"site={self.site!r}, values={shape}, clean={self.clean:.4g}, corrupted={self.corrupted:.4g}"

    @property
    def by_head(self) -> bool:
        return self.site in BY_HEAD

    @property
    def normalized(self) -> torch.Tensor | None:
        """(values - corrupted) / (clean - corrupted), or None when the two runs' metrics are equal."""
        gap = self.clean - self.corrupted
        if abs(gap) <= self.rounding * max(1.0, abs(self.clean), abs(self.corrupted)):  # equal, to rounding
            return None
        return (self.values - self.corrupted) / gap

    @property
    def gap_small(self) -> bool:
        """Whether clean and corrupted differ too little for the shares to mean much (see GAP_LOGITS):
        |clean - corrupted| < GAP_LOGITS for a logit difference, else < max |values - corrupted| / GAP_SPREAD."""
        gap = abs(self.clean - self.corrupted)
        if isinstance(self.metric, LogitDiff):
            return gap < GAP_LOGITS
        spread = float((self.values - self.corrupted).abs().max()) if self.values.numel() else 0.0
        return gap == 0 or gap < spread / GAP_SPREAD

    def strongest(self, n: int = 3) -> list[tuple[int, int, float]]:
        """The n pieces that move the metric most from the corrupted run's: (layer, index, value)
        (index 0 when whole: the layer's one piece)."""
        effect = (self.values - self.corrupted).abs().flatten()
        order = torch.argsort(effect, descending=True, stable=True)[:n].tolist()
        width = 1 if self.whole else self.values.shape[1]
        return [(k // width, k % width, float(self.values.flatten()[k])) for k in order]

    def to_json(self, tokenizer=None) -> dict:
        """The kind-"patching" document: the tokens of both texts, the site, the values (and their
        normalized share, null when clean = corrupted), the two runs' metrics, gap_small (true when they
        differ too little for the shares to mean much, see GAP_LOGITS), the answer and the wrong token
        when the metric is a logit difference."""
        norm = self.normalized
        m = self.metric if isinstance(self.metric, LogitDiff) else None

        def shown(ids):
            return [tokenizer.display(i) for i in ids] if tokenizer is not None else None

        def word(i):
            return tokenizer.display(i) if tokenizer is not None and i is not None else None

        return {
            **header("patching"),
            "site": self.site,
            "axes": ["layer"] if self.whole else ["layer", "head" if self.by_head else "pos"],
            "ids": {"clean": list(self.clean_ids), "corrupted": list(self.corrupted_ids)},
            "tokens": {"clean": shown(self.clean_ids), "corrupted": shown(self.corrupted_ids)},
            "values": self.values.tolist(),
            "normalized": norm.tolist() if norm is not None else None,
            "clean": self.clean,
            "corrupted": self.corrupted,
            "gap_small": self.gap_small,
            "answer": word(m.answer) if m else None,
            "wrong": word(m.wrong) if m else None,
            "answer_id": m.answer if m else None,
            "wrong_id": m.wrong if m else None,
            "position": (m.position % len(self.clean_ids)) if m else None,
        }


# ------------------------------------------------------------------ patching


def check_model(model, site: str) -> str:
    """The hook name pattern of `site` for this model, or a one-line refusal (no logits, no such site)."""
    family = model.family
    if not family.next_token:
        raise TextError.of("patching.no_logits", title=family_title(family))
    if not family.one_stack:
        raise TextError.of("patching.family", title=family_title(family))
    if not isinstance(site, str):  # e.g. the metric given where the site goes
        raise TextError.of("patching.site_type", got=_short_repr(site), sites=", ".join(SITES))
    if site not in SITES:
        raise TextError.of("patching.site", site=repr(site), sites=", ".join(SITES))
    if site == "mlp_out" and model.cfg.mlp == "none":
        raise TextError.of("patching.no_mlp")
    return _NAMES[site]


def _short_repr(x, limit: int = 60) -> str:
    s = repr(x)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def check_metric(metric) -> None:
    """A metric is a function of the logits (logit_diff gives one), else a one-line refusal."""
    if not callable(metric):
        raise TextError.of("tlpatch.metric_type", got=_short_repr(metric))
    if isinstance(metric, LogitDiff) and metric.answer == metric.wrong:
        raise TextError.of("patching.same_words", word=f"id {metric.answer}")


def _lengths(clean, corrupted, shown: int = 40) -> TextError:
    """The refusal for texts of unequal lengths, showing each as its tokens, a|b|c (a word split in two
    shows), at most `shown` of them (then …) so that the line stays readable."""

    def pieces(tokens) -> str:
        return "|".join(map(str, tokens[:shown])) + ("|…" if len(tokens) > shown else "")

    return TextError.of(
        "patching.lengths",
        clean=len(clean),
        corrupted=len(corrupted),
        clean_tokens=pieces(clean),
        corrupted_tokens=pieces(corrupted),
    )


def _numbers(metric, logits: torch.Tensor) -> torch.Tensor:
    """metric(logits) as a flat float64 tensor on the CPU, or a one-line refusal when it is not numbers."""
    out = metric(logits)
    try:
        return torch.as_tensor(out).detach().reshape(-1).to("cpu", torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise TextError.of("tlpatch.metric_value", got=_short_repr(out)) from None


def _per_row(metric, logits: torch.Tensor) -> torch.Tensor:
    """metric(logits) as one float64 number per row (one patched run) of the batch (B, T, d_vocab), on the CPU.

    A metric may give one number per row, (B,) (logit_diff does), or one number for the whole batch it is
    given, as TransformerLens's patching expects (its metric reads one run's logits to a scalar, e.g.
    logits[0, -1, a] - logits[0, -1, b]): that one is called again on each row by itself, logits[r : r + 1]."""
    B = logits.shape[0]
    out = _numbers(metric, logits)
    if out.numel() == B:
        return out
    if out.numel() == 1:  # one number for the whole batch: the metric of one run, so one run at a time
        out = torch.cat([_numbers(metric, logits[r : r + 1]) for r in range(B)])  # (B,) when each run gives one
        if out.numel() == B:
            return out
    raise TextError.of("tlpatch.metric_shape", B=B, got=out.numel())


def _hook(rows: list[int], index: list[int | None], clean: torch.Tensor, by_head: bool):
    """A hook that puts the clean run's piece index[k] into row rows[k] of the batch (index None: all of it).
    clean: the clean activation (1, T, d_model) or, per head, (1, T, n_heads, d_head)."""

    def put(act, hook):
        act = act.clone()
        src = clean.to(act.device, act.dtype)
        for r, i in zip(rows, index):
            if i is None:
                act[r] = src[0]  # (T, d_model) or (T, n_heads, d_head): the layer's whole piece
            elif by_head:
                act[r, :, i] = src[0, :, i]  # (T, d_head): head i at every position
            else:
                act[r, i] = src[0, i]  # (d_model,): position i
        return act

    return put


def _checked(model, clean_ids, corrupted_ids, site, metric, batch) -> tuple[str, list[int], list[int]]:
    """patch's arguments checked: (the site's hook name pattern, the clean ids, the corrupted ids), or a
    one-line refusal."""
    pattern = check_model(model, site)
    check_metric(metric)
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise TextError.of("patching.batch", got=_short_repr(batch))
    clean_ids, corrupted_ids = one_sequence(model, clean_ids), one_sequence(model, corrupted_ids)
    T = len(clean_ids)
    if len(corrupted_ids) != T:
        raise _lengths(clean_ids, corrupted_ids)
    if isinstance(metric, LogitDiff):
        check_ids([metric.answer, metric.wrong], model.cfg)
        if not -T <= metric.position < T:
            raise TextError.of("patching.position", pos=metric.position, T=T)
    return pattern, clean_ids, corrupted_ids


@torch.no_grad()
def patch(
    model,
    clean_ids,
    corrupted_ids,
    site: str | None = None,
    metric: Callable | None = None,
    batch: int | None = None,
    whole: bool = False,
) -> Patching:
    """Patch each piece of `site` (one of SITES; see the module docstring) from the clean run into the
    corrupted run and measure metric(logits) each time. metric maps logits (B, T, d_vocab) to one number
    per row (B,) (logit_diff does), or, as TransformerLens's patching has it, the logits of one run (1, T,
    d_vocab) to one number (then it is called once per patched run). `batch`: pieces per forward pass
    (default: as many as LOGITS_BUDGET allows). `whole`: one piece per layer, the site's whole activation
    there (values (n_layers,)).
    Both site and metric must be given; they default to None only so that a call missing one
    is refused in one line rather than with a TypeError."""
    pattern, clean_ids, corrupted_ids = _checked(model, clean_ids, corrupted_ids, site, metric, batch)
    cfg, T = model.cfg, len(clean_ids)
    by_head = site in BY_HEAD
    width = cfg.n_heads if by_head else T
    pieces = [(L, None) if whole else (L, i) for L in range(cfg.n_layers) for i in range(1 if whole else width)]
    batch = batch or max(1, LOGITS_BUDGET // (T * cfg.d_vocab))
    names = [pattern.format(L=L) for L in range(cfg.n_layers)]
    weight = next(model.parameters())
    device = weight.device
    values = torch.empty(len(pieces), dtype=torch.float64)
    with evaluating(model):
        # the clean activations, and both runs' metrics, on the path of the patched runs (hooks on the same
        # names: a hook on z takes the written-out formulas, one on the residual stream the fused kernels)
        kept: dict[str, torch.Tensor] = {}

        def keep(act, hook):
            kept[hook.name] = act.clone()

        def run(ids, fn) -> float:
            logits = model.run_with_hooks(torch.tensor([ids], device=device), fwd_hooks=[(n, fn) for n in names])
            return float(_per_row(metric, logits)[0])

        clean, corrupted = run(clean_ids, keep), run(corrupted_ids, lambda act, hook: None)
        corrupted_run = torch.tensor([corrupted_ids], device=device)  # (1, T)
        for start in range(0, len(pieces), batch):
            group = pieces[start : start + batch]
            hooks = []
            for L in sorted({L for L, _ in group}):
                rows = [r for r, (layer, _) in enumerate(group) if layer == L]
                index = [group[r][1] for r in rows]
                hooks.append((names[L], _hook(rows, index, kept[names[L]], by_head)))
            logits = model.run_with_hooks(corrupted_run.expand(len(group), T), fwd_hooks=hooks)
            values[start : start + len(group)] = _per_row(metric, logits)
    rounding = 8 * torch.finfo(weight.dtype).eps  # float32: 1e-6; bfloat16: 0.06
    shape = (cfg.n_layers,) if whole else (cfg.n_layers, width)
    return Patching(site, values.reshape(shape), clean, corrupted, clean_ids, corrupted_ids, metric, rounding, whole)


def patch_text(
    model,
    tokenizer,
    clean: str,
    corrupted: str,
    answer: str,
    wrong: str,
    site: str = "resid_pre",
    position: int = -1,
    whole: bool = False,
) -> Patching:
    """patch() for two texts and the metric logit(answer) - logit(wrong) at `position`, each word one token
    (whole: one piece per layer, its whole activation at the site)."""
    check_model(model, site)  # an encoder is refused before its texts are read
    _, clean_ids = read_text(tokenizer, clean, model.cfg.n_ctx)
    _, corrupted_ids = read_text(tokenizer, corrupted, model.cfg.n_ctx)
    if len(clean_ids) != len(corrupted_ids):
        show = tokenizer.display
        raise _lengths([show(i) for i in clean_ids], [show(i) for i in corrupted_ids])
    position = check_token(position, len(clean_ids))
    answer_id, wrong_id = token_id(tokenizer, answer), token_id(tokenizer, wrong)
    if answer_id == wrong_id:
        raise TextError.of("patching.same_words", word=repr(answer))
    metric = logit_diff(answer_id, wrong_id, position)
    result = patch(model, clean_ids, corrupted_ids, site, metric, whole=whole)
    shown = ([tokenizer.display(i) for i in clean_ids], [tokenizer.display(i) for i in corrupted_ids])
    return replace(result, tokens=shown, words=(tokenizer.display(answer_id), tokenizer.display(wrong_id)))
