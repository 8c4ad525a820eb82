"""Big-O containment: is the exact count of a scheme within the paper's bound?

``contained(claim, resource)`` is what every check record states. The work is done by
:func:`attnsim.theory.symbolic.analyse`: both formulas reduced to the claim's limit variable
(``n = N/M`` for Two Heads), every quantity the proof lets grow substituted as its function of that
variable (``[claims.extra.growth]``: Thm 4.1's relay depth D, Lemma D.2's tree depth R ...; a test
fails on any other free symbol that is not a parameter the statement fixes, ``stated``), ceilings and
floors dropped, and ``lim exact/bound``. The count is in the bound's class when that limit is finite; it is tight when
the limit is also positive, and the limit is then the leading constant. (The per-factor analysis is
reported by ``attnsim bounds`` and the report; it does not change a check's verdict.)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from attnsim.paper_refs import Claim
from attnsim.theory.formulas import expand_definitions, parse
from attnsim.theory.symbolic import analyse, analyse_upper


@dataclass(frozen=True)
class Containment:
    """Whether a claim's exact count lies in its bound's class, with the limit that decides it."""
    claim: str
    resource: str
    exact: str
    bound: str
    limit_var: str
    leading_constant: str
    finite: bool
    tight: bool
    of: str = "exact"  # "exact": the exact count's containment; "upper": the proof's upper formula's

    @property
    def verdict(self) -> str:
        """``tight``, ``within bound (not tight)`` or ``outside bound``."""
        if not self.finite:
            return "outside bound"
        return "tight" if self.tight else "within bound (not tight)"


def _smooth(expr: sp.Expr) -> sp.Expr:
    return expr.replace(sp.ceiling, lambda a: a).replace(sp.floor, lambda a: a)


def reduced(claim: Claim, formula: str) -> sp.Expr:
    """The formula with definitions expanded (except the limit variable) and ceilings dropped."""
    return _smooth(expand_definitions(parse(formula), claim.definitions, keep=(claim.limit,)))


def contained(claim: Claim, resource: str) -> Containment | None:
    """The containment of the resource's exact count in its bound, else of the proof's upper formula (``upper``:
    ``of`` says which); None when the resource has neither, or no bound to compare."""
    res = claim.resources[resource]
    formula = res.exact or res.upper
    if not formula or not res.bound:
        return None
    t = analyse(claim, resource) if res.exact else analyse_upper(claim, resource)
    assert t is not None
    exact = reduced(claim, formula) if t.exact is None else _smooth(t.exact)
    bound = reduced(claim, res.bound) if t.bound is None else _smooth(t.bound)
    return Containment(claim.id, resource, str(exact), str(bound), claim.limit, str(t.leading_constant), t.finite,
                       t.tight, "exact" if res.exact else "upper")
