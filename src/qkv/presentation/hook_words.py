"""What each activation's name means, said beside the name. One place for these words (the catalogue's
area "words_zh", keys hook_<name>), read by the check report (`qkv trace --check`), the figures, `qkv
demo` and the page (/api/model's "hook_words").

    hook_word("blocks.0.hook_resid_pre", "zh")            # "进入本块的残差流"
    named("attn_out", "zh")                               # "注意力的输出 attn_out"; English: "attn_out"
    name_hooks("resid_mid = resid_pre + attn_out", "zh")  # every stream's name in a formula, its word before it

A name is TransformerLens's (qkv records the same): its last part without "hook_" is the short name
the words are kept under.
"""

from __future__ import annotations

import re

from qkv.presentation.i18n import catalogue, lang_of, t

AREA = "words_zh"
# the residual stream and what is added to it: the names a formula or a label writes bare (q, k, v, z are
# the seeds' letters and stay letters)
STREAM = ("resid_mid_cross", "resid_pre", "resid_mid", "resid_post", "cross_attn_out", "attn_out", "mlp_out")
_STREAM = re.compile(r"(?<![\w.])(" + "|".join(STREAM) + r")(?!\w)")


def short(name: str) -> str:
    """A hook's short name: blocks.0.attn.hook_z -> z, hook_embed -> embed, resid_pre -> resid_pre."""
    return name.rsplit(".", 1)[-1].removeprefix("hook_")


def hook_word(name: str, lang: str | None = None) -> str | None:
    """What the activation `name` is, in `lang` (None: qkv's language); None for a name without a word."""
    return catalogue(lang_of(lang), AREA).get(f"hook_{short(name)}")


def named(name: str, lang: str | None = None) -> str:
    """The name with its word beside it, as `lang` writes them ("注意力的输出 attn_out"; English: the name)."""
    word = hook_word(name, lang)
    return name if word is None else t(f"{AREA}.named", lang_of(lang), word=word, name=name)


def name_hooks(text: str, lang: str | None = None) -> str:
    """`text` (a formula: "resid_mid = resid_pre + attn_out") with each stream's name said by named()."""
    return _STREAM.sub(lambda m: named(m.group(1), lang), text)


def hook_words(lang: str) -> dict[str, str]:
    """Short name -> word, every name the catalogue has a word for, in `lang` (what the page reads)."""
    return {k.removeprefix("hook_"): v for k, v in catalogue(lang_of(lang), AREA).items() if k.startswith("hook_")}
