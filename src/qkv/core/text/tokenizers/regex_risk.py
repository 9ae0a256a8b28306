"""Two things a tokenizer.json's regex must not do, read off the pattern without running it.

`tokenizers` runs a Split pre-tokenizer's and a Replace normalizer's regex with Oniguruma, which
backtracks. Two shapes of pattern break an encode:

    nested repetition   a group that repeats and holds something that repeats without bound:
                        (a+)+$ on "aaaa…b" tries every way of cutting the a's (2^n), until
                        Oniguruma's retry limit stops it with a panic
    empty match         a Replace pattern that can match no characters at all ("", a*): tokenizers
                        panics on it ("index out of bounds")

`scan(pattern)` reads the pattern once, by recursive descent over Oniguruma's syntax as tokenizer
files use it (groups, classes, escapes such as \\p{L}, quantifiers *, +, ?, {n,m} and their lazy and
possessive forms), and gives the fewest characters it can match and whether it nests repetition.
Other backtracking traps ((a|a)+) are not seen here: the encode itself turns their panic into a
refusal (safety.py).
"""

from __future__ import annotations

from dataclasses import dataclass

_ZERO_WIDTH_ESCAPES = set("bBAzZG")  # anchors: they match no character
_BRACED_ESCAPES = set("pPxk")  # \p{L}, \x{263a}, \k<name>: one atom, its braces included


@dataclass(frozen=True)
class Shape:
    """What scan found: the fewest characters the pattern matches, and whether it repeats a repetition."""

    min_len: int
    nested: bool


@dataclass
class _Part:
    min_len: int = 0
    unbounded: bool = False  # holds a * + or {n,}
    nested: bool = False


def scan(pattern: str) -> Shape:
    """The Shape of `pattern` (see the module docstring)."""
    part, _ = _alternatives(pattern, 0)
    return Shape(part.min_len, part.nested)


def _alternatives(p: str, i: int) -> tuple[_Part, int]:
    """a|b|c up to a closing ')' or the end: min over the alternatives, any of their flags."""
    options = []
    while True:
        part, i = _sequence(p, i)
        options.append(part)
        if i < len(p) and p[i] == "|":
            i += 1
            continue
        break
    out = _Part(min(o.min_len for o in options))
    out.unbounded = any(o.unbounded for o in options)
    out.nested = any(o.nested for o in options)
    return out, i


def _sequence(p: str, i: int) -> tuple[_Part, int]:
    """Atoms, each with its quantifier, up to '|', ')' or the end: the sum of their fewest characters."""
    out = _Part()
    while i < len(p) and p[i] not in "|)":
        atom, i = _atom(p, i)
        low, high, i = _quantifier(p, i)
        out.min_len += atom.min_len * low
        out.nested |= atom.nested or (atom.unbounded and (high is None or high > 1))
        out.unbounded |= atom.unbounded or high is None
    return out, i


def _atom(p: str, i: int) -> tuple[_Part, int]:
    """One atom at p[i]: a group, a class, an escape, an anchor or one character."""
    c = p[i]
    if c == "(":
        return _group(p, i + 1)
    if c == "[":
        return _Part(1), _class_end(p, i + 1)
    if c == "\\" and i + 1 < len(p):
        e = p[i + 1]
        if e in _BRACED_ESCAPES and i + 2 < len(p) and p[i + 2] in "{<":
            close = p.find("}" if p[i + 2] == "{" else ">", i + 3)
            return _Part(1), (close + 1 if close >= 0 else len(p))
        return _Part(0 if e in _ZERO_WIDTH_ESCAPES else 1), i + 2
    if c in "^$":
        return _Part(0), i + 1
    return _Part(1), i + 1


def _group(p: str, i: int) -> tuple[_Part, int]:
    """A group whose '(' is at i - 1: (?:…), (?i:…), (?<name>…), (?>…) match what they hold; lookarounds
    (?=…) (?!…) (?<=…) (?<!…) match no characters; (?i) alone sets flags."""
    zero_width = False
    if p.startswith("?", i):
        rest = p[i + 1 :]
        if rest.startswith(("=", "!", "<=", "<!")):
            zero_width, i = True, i + (2 if rest[0] in "=!" else 3)
        elif rest.startswith(">"):
            i += 2
        elif rest.startswith(("<", "P<", "'")):
            close = p.find(">" if rest[0] != "'" else "'", i + 2)
            i = close + 1 if close >= 0 else len(p)
        else:  # flags: (?i:…) or (?i) alone
            j = i + 1
            while j < len(p) and (p[j].isalpha() or p[j] == "-"):
                j += 1
            if j < len(p) and p[j] == ")":
                return _Part(0), j + 1
            i = j + 1
    inner, i = _alternatives(p, i)
    i = i + 1 if i < len(p) and p[i] == ")" else i
    if zero_width:
        inner = _Part(0, unbounded=False, nested=inner.nested)
    return inner, i


def _class_end(p: str, i: int) -> int:
    """The index after the ']' that closes a class opened before i (classes may nest: [a-z&&[^aeiou]])."""
    depth, first = 1, True
    while i < len(p) and depth:
        c = p[i]
        if c == "\\":
            i += 2
            first = False
            continue
        if c == "[" and not first:
            depth += 1
        elif c == "]" and not (first or p[i - 1 : i] == "^" and p[i - 2 : i - 1] == "["):
            depth -= 1
        first = c == "^" and first
        i += 1
    return i


def _quantifier(p: str, i: int) -> tuple[int, int | None, int]:
    """The quantifier at p[i] as (fewest, most or None for no bound, index after it); (1, 1, i) for none.
    A '?' or '+' right after one makes it lazy or possessive and changes no count."""
    if i >= len(p):
        return 1, 1, i
    c = p[i]
    if c in "*+?":
        low, high, i = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c] + (i + 1,)
    elif c == "{":
        close = p.find("}", i)
        body = p[i + 1 : close] if close > 0 else ""
        lo, comma, hi = body.partition(",")
        if close < 0 or not (lo.isdigit() or (comma and lo == "")) or (hi and not hi.isdigit()):
            return 1, 1, i  # a literal '{'
        low = int(lo) if lo else 0
        high = (int(hi) if hi else None) if comma else low
        i = close + 1
    else:
        return 1, 1, i
    if i < len(p) and p[i] in "?+":
        i += 1
    return low, high, i


__all__ = ["Shape", "scan"]
