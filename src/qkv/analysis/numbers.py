"""Numbers as people write them: safe parsing of small expressions, and exact forms for display.

Parsing (`parse_number`, `parse_vector`, `parse_matrix`) reads text such as ``"sqrt(2), 0"`` or
``"ln(2),0; 0,1; 0,-1"`` with Python's `ast` module and evaluates only a whitelist of node types:
numbers, + - * / and powers (``^`` or ``**``), parentheses, the functions sqrt, ln, log (natural;
``log(x, b)`` is the logarithm to base b), exp, and the constants pi and e. Nothing is ever
passed to eval or exec; anything else is a one-line ValueError naming the text.

Display (`closed_form`, `fmt`, `latex`) finds a simple exact form r·B for a float x, where r = p/q
is a fraction with q ≤ 64 and B is one of 1, √n, ln n, √n·ln m, π, e, accepted when
|x − r·B| ≤ 1e-12·max(1, |x|). So 0.5 shows as "1/2", 0.6931… as "ln 2", 1.1547… as "2√3/3".
"""

from __future__ import annotations

import ast
import math
import operator
from fractions import Fraction
from functools import lru_cache

import numpy as np

TOL = 1e-12
MAX_DEN = 64
MAX_TEXT = 2000

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_CONSTANTS = {"pi": math.pi, "e": math.e}


def _log(x: float, base: float | None = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


# name -> (smallest and largest number of arguments, function)
_FUNCTIONS = {"sqrt": (1, 1, math.sqrt), "ln": (1, 1, math.log), "log": (1, 2, _log), "exp": (1, 1, math.exp)}


def _eval(node: ast.AST) -> float:
    """Evaluate one whitelisted node; every other node type is refused."""
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)  # floats everywhere: 10**10**10 overflows instead of hanging
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        lo, hi, fn = _FUNCTIONS[node.func.id]
        if not lo <= len(node.args) <= hi:
            raise ValueError(f"{node.func.id}() takes {lo if lo == hi else f'{lo} or {hi}'} argument(s)")
        return fn(*(_eval(a) for a in node.args))
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
        raise ValueError(f"calling {name!r} is not allowed (allowed: {', '.join(_FUNCTIONS)}, positional arguments)")
    if isinstance(node, ast.Name):
        raise ValueError(f"unknown name {node.id!r} (allowed: {', '.join([*_CONSTANTS, *_FUNCTIONS])})")
    raise ValueError(f"{type(node).__name__} is not allowed")


def parse_number(text: str) -> float:
    """The value of a small arithmetic expression, e.g. "1/2", "sqrt(2)/2", "ln(2)", "2^-3", "-pi"."""
    if not isinstance(text, str):
        raise ValueError(f"expected text, got {type(text).__name__}")
    source = text.strip().replace("^", "**").replace("\u2212", "-")  # also accept the Unicode minus
    shown = " ".join(text.split())[:80]
    if not source:
        raise ValueError("empty number")
    if len(source) > MAX_TEXT:
        raise ValueError(f"number too long ({len(source)} characters): {shown!r}...")
    try:
        value = _eval(ast.parse(source, mode="eval"))
    except SyntaxError:
        raise ValueError(f"cannot read {shown!r} as a number") from None
    except OverflowError:
        raise ValueError(f"cannot read {shown!r} as a number: the value is too large") from None
    except (ValueError, ZeroDivisionError, TypeError, RecursionError, MemoryError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ValueError(f"cannot read {shown!r} as a number: {reason}") from None
    if isinstance(value, complex) or not math.isfinite(value):  # (-8)**0.5 is complex in Python
        raise ValueError(f"cannot read {shown!r} as a number: the value is not a finite real number")
    return float(value)


def parse_vector(text: str) -> list[float]:
    """Comma-separated numbers: "sqrt(2),0" -> [1.414..., 0.0]. An empty entry is an error."""
    entries = _split_top_level(text, ",")
    for j, entry in enumerate(entries):
        if not entry.strip():
            raise ValueError(f"empty entry {j + 1} in {text.strip()!r}")
    return [parse_number(e) for e in entries]


def parse_matrix(text: str) -> list[list[float]]:
    """Rows separated by ';', entries by ',': "ln(2),0; 0,1; 0,-1" -> 3 rows of 2 numbers."""
    rows = [r for r in text.split(";")]
    if rows and not rows[-1].strip():  # allow one trailing ';'
        rows = rows[:-1]
    if not rows or not any(r.strip() for r in rows):
        raise ValueError("empty matrix: give rows separated by ';' and entries by ','")
    matrix = []
    for i, row in enumerate(rows):
        if not row.strip():
            raise ValueError(f"row {i + 1} is empty in {text.strip()!r}")
        try:
            matrix.append(parse_vector(row))
        except ValueError as e:
            raise ValueError(f"row {i + 1} ({row.strip()!r}): {e}") from None
        if len(matrix[-1]) != len(matrix[0]):
            raise ValueError(f"row {i + 1} ({row.strip()!r}) has {len(matrix[-1])} entries, row 1 has {len(matrix[0])}")
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
