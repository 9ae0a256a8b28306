"""One query attending over a few keys and values, derived step by step with exact numbers.

    dots_j = q · k_j                      how well key j matches the query
    s_j    = dots_j / √d_k                the scaled score
    a_j    = e^{s_j} / Σ_i e^{s_i}        softmax (computed as e^{s_j − max s} / Σ_i e^{s_i − max s})
    z      = Σ_j a_j v_j                  a convex combination: z lies in the convex hull of the v_j

`attend(q, K, V)` returns a `Derivation` that renders as text, Markdown, LaTeX or JSON in Chinese
("zh") or English ("en"), shows every number in closed form when it has one (numbers.closed_form),
checks the hull claim with a linear program (geometry.convex_weights) and draws it (figure).

JSON (`Derivation.to_json()`), format "qkv-explain" version 1, kind "attend". Numbers are floats
(null where e^{s_j} overflows); n keys, d = len(q), d_v = value size:

    format, version, kind        "qkv-explain", 1, "attend"
    n, d_v                       ints
    q (d,)  K (n, d)  V (n, d_v) the inputs
    d_k, sqrt_d_k                the scale √d_k (d_k defaults to d)
    dot_terms (n, d)             the products q_i·k_{j,i};  dots (n,) their sums q·k_j
    scores (n,)                  s_j = q·k_j / √d_k;  max_score = max_j s_j
    shifted (n,)                 s_j − max s
    exps (n,), total             e^{s_j} and their sum
    exps_shifted (n,), total_shifted   e^{s_j − max s} and their sum (what is actually computed)
    weights (n,)                 a_j
    contributions (n, d_v)       a_j·v_j;  z (d_v,) their sum
    hull                         {"inside": bool, "distance": L1 distance of z to conv(V), 0 inside,
                                  "weights": (n,) w ≥ 0, Σw = 1 with Σ w_j v_j = z found by the LP}
    display, latex               the same keys (numbers only, hull without "inside"), same shapes,
                                 each number as text ("ln 2", "1/2", "0.183") or LaTeX ("\\ln 2")
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass

import numpy as np

from ..i18n import LANGS, check_lang, pick
from .geometry import HullResult, convex_weights
from .numbers import fmt, latex, parse_number, parse_vector, parse_matrix

MESSAGES = {
    "title": {"zh": "一个查询的注意力，逐步计算（d_k = {dk}）", "en": "Attention for one query, step by step (d_k = {dk})"},
    "inputs": {"zh": "输入：查询 q，键 k_j，值 v_j", "en": "Inputs: the query q, keys k_j and values v_j"},
    "dots": {"zh": "匹配：点积 q·k_j 衡量第 j 个键与查询有多契合", "en": "Match: the dot product q·k_j measures how well key j fits the query"},
    "scale": {"zh": "缩放：除以 √d_k = {r}，让分数不随维度变大而失控",
              "en": "Scale: divide by √d_k = {r}, so scores do not grow with the dimension"},
    "exp": {"zh": "取指数：e^{s_j} 把每个分数变成正数", "en": "Exponentiate: e^{s_j} turns every score into a positive number"},
    "stable": {"zh": "实际计算时先减去最大分数 max s = {m}（防止溢出），比例不变：",
               "en": "In practice the largest score max s = {m} is subtracted first (no overflow); the ratios are unchanged:"},
    "norm": {"zh": "归一化：a_j = e^{s_j} / Σ e^{s_i}，每个 a_j ≥ 0，总和为 1",
             "en": "Normalise: a_j = e^{s_j} / Σ e^{s_i}; every a_j ≥ 0 and they add up to 1"},
    "mix": {"zh": "加权求和：z = Σ a_j v_j，用权重混合各个值", "en": "Mix: z = Σ a_j v_j blends the values by their weights"},
    "hull": {"zh": "检验：z 在值向量的凸包内吗？", "en": "Check: is z inside the convex hull of the values?"},
    "inside": {"zh": "在。线性规划找到权重 w = {w}（w ≥ 0，Σ w = 1），使 Σ w_j v_j = z；距离为 0。",
               "en": "Yes. A linear program finds weights w = {w} (w ≥ 0, Σ w = 1) with Σ w_j v_j = z; distance 0."},
    "other_w": {"zh": "（值向量仿射相关时凸组合不唯一，所以 w 可以与 a 不同；任何一组 w 都足以证明 z 在凸包内。）",
                "en": "(When the values are affinely dependent the combination is not unique, so w may differ from a; any such w proves the point.)"},
    "outside": {"zh": "不在：z 到凸包的 L1 距离为 {d}。这不应发生，说明数值出了问题。",
                "en": "No: z is at L1 distance {d} from the hull. This should not happen; it signals a numerical problem."},
    "note": {"zh": "注意：只有单个头、且权重已归一化时，z 才一定在值的凸包内。多头拼接后乘 W_O、再加上残差 x，"
                   "或训练中对权重做 dropout 而不重新归一化（权重和不再为 1），结果都可能离开这个凸包。",
             "en": "Note: only one head's normalised weights guarantee that z stays inside the hull of the values. "
                   "Concatenating heads and multiplying by W_O, adding the residual x, or applying dropout to the weights "
                   "without renormalising them (their sum is then no longer 1, as in training) can all take the result outside it."},
}


def _vec(x) -> str:
    return "(" + ", ".join(fmt(v) for v in np.ravel(x)) + ")"


def _vec_tex(x) -> str:
    return r"\left(" + ", ".join(latex(v) for v in np.ravel(x)) + r"\right)"


def _factor(x: float, tex: bool = False) -> str:
    s = latex(x) if tex else fmt(x)
    return f"({s})" if s.startswith("-") else s


@dataclass
class Derivation:
    """Every intermediate of z = softmax(q Kᵀ / √d_k) V for one query, plus the hull check."""

    q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    d_k: float
    dot_terms: np.ndarray
    dots: np.ndarray
    scores: np.ndarray
    shifted: np.ndarray
    exps: np.ndarray
    exps_shifted: np.ndarray
    weights: np.ndarray
    contributions: np.ndarray
    z: np.ndarray
    hull: HullResult
    lang: str = "en"

    @property
    def max_score(self) -> float:
        return float(self.scores.max())

    @property
    def total(self) -> float:
        return float(self.exps.sum())

    @property
    def total_shifted(self) -> float:
        return float(self.exps_shifted.sum())

    # --- one structure, three renderings: steps of (heading, [("math", text, tex) | ("prose", text)])
    def _steps(self, lang: str) -> list[tuple[str, list[tuple]]]:
        M = {k: pick(v, lang) for k, v in MESSAGES.items()}
        n, d = self.K.shape
        inputs = [("math", f"q = {_vec(self.q)}", f"q = {_vec_tex(self.q)}")]
        keys = [f"k{j + 1} = {_vec(k)}," for j, k in enumerate(self.K)]
        width = max(len(k) for k in keys)
        for j in range(n):
            inputs.append(("math", f"{keys[j]:<{width}}  v{j + 1} = {_vec(self.V[j])}",
                           rf"k_{{{j + 1}}} = {_vec_tex(self.K[j])},\quad v_{{{j + 1}}} = {_vec_tex(self.V[j])}"))
        dots = []
        for j in range(n):
            idx = list(range(d)) if d <= 6 else [0, 1, 2, None, d - 1]  # long sums keep their ends
            t = " + ".join("…" if i is None else f"{_factor(self.q[i])}·{_factor(self.K[j, i])}" for i in idx)
            x = " + ".join(r"\cdots" if i is None else rf"{_factor(self.q[i], True)}\cdot {_factor(self.K[j, i], True)}"
                           for i in idx)
            dots.append(("math", f"q·k{j + 1} = {t} = {fmt(self.dots[j])}", rf"q\cdot k_{{{j + 1}}} = {x} = {latex(self.dots[j])}"))
        r = math.sqrt(self.d_k)
        m = self.max_score
        a_sum = float(self.weights.sum())
        mix = [("math", f"a{j + 1}·v{j + 1} = {_factor(self.weights[j])}·{_vec(self.V[j])} = {_vec(self.contributions[j])}",
                rf"a_{{{j + 1}}} v_{{{j + 1}}} = {_factor(self.weights[j], True)}\cdot {_vec_tex(self.V[j])} = "
                rf"{_vec_tex(self.contributions[j])}") for j in range(n)]
        mix.append(("math", f"z = {_vec(self.z)}", rf"z = \boxed{{{_vec_tex(self.z)}}}"))
        if self.hull.inside:
            verdict = [("prose", M["inside"].format(w=_vec(self.hull.weights)))]
            if not np.allclose(self.hull.weights, self.weights, atol=1e-9):
                verdict.append(("prose", M["other_w"]))
        else:
            verdict = [("prose", M["outside"].format(d=fmt(self.hull.distance)))]
        return [
            (M["inputs"], inputs + [("math", f"d_k = {fmt(self.d_k)}", f"d_k = {latex(self.d_k)}")]),
            (M["dots"], dots),
            (M["scale"].format(r=fmt(r)), [("math", f"s = {_vec(self.scores)}", f"s = {_vec_tex(self.scores)}")]),
            (M["exp"], [("math", f"e^s = {_vec(self.exps)},   Σ = {fmt(self.total)}",
                         rf"e^{{s}} = {_vec_tex(self.exps)},\quad \textstyle\sum = {latex(self.total)}"),
                        ("prose", M["stable"].format(m=fmt(m))),
                        ("math", f"e^(s - {fmt(m)}) = {_vec(self.exps_shifted)},   Σ = {fmt(self.total_shifted)}",
                         rf"e^{{s - {latex(m)}}} = {_vec_tex(self.exps_shifted)},\quad \textstyle\sum = {latex(self.total_shifted)}")]),
            (M["norm"], [("math", f"a = {_vec(self.weights)},   Σ a = {fmt(a_sum)}",
                          rf"a = {_vec_tex(self.weights)},\quad \textstyle\sum a = {latex(a_sum)}")]),
            (M["mix"], mix),
            (M["hull"], verdict),
        ]

    def _title(self, lang: str) -> str:
        return pick(MESSAGES["title"], lang).format(dk=fmt(self.d_k))

    def to_text(self, lang: str | None = None) -> str:
        """Plain text (Unicode), one numbered step per paragraph."""
        lang = check_lang(lang or self.lang)
        out = [self._title(lang), ""]
        for i, (head, lines) in enumerate(self._steps(lang)):
            out.append(f"{i}. {head}" if i else head)
            out += [f"   {line[1]}" for line in lines]
        out += ["", pick(MESSAGES["note"], lang)]
        return "\n".join(out)

    def to_markdown(self, lang: str | None = None) -> str:
        """Markdown with $…$ math (renders in Jupyter and most Markdown viewers)."""
        lang = check_lang(lang or self.lang)
        out = [f"### {self._title(lang)}", ""]
        for i, (head, lines) in enumerate(self._steps(lang)):
            out.append(f"**{i}. {head}**" if i else f"**{head}**")
            out.append("")
            out += [f"- ${line[2]}$" if line[0] == "math" else line[1] for line in lines]
            out.append("")
        out += [f"> {pick(MESSAGES['note'], lang)}"]
        return "\n".join(out)

    def to_latex(self, lang: str | None = None) -> str:
        """A LaTeX fragment (amsmath; Chinese text needs ctex or xeCJK in the preamble)."""
        lang = check_lang(lang or self.lang)
        out = [rf"\paragraph{{{_tex_text(self._title(lang))}}}"]
        for i, (head, lines) in enumerate(self._steps(lang)):
            out.append(rf"\paragraph{{{i}. {_tex_text(head)}}}" if i else rf"\paragraph{{{_tex_text(head)}}}")
            for kind, group in _groups(lines):
                if kind == "math":
                    out += [r"\begin{gather*}", " \\\\\n".join(line[2] for line in group), r"\end{gather*}"]
                else:
                    out += [_tex_text(line[1]) for line in group]
        out.append(rf"\par\noindent\emph{{{_tex_text(pick(MESSAGES['note'], lang))}}}")
        return "\n".join(out)

    def to_json(self) -> dict:
        """The format described in this module's docstring."""
        numbers = {"q": self.q, "K": self.K, "V": self.V, "d_k": self.d_k, "sqrt_d_k": math.sqrt(self.d_k),
                   "dot_terms": self.dot_terms, "dots": self.dots, "scores": self.scores, "max_score": self.max_score,
                   "shifted": self.shifted, "exps": self.exps, "total": self.total, "exps_shifted": self.exps_shifted,
                   "total_shifted": self.total_shifted, "weights": self.weights, "contributions": self.contributions,
                   "z": self.z}
        hull = {"distance": self.hull.distance, "weights": self.hull.weights}
        out = {"format": "qkv-explain", "version": 1, "kind": "attend", "n": int(self.K.shape[0]),
               "d_v": int(self.V.shape[1])}
        out.update({k: _tree(v, _num) for k, v in numbers.items()})
        out["hull"] = {"inside": self.hull.inside, **{k: _tree(v, _num) for k, v in hull.items()}}
        for key, form in (("display", fmt), ("latex", latex)):
            out[key] = {k: _tree(v, form) for k, v in numbers.items()}
            out[key]["hull"] = {k: _tree(v, form) for k, v in hull.items()}
        return out

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def figure(self, path, lang: str | None = None):
        """Draw the values, their hull, the weights and z (plot_hull.hull_figure); returns its HullFigure."""
        from .plot_hull import hull_figure

        labels = [f"v{j + 1} {_vec(v)}" if self.V.shape[1] <= 3 else f"v{j + 1}" for j, v in enumerate(self.V)]
        return hull_figure(self.V, self.z, self.weights, path, labels=labels, lang=check_lang(lang or self.lang))


