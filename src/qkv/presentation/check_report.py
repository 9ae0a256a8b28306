"""The report of qkv.check (`qkv trace --check`, and a CheckReport shown in a notebook: qkv.apps.displays) in
the reader's language: qkv.core.see.invariants.CheckReport's lines (its str() is the English), each part from the
catalogue (area "cli", keys check_*). A check's
name is said from the catalogue when it is one of the sentences the checks are named by (NAMES) or a
formula with a named part (FORMULAS); a name that is only a formula (resid_mid = resid_pre + attn_out)
is written as it is. In a formula each name of the residual stream has its word beside it, in Chinese
(qkv.presentation.hook_words: 注意力的输出 attn_out)."""

from __future__ import annotations

import re

from qkv.core.see.invariants import TOL
from qkv.presentation.hook_words import name_hooks
from qkv.presentation.i18n import lang_of, say_error, t

NAMES = {  # the checks' names (invariants.py) and the catalogue key of each
    "rows sum to 1": "check_rows_sum",
    "weights are non-negative": "check_non_negative",
    "masked weights are 0": "check_masked",
    "padding keys get weight 0": "check_padding_keys",
    "source padding gets weight 0": "check_source_padding",
    "z lies in the convex hull of the values": "check_hull",
    "z lies in the convex hull of the source's values": "check_hull_source",
}
FORMULAS = [
    (re.compile(r"heads' results \+ b_O = (?P<out>\S+)"), "check_heads_sum"),
    (re.compile(r"(?P<ln>\w+)'s scale = (?P<formula>.+)"), "check_norm_scale"),
    (re.compile(r"(?P<ln>\w+)'s out = (?P<formula>.+)"), "check_norm_out"),
]
# the norms' formulas (invariants._norm), said with their words in Chinese
NORM_FORMULAS = {
    "sqrt(var(x) + eps)": "words_zh.formula_ln_scale",
    "sqrt(mean(x²) + eps)": "words_zh.formula_rms_scale",
    "(x - mean) / scale · weight + bias": "words_zh.formula_ln_out",
    "x / scale · weight": "words_zh.formula_rms_out",
}
SITES = {"encoder": "check_site_encoder", "decoder": "check_site_decoder"}
SITES["decoder cross-attention"] = "check_site_decoder_cross"


def check_report(report, lang: str | None = None) -> str:
    """The report, one line per check after a head line, as str(report) writes it in English; in `lang`
    (None: the language qkv speaks, qkv.set_lang / QKV_LANG)."""
    lang = lang_of(lang)

    def say(key: str, /, **fields) -> str:
        return t(f"cli.{key}", lang, **fields)

    mode = say("check_training") if report.training else say("check_evaluation")
    weights = []
    if report.weights_checked:  # the weights' finiteness is one check more
        why = getattr(report, "weights_why", None)  # which weight is not finite, in the reader's language
        note = say_error(why, lang) if why is not None else report.weights
        weights = [say("check_weights_bad", note=note) if report.weights else say("check_weights_ok")]
    passed = sum(i.passed for i in report.items) + (report.weights_checked and report.weights is None)
    head = say("check_head", passed=passed, total=len(report.items) + len(weights), mode=mode)
    if report.tol != TOL:
        head += say("check_half", tol=f"{report.tol:g}")
    return "\n".join([head, *weights] + [_line(item, say, lang) for item in report.items])


def item_line(item, lang: str | None = None) -> str:
    """One check's line (mark, where, name, worst deviation, how many checked) in `lang`."""
    lang = lang_of(lang)
    return _line(item, lambda key, /, **fields: t(f"cli.{key}", lang, **fields), lang)


def _line(item, say, lang: str) -> str:
    mark = say("check_ok") if item.passed else say("check_fail")
    extra = say("check_failing", n=len(item.failures), first=item.failures[0]) if item.failures else ""
    where = say("check_layer", layer=item.layer)
    if item.site:
        site = say(SITES[item.site]) if item.site in SITES else item.site
        where = say("check_site_layer", site=site, layer=item.layer)
    name, worst = _name(item.name, say, lang), f"{item.worst:.3g}"
    return say("check_item", mark=mark, where=where, name=name, worst=worst, checked=item.checked, extra=extra)


def _name(name: str, say, lang: str) -> str:
    if name in NAMES:
        return say(NAMES[name])
    for pattern, key in FORMULAS:
        match = pattern.fullmatch(name)
        if match:
            return say(key, **{k: _formula(v, lang) for k, v in match.groupdict().items()})
    return name_hooks(name, lang)


def _formula(text: str, lang: str) -> str:
    """A part of a check's name: a norm's formula from the catalogue, else with the streams' words."""
    return t(NORM_FORMULAS[text], lang) if text in NORM_FORMULAS else name_hooks(text, lang)
