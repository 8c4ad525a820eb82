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


UNDECIDED = "undecided"
"""The verdict of a containment in a parameter that sympy could not take (the sweep then falls back to its growth
test)."""


@dataclass(frozen=True)
class ParamContainment:
    """Whether the count stays in its bound's class as a parameter sweep's variable ``var`` grows: the limit, as
    ``var`` grows, of the leading constant lim_N count / bound (so N grows first, then ``var``; a count growing one
    power of 1/(eps' - eps) faster than its bound has a constant that grows without end)."""
    claim: str
    resource: str
    var: str
    solved_for: str
    limit: str
    verdict: str  # "tight", "within bound (not tight)", "within bound" (its sign depends on parameters),
    # "outside bound" or UNDECIDED

    @property
    def finite(self) -> bool | None:
        """Whether the constant stays finite (None: undecided)."""
        return None if self.verdict == UNDECIDED else self.verdict != "outside bound"


_PARAM_LIMITS: dict[tuple[str, str, str], tuple[str, str, str]] = {}


def contained_as(claim: Claim, resource: str, var: str, varied: str) -> ParamContainment | None:
    """:func:`contained` as ``var`` (a formula in the claim's parameters, ``1/(eps1 - eps)``) grows, the sweep
    varying the parameter ``varied``: None when the resource has no containment in N to extend; ``outside
    bound`` when that one fails already."""
    c = contained(claim, resource)
    if c is None:
        return None
    if not c.finite:
        return ParamContainment(claim.id, resource, var, varied, "oo", "outside bound")
    res = claim.resources[resource]
    t = analyse(claim, resource) if res.exact else analyse_upper(claim, resource)
    assert t is not None and t.leading_constant is not None
    from attnsim.theory.symbolic import analysed_form

    size = analysed_form(claim, var)
    key = (str(t.leading_constant), str(size), varied)
    if key not in _PARAM_LIMITS:
        _PARAM_LIMITS[key] = _limit_as(t.leading_constant, size, varied)
    solved, limit, verdict = _PARAM_LIMITS[key]
    return ParamContainment(claim.id, resource, var, solved, limit, verdict)


def _limit_as(constant: sp.Expr, size: sp.Expr, varied: str) -> tuple[str, str, str]:
    """(symbol solved for, limit, verdict) of ``constant`` as ``size`` grows without end."""
    shared = sorted((s for s in size.free_symbols & constant.free_symbols), key=lambda s: s.name)
    if not shared:  # the constant does not depend on the sweep's variable
        return "", str(constant), _verdict_of(constant)
    chosen = [s for s in shared if s.name == varied] or (shared if len(shared) == 1 else [])
    if not chosen:
        return "", f"which of {', '.join(s.name for s in shared)} the sweep varies is not known", UNDECIDED
    sym, x = chosen[0], sp.Symbol("x_sweep", positive=True)
    try:
        solutions = sp.solve(sp.Eq(size, x), sym)
        if len(solutions) != 1:
            return sym.name, f"{len(solutions)} solutions of {size} = x for {sym.name}", UNDECIDED
        lim = sp.limit(constant.subs(sym, solutions[0]), x, sp.oo)
    except (NotImplementedError, ValueError, TypeError) as exc:  # sympy cannot take it
        return sym.name, f"sympy: {exc}", UNDECIDED
    if isinstance(lim, sp.Limit) or x in lim.free_symbols:
        return sym.name, str(lim), UNDECIDED
    return sym.name, str(lim), _verdict_of(lim)


def _verdict_of(limit: sp.Expr) -> str:
    if limit.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
        return "outside bound"
    if limit.is_positive:
        return "tight"
    return "within bound (not tight)" if limit.is_zero else "within bound"