def _groups(lines):
    """Consecutive lines of the same kind, grouped: [(kind, [line, ...]), ...]."""
    groups = []
    for line in lines:
        if groups and groups[-1][0] == line[0]:
            groups[-1][1].append(line)
        else:
            groups.append((line[0], [line]))
    return groups


_FORMULA = re.compile(r"[A-Za-z0-9√Σ·{}]*[_^][A-Za-z0-9{}_^·]*")  # a_j, e^{s_j}, q·k_j, √d_k, W_O in prose


def _tex_text(text: str) -> str:
    """Prose into LaTeX: small formulas go into $…$, the other specials are escaped."""
    def prose(t: str) -> str:
        for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("#", r"\#"), ("{", r"\{"), ("}", r"\}"),
                     ("Σ", r"$\Sigma$"), ("√", r"$\surd$"), ("≥", r"$\geq$"), ("·", r"$\cdot$")):
            t = t.replace(a, b)
        return t

    def formula(t: str) -> str:
        t = re.sub(r"√([A-Za-z0-9_]+)", r"\\sqrt{\1}", t)
        return "$" + t.replace("·", r"\cdot ").replace("Σ", r"\sum ") + "$"

    out, last = [], 0
    for m in _FORMULA.finditer(text):
        out += [prose(text[last:m.start()]), formula(m.group())]
        last = m.end()
    return "".join(out) + prose(text[last:])


