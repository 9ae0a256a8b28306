"""One query's attention shown step by step: the numbers of qkv.analysis.attend as text, Markdown,
LaTeX or a figure, in Chinese or English (message area "attend").

    d = attend("sqrt(2),0", "ln(2),0; 0,1; 0,-1", "0,0; 4,0; 0,4")     # a Derivation
    d.weights, d.z                    # (1/2, 1/4, 1/4), (1, 1)
    print(d.to_text("zh")); d.to_markdown(); d.to_latex(); d.to_json(); d.figure("attend.png")
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qkv.analysis import attend as analysis
from qkv.analysis.numbers import fmt, latex
from qkv.presentation.i18n import check_lang, lang_of, t, translator
from qkv.presentation.text import tex_prose


def attend(q, K, V, d_k=None, lang: str | None = None) -> Derivation:
    """z = softmax(q Kᵀ / √d_k) V for one query (qkv.analysis.attend.attend), ready to be shown in `lang`
    (None: in the language qkv speaks when it is shown: qkv.set_lang, QKV_LANG)."""
    steps = analysis.attend(q, K, V, d_k)
    return Derivation(**vars(steps), lang=None if lang is None else check_lang(lang))


def _vec(x) -> str:
    """A vector in plain text, each entry in its exact form where it has one: (√2, 0)."""
    return "(" + ", ".join(fmt(v) for v in np.ravel(x)) + ")"


def _vec_tex(x) -> str:
    r"""A vector in LaTeX: \left(\sqrt{2}, 0\right)."""
    return r"\left(" + ", ".join(latex(v) for v in np.ravel(x)) + r"\right)"


def _factor(x: float, tex: bool = False) -> str:
    """A number as a factor of a product: bracketed when negative."""
    s = latex(x) if tex else fmt(x)
    return f"({s})" if s.startswith("-") else s


@dataclass
class Derivation(analysis.Steps):
    """The Steps of one query's attention, and the language to show them in (None: qkv's, i18n.get_lang)."""

    lang: str | None = None

    def _steps(self, lang: str) -> list[tuple[str, list[tuple]]]:
        """One structure for the three renderings: [(heading, [("math", text, tex) | ("prose", text)])]."""
        say = translator(lang, "attend")
        r = math.sqrt(self.d_k)
        a_sum = float(self.weights.sum())
        return [
            (say("inputs"), self._inputs() + [("math", f"d_k = {fmt(self.d_k)}", f"d_k = {latex(self.d_k)}")]),
            (say("dots"), self._dots()),
            (say("scale", r=fmt(r)), [("math", f"s = {_vec(self.scores)}", f"s = {_vec_tex(self.scores)}")]),
            (say("exp"), self._exps(say)),
            (
                say("norm"),
                [
                    (
                        "math",
                        f"a = {_vec(self.weights)},   Σ a = {fmt(a_sum)}",
                        rf"a = {_vec_tex(self.weights)},\quad \textstyle\sum a = {latex(a_sum)}",
                    )
                ],
            ),
            (say("mix"), self._mix()),
            (say("hull"), self._verdict(say)),
        ]

    def _inputs(self) -> list[tuple]:
        """q, then each key beside its value."""
        inputs = [("math", f"q = {_vec(self.q)}", f"q = {_vec_tex(self.q)}")]
        keys = [f"k{j + 1} = {_vec(k)}," for j, k in enumerate(self.K)]
        width = max(len(k) for k in keys)
        for j in range(len(keys)):
            inputs.append(
                (
                    "math",
                    f"{keys[j]:<{width}}  v{j + 1} = {_vec(self.V[j])}",
                    rf"k_{{{j + 1}}} = {_vec_tex(self.K[j])},\quad v_{{{j + 1}}} = {_vec_tex(self.V[j])}",
                )
            )
        return inputs

    def _dots(self) -> list[tuple]:
        """q·k_j written out term by term (a long sum keeps its ends)."""
        n, d = self.K.shape
        dots = []
        for j in range(n):
            idx = list(range(d)) if d <= 6 else [0, 1, 2, None, d - 1]  # long sums keep their ends
            terms = " + ".join("…" if i is None else f"{_factor(self.q[i])}·{_factor(self.K[j, i])}" for i in idx)
            x = " + ".join(
                r"\cdots" if i is None else rf"{_factor(self.q[i], True)}\cdot {_factor(self.K[j, i], True)}"
                for i in idx
            )
            dots.append(
                (
                    "math",
                    f"q·k{j + 1} = {terms} = {fmt(self.dots[j])}",
                    rf"q\cdot k_{{{j + 1}}} = {x} = {latex(self.dots[j])}",
                )
            )
        return dots

    def _exps(self, say) -> list[tuple]:
        """e^s and its sum, then the same shifted by the largest score (what softmax computes stably)."""
        m = self.max_score
        sign, mm = ("+", -m) if m < 0 else ("-", m)  # e^(s + 4.97), never e^(s - -4.97)
        return [
            (
                "math",
                f"e^s = {_vec(self.exps)},   Σ = {fmt(self.total)}",
                rf"e^{{s}} = {_vec_tex(self.exps)},\quad \textstyle\sum = {latex(self.total)}",
            ),
            ("prose", say("stable", m=fmt(m))),
            (
                "math",
                f"e^(s {sign} {fmt(mm)}) = {_vec(self.exps_shifted)},   Σ = {fmt(self.total_shifted)}",
                rf"e^{{s {sign} {latex(mm)}}} = {_vec_tex(self.exps_shifted)},\quad "
                rf"\textstyle\sum = {latex(self.total_shifted)}",
            ),
        ]

    def _mix(self) -> list[tuple]:
        """Each a_j v_j, then their sum z."""
        mix = [
            (
                "math",
                f"a{j + 1}·v{j + 1} = {_factor(self.weights[j])}·{_vec(self.V[j])} = {_vec(self.contributions[j])}",
                rf"a_{{{j + 1}}} v_{{{j + 1}}} = {_factor(self.weights[j], True)}\cdot {_vec_tex(self.V[j])} = "
                rf"{_vec_tex(self.contributions[j])}",
            )
            for j in range(len(self.V))
        ]
        mix.append(("math", f"z = {_vec(self.z)}", rf"z = \boxed{{{_vec_tex(self.z)}}}"))
        return mix

    def _verdict(self, say) -> list[tuple]:
        """Whether z is inside the hull of the values, and with which weights."""
        if not self.hull.inside:
            return [("prose", say("outside", d=fmt(self.hull.distance)))]
        verdict = [("prose", say("inside", w=_vec(self.hull.weights)))]
        if not np.allclose(self.hull.weights, self.weights, atol=1e-9):
            verdict.append(("prose", say("other_w")))
        return verdict

    def _title(self, lang: str) -> str:
        return t("attend.title", lang, dk=fmt(self.d_k))

    def to_text(self, lang: str | None = None) -> str:
        """Plain text (Unicode), one numbered step per paragraph."""
        lang = lang_of(lang or self.lang)
        out = [self._title(lang), ""]
        for i, (head, lines) in enumerate(self._steps(lang)):
            out.append(f"{i}. {head}" if i else head)
            out += [f"   {line[1]}" for line in lines]
        out += ["", t("attend.note", lang)]
        return "\n".join(out)

    def to_markdown(self, lang: str | None = None) -> str:
        """Markdown with $…$ math (renders in Jupyter and most Markdown viewers)."""
        lang = lang_of(lang or self.lang)
        out = [f"### {self._title(lang)}", ""]
        for i, (head, lines) in enumerate(self._steps(lang)):
            out.append(f"**{i}. {head}**" if i else f"**{head}**")
            out.append("")
            out += [f"- ${line[2]}$" if line[0] == "math" else line[1] for line in lines]
            out.append("")
        out += ["> " + t("attend.note", lang)]
        return "\n".join(out)

    def to_latex(self, lang: str | None = None) -> str:
        """A LaTeX fragment (amsmath; Chinese text needs ctex or xeCJK in the preamble)."""
        lang = lang_of(lang or self.lang)
        out = [rf"\paragraph{{{tex_prose(self._title(lang))}}}"]
        for i, (head, lines) in enumerate(self._steps(lang)):
            out.append(rf"\paragraph{{{i}. {tex_prose(head)}}}" if i else rf"\paragraph{{{tex_prose(head)}}}")
            for kind, group in _groups(lines):
                if kind == "math":
                    out += [r"\begin{gather*}", " \\\\\n".join(line[2] for line in group), r"\end{gather*}"]
                else:
                    out += [tex_prose(line[1]) for line in group]
        note = tex_prose(t("attend.note", lang))
        out.append(rf"\par\noindent\emph{{{note}}}")
        return "\n".join(out)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def figure(self, path, lang: str | None = None):
        """Draw the values, their hull, the weights and z (plot_hull.hull_figure); returns its HullFigure."""
        from qkv.presentation.plot_hull import hull_figure

        labels = [f"v{j + 1} {_vec(v)}" if self.V.shape[1] <= 3 else f"v{j + 1}" for j, v in enumerate(self.V)]
        return hull_figure(self.V, self.z, self.weights, path, labels=labels, lang=lang_of(lang or self.lang))


def _groups(lines):
    """Consecutive lines of the same kind, grouped: [(kind, [line, ...]), ...]."""
    groups = []
    for line in lines:
        if groups and groups[-1][0] == line[0]:
            groups[-1][1].append(line)
        else:
            groups.append((line[0], [line]))
    return groups
