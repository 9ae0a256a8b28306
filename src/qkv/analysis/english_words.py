"""English words as a translation is judged by them: which are content words, and one stem per word.

A translation's words (as qkv.core.text.corpus.hsk.english_words writes them: lower case, each mark
its own word) are sorted into

- function words (FUNCTION_WORDS, and every contraction: don't, it's, we'll): articles, pronouns and
  their possessives, prepositions, conjunctions, the forms of be / have / do, the modals, question
  words, negation and the quantifiers and degree words (all, many, very, too). English needs them
  whether or not the Chinese writes a word for them, so they are never judged;
- marks (anything without a letter or digit), never judged either;
- content words: everything else (nouns, verbs, adjectives, most adverbs, numbers).

`stem` maps the forms of one word to one key, so that "ate", "eating" and "eats" meet the gloss "to
eat", and "apples" the gloss "apple": an irregular form is replaced by its base (IRREGULAR), then
up to two endings are cut (-'s, -ies -> -y, -s, -ing, -ed, -er, -est, -ly), a doubled final consonant is
made single (stopped -> stop), and a final -e and -y are cut or made -i (tasted, taste -> tast; tried,
try -> tri). The stems are keys, not words: both sides of every comparison go through `stem`.
"""

from __future__ import annotations

import re
from functools import cache

FUNCTION_WORDS = frozenset(
    """
    a an the this that these those
    i me my mine myself you your yours yourself yourselves he him his himself she her hers herself
    it its itself we us our ours ourselves they them their theirs themselves one's
    of to in on at by for from with without about into onto over under up down out off through
    across along around near after before since until till during between among against toward
    towards upon within like as than per via
    and or but nor so yet because if though although while whether unless
    am is are was were be been being have has had having do does did doing done
    will would shall should can could may might must
    what which who whom whose where when why how
    not no never yes
    all some any many much more most few little less least very too so also just even quite
    rather such same other another each every both either neither only own
    there here then
    """.split()
)

IRREGULAR = {
    **dict.fromkeys(("went", "gone", "goes"), "go"),
    **dict.fromkeys(("ate", "eaten"), "eat"),
    **dict.fromkeys(("took", "taken"), "take"),
    **dict.fromkeys(("came",), "come"),
    **dict.fromkeys(("saw", "seen"), "see"),
    **dict.fromkeys(("made",), "make"),
    **dict.fromkeys(("said",), "say"),
    **dict.fromkeys(("got", "gotten"), "get"),
    **dict.fromkeys(("gave", "given"), "give"),
    **dict.fromkeys(("found",), "find"),
    **dict.fromkeys(("felt",), "feel"),
    **dict.fromkeys(("fell", "fallen"), "fall"),
    **dict.fromkeys(("knew", "known"), "know"),
    **dict.fromkeys(("thought",), "think"),
    **dict.fromkeys(("told",), "tell"),
    **dict.fromkeys(("bought",), "buy"),
    **dict.fromkeys(("brought",), "bring"),
    **dict.fromkeys(("taught",), "teach"),
    **dict.fromkeys(("caught",), "catch"),
    **dict.fromkeys(("sold",), "sell"),
    **dict.fromkeys(("ran",), "run"),
    **dict.fromkeys(("sat",), "sit"),
    **dict.fromkeys(("stood",), "stand"),
    **dict.fromkeys(("understood",), "understand"),
    **dict.fromkeys(("wrote", "written"), "write"),
    **dict.fromkeys(("spoke", "spoken"), "speak"),
    **dict.fromkeys(("drank", "drunk"), "drink"),
    **dict.fromkeys(("drove", "driven"), "drive"),
    **dict.fromkeys(("rode", "ridden"), "ride"),
    **dict.fromkeys(("swam", "swum"), "swim"),
    **dict.fromkeys(("sang", "sung"), "sing"),
    **dict.fromkeys(("began", "begun"), "begin"),
    **dict.fromkeys(("became",), "become"),
    **dict.fromkeys(("grew", "grown"), "grow"),
    **dict.fromkeys(("threw", "thrown"), "throw"),
    **dict.fromkeys(("flew", "flown"), "fly"),
    **dict.fromkeys(("broke", "broken"), "break"),
    **dict.fromkeys(("woke", "woken"), "wake"),
    **dict.fromkeys(("wore", "worn"), "wear"),
    **dict.fromkeys(("chose", "chosen"), "choose"),
    **dict.fromkeys(("forgot", "forgotten"), "forget"),
    **dict.fromkeys(("met",), "meet"),
    **dict.fromkeys(("paid",), "pay"),
    **dict.fromkeys(("sent",), "send"),
    **dict.fromkeys(("spent",), "spend"),
    **dict.fromkeys(("built",), "build"),
    **dict.fromkeys(("kept",), "keep"),
    **dict.fromkeys(("slept",), "sleep"),
    **dict.fromkeys(("lost",), "lose"),
    **dict.fromkeys(("won",), "win"),
    **dict.fromkeys(("held",), "hold"),
    **dict.fromkeys(("heard",), "hear"),
    **dict.fromkeys(("meant",), "mean"),
    **dict.fromkeys(("lent",), "lend"),
    **dict.fromkeys(("left",), "leave"),
    **dict.fromkeys(("led",), "lead"),
    **dict.fromkeys(("fed",), "feed"),
    **dict.fromkeys(("hung",), "hang"),
    **dict.fromkeys(("drew", "drawn"), "draw"),
    **dict.fromkeys(("shown",), "show"),
    **dict.fromkeys(("hid", "hidden"), "hide"),
    **dict.fromkeys(("bit", "bitten"), "bite"),
    **dict.fromkeys(("men",), "man"),
    **dict.fromkeys(("women",), "woman"),
    **dict.fromkeys(("children",), "child"),
    **dict.fromkeys(("feet",), "foot"),
    **dict.fromkeys(("teeth",), "tooth"),
    **dict.fromkeys(("mice",), "mouse"),
    **dict.fromkeys(("lives",), "life"),
    **dict.fromkeys(("wives",), "wife"),
    **dict.fromkeys(("knives",), "knife"),
    **dict.fromkeys(("leaves",), "leaf"),
    **dict.fromkeys(("better", "best"), "good"),
    **dict.fromkeys(("worse", "worst"), "bad"),
}

