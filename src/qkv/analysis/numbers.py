"""Numbers as people write them: safe parsing of small expressions, and exact forms for display.

Parsing (`parse_number`, `parse_vector`, `parse_matrix`) reads text such as ``"sqrt(2), 0"``,
``"√2, 0"`` or ``"ln 2,0; 0,1; 0,-1"`` the way the page's playground reads it (static/exact.js):
numbers, + - * / and powers (``^`` or ``**``), parentheses, the functions sqrt or √, ln, log
(natural; ``log(x, b)`` is the logarithm to base b) and exp, with or without brackets around one
argument (``ln 2``), the constants pi or π and e, and a product without a sign when a name or a
bracket follows a number (``2√3``, ``3 ln 2``). A small reader of that grammar computes the value;
nothing is ever passed to eval or exec, and anything else is a one-line ValueError naming the text.

Display (`closed_form`, `fmt`, `latex`) finds a simple exact form r·B for a float x, where r = p/q
is a fraction with q ≤ 64 and B is one of 1, √n, ln n, √n·ln m, π, e, accepted when
|x − r·B| ≤ 1e-12·max(1, |x|). So 0.5 shows as "1/2", 0.6931… as "ln 2", 1.1547… as "2√3/3".
"""

from __future__ import annotations

import math
import operator
import re
from fractions import Fraction
from functools import lru_cache

import numpy as np

from qkv.core.io.refusal import Refusal, phrase

TOL = 1e-12
MAX_DEN = 64
MAX_TEXT = 2000

_CONSTANTS = {"pi": math.pi, "π": math.pi, "e": math.e}