def _num(x: float) -> float | None:
    x = float(x) + 0.0  # + 0.0 turns -0.0 into 0.0
    return x if math.isfinite(x) else None  # JSON has no infinity


def _tree(x, leaf):
    """Apply `leaf` to every number of a scalar or (nested) array, keeping the shape as lists."""
    if np.ndim(x) == 0:
        return leaf(float(x))
    return [_tree(v, leaf) for v in x]


def _array(x, name: str, ndim: int) -> np.ndarray:
    """Lists, numpy arrays, torch tensors or text (parsed by numbers.py) -> a float64 array of `ndim` dims."""
    if isinstance(x, str):
        if ndim == 1 and ";" in x.strip().rstrip(";"):
            raise ValueError(f"{name} is one vector: separate its entries with ',' (no ';')")
        try:
            x = parse_vector(x.strip().rstrip(";")) if ndim == 1 else parse_matrix(x)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    elif hasattr(x, "detach"):  # a torch tensor
        x = x.detach().cpu().double().numpy()
    elif isinstance(x, (list, tuple)):
        x = _tree_parse(x)
    try:
        a = np.array(x, dtype=float)
    except (ValueError, TypeError):
        raise ValueError(f"{name} has rows of different lengths or entries that are not numbers") from None
    if a.size == 0:
        raise ValueError(f"{name} is empty: give at least one {'entry' if ndim == 1 else 'row'}")
    if ndim == 2 and a.ndim == 1:
        a = a[None, :]  # a single key or value
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {'a vector' if ndim == 1 else 'a matrix (one row per key)'}, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains a number that is not finite")
    return a