_ENDINGS = ("'s", "s'", "ies", "ing", "ed", "est", "er", "ly", "es", "s")
_LETTER_OR_DIGIT = re.compile(r"[a-z0-9]")
_WORD = re.compile(r"[a-z0-9'’-]+")  # a word of English letters, digits, apostrophes and hyphens


@cache
def is_content(word: str) -> bool:
    """Whether `word` is a content word: English letters and digits (a token such as </s> is none), no
    function word and no contraction (a word with an apostrophe other than a possessive -'s)."""
    w = word.lower()
    if not _WORD.fullmatch(w) or not _LETTER_OR_DIGIT.search(w) or w in FUNCTION_WORDS:
        return False
    return "'" not in w or (w.endswith("'s") and w[:-2] not in FUNCTION_WORDS and "'" not in w[:-2])


@cache
def stem(word: str) -> str:
    """One key for the forms of a word (see the module docstring): apples, apple -> appl; ate -> eat."""
    w = IRREGULAR.get(word.lower(), word.lower())
    for _ in range(2):  # at most two endings: families -> family -> fami, as family -> fami
        end = next((e for e in _ENDINGS if w.endswith(e) and len(w) - len(e) >= 3 and _cut(w, e)), None)
        if end is None:
            break
        w = w[: -len(end)] + ("y" if end == "ies" else "")
        w = IRREGULAR.get(w, w)
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiouls":  # stopped -> stopp -> stop
        w = w[:-1]
    if len(w) >= 4 and w[-1] == "e":
        w = w[:-1]
    if len(w) >= 3 and w[-1] == "y":
        w = w[:-1] + "i"
    return w


def _cut(word: str, end: str) -> bool:
    """Whether `end` may be cut from `word`: a plain -s never after s or u (glass, bus stay whole)."""
    return end != "s" or word[-2] not in "su"


def content_stems(words) -> list[str]:
    """The stems of the content words of `words`, in order (a word may repeat)."""
    return [stem(w) for w in words if is_content(w)]
