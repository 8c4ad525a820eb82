"""One printer for every formula attnsim shows: ``claims``, ``bounds``, ``check``, the report, its tables and plots.

Symbols print as the papers write them (H′, L′, ε′ for Two Heads' ``Hp``, ``Lp`` and ANNA's ``eps1``),
read from ``[paper.symbols]`` in ``paper_refs`` — the one place that names them; Greek names (``eps``,
``rho``, ``delta``, ...) print as Greek letters. A 0/1 flag of a scheme (Two Heads' ``fused``, TinT's
reuse flags) is never printed as a variable: a formula that holds one is split into its cases
(:func:`cases`), each printed with the flag substituted. Plain text (:func:`text`) uses ``·``, ``/``,
superscripts and ⌈ ⌉; LaTeX (:func:`latex`) uses sympy's LaTeX printer with the same names.

Numbers are shown as what they mean (:func:`number`): integers in full, other values to a few
significant digits, byte counts in KiB/MiB/GiB.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Mapping

import sympy as sp
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.str import StrPrinter

from attnsim.paper_refs import Symbol, symbols
from attnsim.theory.formulas import FormulaError, at_numbers, parse

GREEK = {"alpha": ("α", r"\alpha"), "beta": ("β", r"\beta"), "gamma": ("γ", r"\gamma"), "delta": ("δ", r"\delta"),
         "Delta": ("Δ", r"\Delta"), "eps": ("ε", r"\varepsilon"), "eta": ("η", r"\eta"), "rho": ("ρ", r"\rho"),
         "psi": ("ψ", r"\psi"), "ell": ("ℓ", r"\ell"), "sigma": ("σ", r"\sigma"), "tau": ("τ", r"\tau")}
_SUPER = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _table(paper: str | None) -> dict[str, Symbol]:
    return symbols(paper)


def _text_name(name: str, table: Mapping[str, Symbol]) -> str:
    if name in table:
        return table[name].text
    return GREEK[name][0] if name in GREEK else name


def _latex_name(name: str, table: Mapping[str, Symbol]) -> str:
    if name in table:
        return table[name].latex
    if name in GREEK:
        return GREEK[name][1]
    if len(name) == 1:
        return name
    base, _, sub = name.partition("_")
    if sub and base:
        sub = sub.replace("_", r"\_")
        return rf"{_latex_name(base, table)}_{{\mathrm{{{sub}}}}}"
    return rf"\mathrm{{{name}}}"


class TextPrinter(StrPrinter):
    """sympy's string printer with the papers' names, ``·`` for products, superscripts and ⌈ ⌉."""

    def __init__(self, table: Mapping[str, Symbol]) -> None:
        """Print with ``table``'s names for the symbols it holds."""
        super().__init__()
        self.table = table

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        return _text_name(expr.name, self.table)

    def _print_Dummy(self, expr: sp.Dummy) -> str:
        return self._print_Symbol(expr)

    def _product(self, expr: sp.Expr) -> str:
        factors = expr.as_ordered_factors() if isinstance(expr, sp.Mul) else [expr]
        return "·".join(self.parenthesize(f, PRECEDENCE["Mul"], strict=False) for f in factors)

    def _print_Mul(self, expr: sp.Mul) -> str:
        sign = ""
        if expr.could_extract_minus_sign():
            expr, sign = -expr, "-"
        num, den = sp.fraction(expr)
        top = self._product(num)
        if den == 1:
            return sign + top
        bottom = self._product(den)
        if isinstance(den, sp.Mul) or (isinstance(den, sp.Pow) and not den.exp.is_Integer):
            bottom = f"({bottom})"
        return f"{sign}{top}/{bottom}"

    def _print_Pow(self, expr: sp.Pow, rational: bool = False) -> str:
        base, exp = expr.as_base_exp()
        if exp.could_extract_minus_sign():
            return f"1/{self.parenthesize(sp.Pow(base, -exp), PRECEDENCE['Mul'], strict=True)}"
        b = self.parenthesize(base, PRECEDENCE["Pow"], strict=True)
        if exp == sp.Rational(1, 2):
            return f"√{b}" if base.is_Atom else f"√({self._print(base)})"
        if exp.is_Integer:
            return b + str(exp).translate(_SUPER)
        return f"{b}^{self.parenthesize(exp, PRECEDENCE['Pow'], strict=True)}"

    def _print_ceiling(self, expr: sp.Expr) -> str:
        return f"⌈{self._print(expr.args[0])}⌉"

    def _print_floor(self, expr: sp.Expr) -> str:
        return f"⌊{self._print(expr.args[0])}⌋"

    def _print_Abs(self, expr: sp.Expr) -> str:
        return f"abs({self._print(expr.args[0])})"  # not |x|: a bar would split a markdown table cell

    def _print_Min(self, expr: sp.Expr) -> str:
        return f"min({', '.join(self._print(a) for a in expr.args)})"

    def _print_Max(self, expr: sp.Expr) -> str:
        return f"max({', '.join(self._print(a) for a in expr.args)})"

    def _print_Rational(self, expr: sp.Rational) -> str:
        return f"{expr.p}/{expr.q}" if expr.q != 1 else str(expr.p)

    def _print_Float(self, expr: sp.Float) -> str:
        return number(float(expr))