def _log(x: float, base: float | None = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


# name -> (smallest and largest number of arguments, function)
_FUNCTIONS = {"sqrt": (1, 1, math.sqrt), "ln": (1, 1, math.log), "log": (1, 2, _log), "exp": (1, 1, math.exp)}
_ALLOWED_NAMES = ["pi", "π", "e", "sqrt", "√", "ln", "log", "exp"]
# what the page's reader (static/exact.js pgParse) rewrites before reading: other minus signs and products
_SAME = str.maketrans({"\u2212": "-", "\u2013": "-", "·": "*", "×": "*", "÷": "/"})
_TOKEN = re.compile(r"[0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|[A-Za-z_π]+|\S")
# a Python error's own words -> the catalogue's, so that they too are said in the reader's language
_REASONS = {"math domain error": "errors.number_domain", "float division by zero": "errors.number_zero_division"}


class _NotANumber(Exception):
    """The text stops being an expression here (parse_number says "cannot read ... as a number")."""


class _NotReal(Exception):
    """A power whose value is complex: (-8)^0.5."""


class _Reader:
    """A recursive-descent reader of one expression, the grammar of the page's playground (exact.js):

        expr  = term {("+" | "-") term}
        term  = unary {"*" unary | "/" unary | power}     a power right after: 2√3, 3 ln 2, 2(1+1)
        unary = ("-" | "+") unary | power
        power = atom ["^" unary]                          "**" is "^"
        atom  = number | "(" expr ")" | "√" atom | pi | π | e | name "(" expr {"," expr} ")" | name atom

    where name is sqrt, ln, log or exp, and "ln 2" is ln(2). Each step is a float operation, so
    10^10^10 overflows instead of running for ever."""

    def __init__(self, tokens: list[str]):
        self.tokens, self.i = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.i += 1
        return token

    def expr(self) -> float:
        value = self.term()
        while self.peek() in ("+", "-"):
            value = value + self.term() if self.take() == "+" else value - self.term()
        return value

    def term(self) -> float:
        value = self.unary()
        while True:
            token = self.peek()
            if token == "*":
                self.take()
                value *= self.unary()
            elif token == "/":
                self.take()
                value /= self.unary()
            elif token == "(" or token == "√" or _is_name(token):
                value *= self.power()
            else:
                return value

    def unary(self) -> float:
        if self.peek() == "-":
            self.take()
            return -self.unary()
        if self.peek() == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> float:
        base = self.atom()
        if self.peek() != "^":
            return base
        self.take()
        exponent = self.unary()
        value = operator.pow(base, exponent)
        if isinstance(value, complex):  # (-8)^0.5
            raise _NotReal
        return value

    def atom(self) -> float:
        token = self.take()
        if token is None:
            raise _NotANumber
        if token[0].isdigit() or token[0] == ".":
            return float(token)
        if token == "(":
            value = self.expr()
            self.expect(")")
            return value
        if token == "√":
            return math.sqrt(self.atom())
        if not _is_name(token):
            raise _NotANumber
        if token in _CONSTANTS:
            return _CONSTANTS[token]
        if token not in _FUNCTIONS:
            if self.peek() == "(":
                raise Refusal.of("errors.number_call", name=repr(token), functions=list(_FUNCTIONS))
            raise Refusal.of("errors.number_name", name=repr(token), allowed=_ALLOWED_NAMES)
        lo, hi, fn = _FUNCTIONS[token]
        if self.peek() != "(":
            return fn(self.atom())  # ln 2, sqrt 2: the function of the next atom
        self.take()
        args = [self.expr()]
        while self.peek() == ",":
            self.take()
            args.append(self.expr())
        self.expect(")")
        if not lo <= len(args) <= hi:
            count = str(lo) if lo == hi else f"{lo} or {hi}"
            raise Refusal.of("errors.number_arguments", name=token, count=count)
        return fn(*args)

    def expect(self, token: str) -> None:
        if self.take() != token:
            raise _NotANumber


def _is_name(token: str | None) -> bool:
    return token is not None and (token[0].isalpha() or token[0] == "_")


def parse_number(text: str) -> float:
    """The value of a small arithmetic expression, as the page's playground reads it: "1/2",
    "sqrt(2)/2", "√2", "ln(2)", "ln 2", "2^-3", "2**-3", "3 ln 2", "2√3/3", "-pi", "π/2"."""
    if not isinstance(text, str):
        raise Refusal.of("errors.number_type", type=type(text).__name__)
    source = text.strip().translate(_SAME).replace("**", "^")
    shown = repr(" ".join(text.split())[:80])
    if not source:
        raise Refusal.of("errors.number_empty")
    if len(source) > MAX_TEXT:
        raise Refusal.of("errors.number_too_long", n=len(source), text=shown)
    reader = _Reader(_TOKEN.findall(source))
    try:
        value = reader.expr()
        if reader.peek() is not None:
            raise _NotANumber
    except _NotANumber:
        raise Refusal.of("errors.number_unreadable", text=shown) from None
    except (Refusal, ValueError, ZeroDivisionError, OverflowError, RecursionError, _NotReal) as e:
        raise Refusal.of("errors.number_because", text=shown, why=_why(e)) from None
    if not math.isfinite(value):
        raise Refusal.of("errors.number_because", text=shown, why=phrase("errors.number_not_real"))
    return float(value)


def _why(error: Exception):
    """Why a text is not a number, as parse_number says it after "cannot read '...' as a number: "."""
    if isinstance(error, Refusal):  # an unknown name, a wrong number of arguments
        return error
    if isinstance(error, _NotReal):
        return phrase("errors.number_not_real")
    if isinstance(error, OverflowError):
        return phrase("errors.number_too_large")
    if isinstance(error, RecursionError):
        return phrase("errors.number_too_deep")
    if isinstance(error, ZeroDivisionError):  # 1/0, and 0 to a negative power, whatever Python calls it
        return phrase("errors.number_zero_division")
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    return phrase(_REASONS[reason]) if reason in _REASONS else reason


def parse_vector(text: str) -> list[float]:
    """Comma-separated numbers: "sqrt(2),0" -> [1.414..., 0.0]. An empty entry is an error."""
    entries = _split_top_level(text, ",")
    for j, entry in enumerate(entries):
        if not entry.strip():
            raise Refusal.of("errors.number_empty_entry", j=j + 1, text=repr(text.strip()))
    return [parse_number(e) for e in entries]


def parse_matrix(text: str) -> list[list[float]]:
    """Rows separated by ';', entries by ',': "ln(2),0; 0,1; 0,-1" -> 3 rows of 2 numbers."""
    rows = [r for r in text.split(";")]
    if rows and not rows[-1].strip():  # allow one trailing ';'
        rows = rows[:-1]
    if not rows or not any(r.strip() for r in rows):
        raise Refusal.of("errors.number_empty_matrix")
    matrix = []
    for i, row in enumerate(rows):
        if not row.strip():
            raise Refusal.of("errors.number_empty_row", i=i + 1, text=repr(text.strip()))
        try:
            matrix.append(parse_vector(row))
        except ValueError as e:
            raise Refusal.of("errors.number_in_row", i=i + 1, row=repr(row.strip()), error=e) from None
        if len(matrix[-1]) != len(matrix[0]):
            raise Refusal.of(
                "errors.number_ragged", i=i + 1, row=repr(row.strip()), n=len(matrix[-1]), first=len(matrix[0])
            )
    return matrix


def _split_top_level(text: str, sep: str) -> list[str]:
    """Split on `sep` outside parentheses, so "log(8, 2), 1" is two entries."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


# ----------------------------------------------------------------------------------------------
# Exact forms. A form is (r, base) with r a Fraction and base a key of _bases(): x = r * value(base).


def _squarefree(n: int) -> bool:
    return all(n % (p * p) for p in range(2, int(n**0.5) + 1))


@lru_cache(maxsize=1)  # a fixed table: ~300 bases
def _bases() -> list[tuple[tuple, float]]:
    """The irrational bases tried, simplest first: √n, ln n, √n·ln m, π, e."""
    roots = [n for n in range(2, 101) if _squarefree(n)]
    bases = [(("sqrt", n), math.sqrt(n)) for n in roots]
    bases += [(("ln", n), math.log(n)) for n in range(2, 21)]
    bases += [(("sqrtln", n, m), math.sqrt(n) * math.log(m)) for n in roots if n <= 20 for m in range(2, 21)]
    return bases + [(("pi",), math.pi), (("e",), math.e)]


def _close(x: float, y: float) -> bool:
    return abs(x - y) <= TOL * max(1.0, abs(x))


def _fraction(x: float) -> Fraction | None:
    if not math.isfinite(x) or abs(x) > 1e15:
        return None
    if abs(x) > 1e6:  # large: only integers
        return Fraction(round(x)) if _close(x, round(x)) else None
    r = Fraction(x).limit_denominator(MAX_DEN)
    if r == 0 and x != 0:  # 1e-13 is not 0: a number that is not zero never shows as one
        return None
    return r if _close(x, float(r)) else None


@lru_cache(maxsize=4096)  # numbers met again (a head's scale, a weight): ~150 bytes each, 0.6 MB in all
def _form(x: float) -> tuple[Fraction, tuple] | None:
    """(r, base) with x == r·base to 1e-12, or None. All bases and denominators are tried at once."""
    if not math.isfinite(x):
        return None
    r = _fraction(x)
    if r is not None:
        return r, ("one",)
    if abs(x) > 1e6:
        return None
    bases, values = _base_table()
    dens = np.arange(1, MAX_DEN + 1)
    nums = np.rint((x / values)[:, None] * dens)  # (bases, dens): the best numerator for each pair
    ok = (nums != 0) & (np.abs(nums) <= 1000) & (np.abs(x - nums / dens * values[:, None]) <= TOL * max(1.0, abs(x)))
    hits = np.flatnonzero(ok.any(axis=1))
    if not len(hits):
        return None
    b = hits[0]  # the simplest base, then the smallest denominator (so the fraction is already reduced)
    q = int(np.argmax(ok[b])) + 1
    return Fraction(int(nums[b, q - 1]), q), bases[b]


@lru_cache(maxsize=1)  # the same table as arrays
def _base_table() -> tuple[list[tuple], np.ndarray]:
    bases = _bases()
    return [b for b, _ in bases], np.array([v for _, v in bases])


def _base_text(base: tuple) -> str:
    kind = base[0]
    return {
        "sqrt": lambda: f"√{base[1]}",
        "ln": lambda: f"ln {base[1]}",
        "sqrtln": lambda: f"√{base[1]}·ln {base[2]}",
        "pi": lambda: "π",
        "e": lambda: "e",
    }[kind]()


def _base_latex(base: tuple) -> str:
    kind = base[0]
    return {
        "sqrt": lambda: rf"\sqrt{{{base[1]}}}",
        "ln": lambda: rf"\ln {base[1]}",
        "sqrtln": lambda: rf"\sqrt{{{base[1]}}}\,\ln {base[2]}",
        "pi": lambda: r"\pi",
        "e": lambda: "e",
    }[kind]()


def closed_form(x: float) -> str | None:
    """A short exact form of x ("3/7", "-√2", "2√3/3", "ln 2", "(3 ln 2)/2", "π/2", "e"), or None."""
    form = _form(float(x))
    if form is None:
        return None
    r, base = form
    sign, p, q = ("-" if r < 0 else ""), abs(r.numerator), r.denominator
    if base == ("one",):
        return f"{sign}{p}" if q == 1 else f"{sign}{p}/{q}"
    b = _base_text(base)
    if base[0] in ("ln", "sqrtln"):  # words need a space after a coefficient, and brackets over a denominator
        top = b if p == 1 else f"{p} {b}" if base[0] == "ln" else f"{p}{b}"
        return f"{sign}{top}" if q == 1 else f"{sign}({top})/{q}"
    top = b if p == 1 else f"{p}{b}"
    return f"{sign}{top}" if q == 1 else f"{sign}{top}/{q}"


def fmt(x: float, digits: int = 6) -> str:
    """The closed form of x when there is one, else a decimal with `digits` significant digits."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    form = closed_form(x)
    return form if form is not None else f"{x:.{digits}g}"


def latex(x: float, digits: int = 6) -> str:
    r"""Like `fmt`, in LaTeX: \sqrt{2}, \ln 2, \frac{1}{2}, -\frac{2\sqrt{3}}{3}, 1.2 \times 10^{-7}."""
    x = float(x)
    if not math.isfinite(x):
        return r"\text{nan}" if math.isnan(x) else (r"\infty" if x > 0 else r"-\infty")
    form = _form(x)
    if form is None:
        mantissa, _, exponent = f"{x:.{digits}g}".partition("e")
        return mantissa if not exponent else rf"{mantissa} \times 10^{{{int(exponent)}}}"
    r, base = form
    sign, p, q = ("-" if r < 0 else ""), abs(r.numerator), r.denominator
    if base == ("one",):
        return f"{sign}{p}" if q == 1 else rf"{sign}\frac{{{p}}}{{{q}}}"
    b = _base_latex(base)
    top = b if p == 1 else f"{p}{b}" if base[0] != "ln" else rf"{p}\,{b}"
    return f"{sign}{top}" if q == 1 else rf"{sign}\frac{{{top}}}{{{q}}}"
