"""Side conditions of a claim solved for one variable: the minimum oracle length of two_heads.thm_4_1.

Theorem 4.1 (average-case simulation) needs the oracle length M large enough for two Chernoff /
Hoeffding arguments (proof of Thm 4.1 / C.1):

    M >= 8 C^4 log(40 N) / eps^2                       (weights in [1/C, C])
    M >= 128 (log d + log 40 + log N) / (eps^2 D^2)    (value sums do not cancel)

Where the conditions come from, in order of preference:

1. ``[claims.extra] conditions = ["M >= 8*C**4*log(40*N)/eps**2", ...]`` in the claim's TOML
   (sympy syntax), with ``solve_for = "M"`` (default ``"M"``);
   or the named table ``[claims.extra.min_M]`` (``theory.average_case`` reads it by name);
2. the claim's ``assumptions`` that read ``M >= ...`` (paper notation: ``^`` for powers, juxtaposition
   for products, ``log x`` for ``log(x)``).

Each condition is solved for the variable with sympy (the boundary ``lhs = rhs``, the direction
checked at a sample point), and :func:`minimum` is the ``Max`` of the lower bounds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

import sympy as sp
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_application,
    implicit_multiplication,
    parse_expr,
    standard_transformations,
)

from attnsim.paper_refs import Claim
from attnsim.theory.formulas import FUNCTIONS, FormulaError, at_numbers, parse, symbol
from attnsim.theory.symbolic import tex

_REL = re.compile(r"^\s*([^<>=]+?)\s*(>=|≥|<=|≤)\s*(.+?)\s*$")
_PAPER = (*standard_transformations, implicit_multiplication, implicit_application, convert_xor)


@dataclass(frozen=True)
class Condition:
    """A side condition solved for one variable: it holds iff the variable is at least ``lower``."""
    source: str
    variable: str
    lower: sp.Expr  # the condition holds iff variable >= lower

    def latex(self) -> str:
        """The condition as LaTeX."""
        return f"{tex(symbol(self.variable))} \\geq {tex(self.lower)}"

    def as_dict(self) -> dict[str, Any]:
        """The condition as a JSON-ready dict."""
        return {"source": self.source, "variable": self.variable, "lower": str(self.lower), "latex": self.latex()}


def _parse_side(text: str, paper_notation: bool) -> sp.Expr:
    if not paper_notation:
        return parse(text)
    names = {n: symbol(n) for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text) if n not in FUNCTIONS}
    try:
        return parse_expr(text.replace("^", "**"), local_dict={**FUNCTIONS, **names}, transformations=_PAPER)
    except (SyntaxError, TypeError, sp.SympifyError) as exc:
        raise FormulaError(f"cannot parse condition side {text!r}: {exc}") from None


def solve(text: str, variable: str, paper_notation: bool = False) -> Condition:
    """Solve one inequality ``lhs >= rhs`` (or ``<=``) for ``variable`` as a lower bound."""
    m = _REL.match(text)
    if not m:
        raise FormulaError(f"condition {text!r} is not of the form lhs >= rhs")
    lhs, op, rhs = m.groups()
    a, b = _parse_side(lhs, paper_notation), _parse_side(rhs, paper_notation)
    diff = (a - b) if op in (">=", "≥") else (b - a)  # the condition is diff >= 0
    x = symbol(variable)
    slope = sp.diff(diff, x)
    if slope != 0 and x not in slope.free_symbols:  # linear in x: keep the paper's form of the boundary
        roots = [sp.factor_terms(-diff.subs(x, 0) / slope)]
    else:
        roots = [r for r in sp.solve(sp.Eq(diff, 0), x) if r.is_positive is not False]
    if len(roots) != 1:
        raise FormulaError(f"condition {text!r}: cannot isolate {variable} (boundary {roots})")
    lower = roots[0]
    probe = {s: 2 for s in diff.free_symbols if s != x}
    at = sp.N(lower.subs(probe))
    if not at.is_real or diff.subs(probe).subs(x, 2 * at + 1) < 0:
        raise FormulaError(f"condition {text!r} bounds {variable} from above, not below")
    return Condition(text, variable, lower)


def conditions(claim: Claim) -> list[Condition]:
    """The claim's side conditions solved for their variable (empty when it has none)."""
    var = str(claim.extra.get("solve_for", "M"))
    given = claim.extra.get("conditions") or list((claim.extra.get("min_M") or {}).values())
    if given:
        return [solve(c, var) for c in given]
    from_text = [a for a in claim.assumptions if re.match(rf"^\s*{re.escape(var)}\s*(>=|≥)", a)]
    if from_text:
        return [solve(a, var, paper_notation=True) for a in from_text]
    return []


def minimum(claim: Claim) -> sp.Expr | None:
    """The smallest value of the solved variable meeting every condition (a sympy ``Max``)."""
    conds = conditions(claim)
    return sp.Max(*[c.lower for c in conds]) if conds else None


def minimum_value(claim: Claim, values: Mapping[str, Any]) -> int | None:
    """The least integer meeting every condition at concrete values (e.g. C, eps, D, d, N)."""
    expr = minimum(claim)
    if expr is None:
        return None
    missing = sorted(s.name for s in expr.free_symbols if s.name not in values)
    if missing:
        raise FormulaError(f"minimum {claim.extra.get('solve_for', 'M')} of {claim.id} needs values for {missing}")
    v = at_numbers(expr, {symbol(k): sp.nsimplify(x) for k, x in values.items()})
    return int(math.ceil(float(v)))
