"""Parse the formulas of ``paper_refs`` into sympy and evaluate them.

Every identifier that is not a known function becomes a positive sympy Symbol, so ``N`` is a
symbol here (not sympy's ``N()``), and limits treat all parameters as positive.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Mapping

import sympy as sp

FUNCTIONS: dict[str, Any] = {
    "ceiling": sp.ceiling, "ceil": sp.ceiling, "floor": sp.floor, "log": sp.log, "log2": lambda x: sp.log(x, 2),
    "sqrt": sp.sqrt, "exp": sp.exp, "binomial": sp.binomial, "Max": sp.Max, "Min": sp.Min,
    "Piecewise": sp.Piecewise, "Abs": sp.Abs, "pi": sp.pi, "E": sp.E, "oo": sp.oo,
    "sign": sp.sign,  # a limit that diverges prints as oo*sign(...): a record reads it back (leading constant)
}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class FormulaError(ValueError):
    """A formula cannot be parsed or evaluated (names the formula and the missing symbol)."""


@lru_cache(maxsize=None)
def parse(formula: str) -> sp.Expr:
    """A ``paper_refs`` formula as a sympy expression (all names positive symbols); an error names the formula."""
    names = {n: sp.Symbol(n, positive=True) for n in _IDENT.findall(formula) if n not in FUNCTIONS}
    try:
        return sp.sympify(formula, locals={**FUNCTIONS, **names})
    except (sp.SympifyError, SyntaxError, TypeError) as exc:
        raise FormulaError(f"cannot parse formula {formula!r}: {exc}") from None


def symbol(name: str) -> sp.Symbol:
    """The positive sympy symbol called ``name``."""
    return sp.Symbol(name, positive=True)


def expand_definitions(expr: sp.Expr, definitions: Mapping[str, str], keep: tuple[str, ...] = ()) -> sp.Expr:
    """Substitute derived symbols (repeatedly, definitions may refer to each other), except ``keep``."""
    for _ in range(len(definitions) + 1):
        free = expr.free_symbols  # computed by walking the whole tree: once per round, not once per definition
        subs = {symbol(k): parse(v) for k, v in definitions.items() if k not in keep and symbol(k) in free}
        if not subs:
            return expr
        expr = expr.xreplace(subs)  # plain symbol replacement: much faster than subs
    raise FormulaError(f"definitions are circular: {dict(definitions)}")


def evaluate(formula: str, definitions: Mapping[str, str], values: Mapping[str, Any]) -> sp.Expr:
    """The formula at concrete parameter values (an exact sympy number; see :func:`at_numbers`)."""
    expr = expand_definitions(parse(formula), definitions)
    subs = {}
    for s in expr.free_symbols:
        if s.name not in values or values[s.name] is None:
            raise FormulaError(f"formula {formula!r} needs a value for {s.name}")
        subs[s] = _rational(values[s.name]) if isinstance(values[s.name], float) else sp.sympify(values[s.name])
    value = at_numbers(expr, subs)
    return value if value.is_number else sp.simplify(value)


@lru_cache(maxsize=4096)
def _rational(x: float) -> sp.Expr:
    """sympy's nsimplify of a float parameter (a pure function of the value, so each distinct value is
    simplified once: its search for a simple form costs milliseconds and every record evaluates many formulas)."""
    return sp.nsimplify(x)


SIMPLE_DENOMINATOR = 1000
"""The largest denominator of a parameter that :func:`at_numbers` keeps exact: 0.95 is 19/20, while a drawn float
such as 0.4856601142699806 has none below 10^15."""

DIGITS = 50
"""Significant digits of :func:`at_numbers`'s value when a parameter has no simple rational form."""


def at_numbers(expr: sp.Expr, subs: Mapping[sp.Symbol, sp.Expr]) -> sp.Expr:
    """``expr`` with ``subs`` put in: exact when every substituted rational is simple, else with the others as
    floats of :data:`DIGITS` significant digits. sympy raises an integer to a rational power p/q exactly, by way
    of the integer N^(p mod q): for p/q = 485660114269981/10^15, as a fuzzed eps' gives, that integer does not
    fit in memory."""
    def simple(v: sp.Expr) -> bool:
        return not isinstance(v, sp.Rational) or v.q <= SIMPLE_DENOMINATOR

    if all(simple(v) for v in subs.values()):
        return expr.xreplace(subs)
    value = expr.xreplace({k: v if simple(v) else sp.Float(v, DIGITS) for k, v in subs.items()})
    if not value.is_number:
        return value
    value = value.evalf(DIGITS)
    return sp.Integer(int(value)) if value.is_Float and (value - int(value)).is_zero else value  # a floor or ceiling


def as_number(value: sp.Expr) -> int | float:
    """An int when the value is an integer, else a float; FormulaError when it is not a finite real
    (e.g. a chunk count divided by a zero chunk size: the construction does not apply there)."""
    if not (value.is_real and value.is_finite):
        raise FormulaError(f"formula value {value} is not a finite real number")
    if value.is_integer:
        return int(value)
    return float(value)