def _expr(formula: Any) -> sp.Expr:
    return parse(formula) if isinstance(formula, str) else sp.sympify(formula)


def text(formula: Any, paper: str | None = None) -> str:
    """``formula`` (a sympy expression or a paper_refs string) in plain text, e.g. ``n²·H·L/(H′·L′)``."""
    return TextPrinter(_table(paper)).doprint(_expr(formula))


def latex(formula: Any, paper: str | None = None) -> str:
    """``formula`` in LaTeX with the papers' names (H', \\varepsilon', upright multi-letter names)."""
    expr = _expr(formula)
    table = _table(paper)
    names = {s: _latex_name(s.name, table) for s in expr.free_symbols if isinstance(s, sp.Symbol)}
    return sp.latex(expr, symbol_names=names)


def cases(formula: Any, paper: str | None = None) -> list[tuple[str, sp.Expr]]:
    """``formula`` split over the 0/1 flags it holds: (label, expression with the flags set) per case;
    a formula without flags is one case labelled ``""``."""
    expr = _expr(formula)
    table = _table(paper)
    flags = sorted((s for s in expr.free_symbols if s.name in table and table[s.name].flag), key=lambda s: s.name)
    if not flags:
        return [("", expr)]
    out: list[tuple[str, sp.Expr]] = []
    for values in itertools.product((0, 1), repeat=len(flags)):
        case = expr.xreplace(dict(zip(flags, map(sp.Integer, values))))
        label = ", ".join(table[f.name].flag[v] for f, v in zip(flags, values))  # type: ignore[index]
        out.append((label, case))
    if all(c == out[0][1] for _, c in out):  # the flags cancel
        return [("", out[0][1])]
    return out


def text_cases(formula: Any, paper: str | None = None, wrap: str = "{}") -> str:
    """Plain text of ``formula`` with its flags as cases: ``2·n² (paper scheme); n² (fused scheme)``."""
    parts = cases(formula, paper)
    return "; ".join(wrap.format(text(e, paper)) + (f" ({label})" if label else "") for label, e in parts)


def latex_cases(formula: Any, paper: str | None = None, wrap: str = "{}") -> str:
    """LaTeX of ``formula`` with its flags as a ``cases`` environment."""
    parts = cases(formula, paper)
    if len(parts) == 1:
        return wrap.format(latex(parts[0][1], paper))
    rows = [f"{wrap.format(latex(e, paper))} & \\text{{{label}}}" for label, e in parts]
    return r"\begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"


def bound_text(formula: Any, paper: str | None = None) -> str:
    """A bound in plain text: ``O(n²·H·L/(H′·L′))``."""
    return text_cases(formula, paper, wrap="O({})")


def at(formula: Any, values: Mapping[str, Any], paper: str | None = None) -> str:
    """``formula`` with the symbols ``values`` gives substituted (a leading constant at a record's
    parameters): a number when that settles it, else the rest in plain text."""
    expr = _expr(formula)
    subs = {s: sp.nsimplify(values[s.name]) for s in expr.free_symbols
            if isinstance(values.get(s.name), (int, float)) and not isinstance(values.get(s.name), bool)}
    subs.update({s: sp.Integer(int(values[s.name])) for s in expr.free_symbols if isinstance(values.get(s.name), bool)})
    value = at_numbers(expr, subs)
    value = sp.nsimplify(value) if value.is_number else value
    if value.is_number:
        try:
            return number(float(value)) if not value.is_Integer else str(int(value))
        except (TypeError, FormulaError):
            return text(value, paper)
    return text_cases(value, paper)


def number(value: Any, unit: str | None = None, digits: int = 3) -> str:
    """``value`` as it means something: integers in full, other reals to ``digits`` significant digits,
    ``unit="bytes"`` in KiB/MiB/GiB, ``unit="bits"`` with one decimal; None as an em dash."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if unit == "bytes":
        k = 0
        v = float(value)
        while abs(v) >= 1024 and k < len(_UNITS) - 1:
            v, k = v / 1024, k + 1
        return f"{int(v)} B" if k == 0 else f"{v:.{digits}g} {_UNITS[k]}"
    if unit == "bits":
        return f"{value:.1f} bits"
    if isinstance(value, int) or float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.{digits}g}" + (f" {unit}" if unit else "")


def factors_text(factors: Mapping[str, str], paper: str | None = None) -> str:
    """A resource's per-symbol factor verdicts with the papers' names; flags are left out (their values
    are the cases of the formula) — an em dash when nothing is left."""
    table = _table(paper)

    def verdict(v: str) -> str:  # "bounded (-> 4 - 2*fused)": the limit in this notation too
        head, arrow, rest = v.partition("(-> ")
        if not arrow or not rest.endswith(")"):
            return v
        try:
            return f"{head}(→ {text_cases(rest[:-1], paper)})"
        except FormulaError:
            return v

    shown = [f"{_text_name(k, table)}: {verdict(v)}" for k, v in factors.items() if not (k in table and table[k].flag)]
    return ", ".join(shown) or "—"