def _tree_parse(x):
    if isinstance(x, str):
        return parse_number(x)
    if isinstance(x, (list, tuple)):
        return [_tree_parse(v) for v in x]
    return x


def attend(q, K, V, d_k=None, lang: str = "en") -> Derivation:
    """z = softmax(q Kᵀ / √d_k) V for one query q (d,), keys K (n, d), values V (n, d_v); d_k defaults to d."""
    q, K, V = _array(q, "q", 1), _array(K, "K", 2), _array(V, "V", 2)
    if K.shape[1] != q.shape[0]:
        raise ValueError(f"K has {K.shape[1]} columns but q has {q.shape[0]} entries: each key needs as many as q")
    if V.shape[0] != K.shape[0]:
        raise ValueError(f"V has {V.shape[0]} rows but K has {K.shape[0]}: give one value per key")
    d_k = float(len(q)) if d_k is None else (parse_number(d_k) if isinstance(d_k, str) else float(d_k))
    if not (math.isfinite(d_k) and d_k > 0):
        raise ValueError(f"d_k must be a positive number, got {d_k}")
    dot_terms = q[None, :] * K  # (n, d)
    dots = K @ q  # (n,)
    scores = dots / math.sqrt(d_k)
    shifted = scores - scores.max()
    with np.errstate(over="ignore"):
        exps = np.exp(scores)
    exps_shifted = np.exp(shifted)
    weights = exps_shifted / exps_shifted.sum()
    contributions = weights[:, None] * V  # (n, d_v)
    z = weights @ V
    return Derivation(q=q, K=K, V=V, d_k=d_k, dot_terms=dot_terms, dots=dots, scores=scores, shifted=shifted,
                      exps=exps, exps_shifted=exps_shifted, weights=weights, contributions=contributions, z=z,
                      hull=convex_weights(z, V), lang=check_lang(lang))


