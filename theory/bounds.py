"""Big-O containment: is the exact count of a scheme within the paper's bound?

``contained(claim, resource)`` reduces both formulas to the claim's limit variable (``n = N/M`` for
Two Heads, DESIGN.md "Conventions"), drops ceilings and floors (they change a count by less than
a constant factor once the variable is large), and computes ``lim exact/bound``. The count is in
the bound's class when that limit is finite; it is tight when the limit is also positive, and the
limit is then the leading constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from attnsim.paper_refs import Claim
from attnsim.theory.formulas import expand_definitions, parse, symbol


@dataclass(frozen=True)
class Containment:
    claim: str
    resource: str
    exact: str
    bound: str
    limit_var: str
    leading_constant: str
    finite: bool
    tight: bool

    @property
    def verdict(self) -> str:
        if not self.finite:
            return "outside bound"
        return "tight" if self.tight else "within bound (not tight)"


def _smooth(expr: sp.Expr) -> sp.Expr:
    return expr.replace(sp.ceiling, lambda a: a).replace(sp.floor, lambda a: a)


def reduced(claim: Claim, formula: str) -> sp.Expr:
    """The formula with definitions expanded (except the limit variable) and ceilings dropped."""
    return _smooth(expand_definitions(parse(formula), claim.definitions, keep=(claim.limit,)))


_CACHE: dict[tuple, Containment] = {}


def contained(claim: Claim, resource: str) -> Containment | None:
    """None when the resource lacks an exact count or a bound to compare (results are cached)."""
    res = claim.resources[resource]
    if not res.exact or not res.bound:
        return None
    key = (claim.id, resource, res.exact, res.bound, claim.limit, tuple(sorted(claim.definitions.items())))
    if key not in _CACHE:
        _CACHE[key] = _contained(claim, resource)
    return _CACHE[key]


def _contained(claim: Claim, resource: str) -> Containment:
    res = claim.resources[resource]
    var = symbol(claim.limit)
    exact, bound = reduced(claim, res.exact), reduced(claim, res.bound)
    ratio = sp.simplify(exact / bound)
    lim = sp.limit(ratio, var, sp.oo) if var in ratio.free_symbols else ratio
    finite = bool(lim.is_finite) if lim.is_finite is not None else lim not in (sp.oo, -sp.oo, sp.zoo)
    tight = finite and bool(sp.simplify(lim) != 0)
    return Containment(claim.id, resource, str(exact), str(bound), claim.limit, str(sp.simplify(lim)), finite, tight)