# --- the `qkv attend` subcommand (wired into cli.py by its owner)
FORMATS = ("text", "markdown", "latex", "json")


def add_attend_parser(subparsers):
    """Add `qkv attend --q ... --k ... --v ...` to an argparse subparsers object; returns the parser."""
    p = subparsers.add_parser("attend", help="derive one query's attention step by step, with exact numbers",
                              description="Entries are separated by ',' and rows by ';'; sqrt(), ln(), log(), exp(), "
                                          "pi, e and fractions are allowed. A value starting with '-' needs '=': --q=-1,0")
    p.add_argument("--q", required=True, metavar="VECTOR", help='the query, e.g. "sqrt(2),0"')
    p.add_argument("--k", required=True, metavar="MATRIX", help='the keys, one row each, e.g. "ln(2),0; 0,1; 0,-1"')
    p.add_argument("--v", required=True, metavar="MATRIX", help='the values, one row each, e.g. "0,0; 4,0; 0,4"')
    p.add_argument("--dk", metavar="NUMBER", help="the d_k in s = q·k / √d_k (default: the length of q)")
    p.add_argument("--lang", choices=LANGS, default="en", help="language of the explanation (default en)")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    p.add_argument("--figure", metavar="PATH", help="also draw the convex-hull picture (.png or .svg)")
    return p


def run_attend(args) -> None:
    """Print the derivation in the chosen format; write the figure when asked (its path goes to stderr)."""
    d = attend(args.q, args.k, args.v, d_k=args.dk, lang=args.lang)
    if args.figure and not str(args.figure).lower().endswith((".png", ".svg")):
        raise ValueError(f"figure file must end in .png or .svg, got {args.figure!r}")
    if args.format == "json":
        print(json.dumps(d.to_json(), ensure_ascii=False, indent=2))
    else:
        print({"text": d.to_text, "markdown": d.to_markdown, "latex": d.to_latex}[args.format]())
    if args.figure:
        print(d.figure(args.figure).path, file=sys.stderr)
