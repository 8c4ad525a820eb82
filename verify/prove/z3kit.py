"""The solver side of ``attnsim prove``: the plan's arithmetic on z3 terms, paper formulas in z3, one query.

:class:`Z3Ops` is the ``ops`` object of ``sim/two_heads/plan.py`` for z3 integer terms, so the plan
functions the constructions run are evaluated symbolically here. :func:`from_sympy` turns a
``paper_refs`` formula (parsed by ``theory``) into a z3 integer term: ``ceiling(P/Q)`` and
``floor(P/Q)`` become integer divisions by the (positive) denominator. :func:`prove` asks whether a
claim holds for every value of its free variables: the negation is unsatisfiable (``proved``), has
a model (``counterexample``) or the solver gives up (``unknown``, a failure, never a pass).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping

import sympy as sp
import z3

from attnsim.theory.formulas import FormulaError


class Z3Ops:
    """``plan.Ops`` on z3 integer terms."""

    def ite(self, c: Any, a: Any, b: Any) -> Any:
        """z3 If."""
        return z3.If(c, a, b)

    def min(self, a: Any, b: Any) -> Any:
        """The smaller of a, b."""
        return z3.If(a <= b, a, b)

    def max(self, a: Any, b: Any) -> Any:
        """The larger of a, b."""
        return z3.If(a >= b, a, b)

    def div(self, a: Any, b: Any) -> Any:
        """Integer division (z3's div is floor division for a positive divisor)."""
        return a / b

    def mod(self, a: Any, b: Any) -> Any:
        """The remainder of :meth:`div`."""
        return a % b

    def all(self, *cs: Any) -> Any:
        """Conjunction."""
        return z3.And(*cs)

    def any(self, *cs: Any) -> Any:
        """Disjunction."""
        return z3.Or(*cs)


Z3 = Z3Ops()


def _int_div(num: sp.Expr, den: sp.Expr, env: Mapping[str, Any], floor: bool) -> Any:
    top, bottom = from_sympy(num, env), from_sympy(den, env)
    return top / bottom if floor else -((-top) / bottom)


def from_sympy(expr: sp.Expr, env: Mapping[str, Any]) -> Any:
    """A sympy formula over integers as a z3 term (symbols from ``env``); FormulaError on what it cannot say."""
    if expr.is_Integer:
        return z3.IntVal(int(expr))
    if expr.is_Symbol:
        if expr.name not in env:
            raise FormulaError(f"no solver variable for {expr.name}")
        return env[expr.name]
    if isinstance(expr, (sp.ceiling, sp.floor)):
        num, den = sp.fraction(sp.together(expr.args[0]))
        return _int_div(num, den, env, isinstance(expr, sp.floor))
    if expr.is_Add:
        return z3.Sum(*[from_sympy(a, env) for a in expr.args])
    if expr.is_Mul:
        num, den = sp.fraction(expr)
        if den != 1:
            raise FormulaError(f"a division outside ceiling/floor: {expr}")
        return z3.Product(*[from_sympy(a, env) for a in expr.args])
    if expr.is_Pow and expr.exp.is_Integer and int(expr.exp) > 0:
        base = from_sympy(expr.base, env)
        return z3.Product(*([base] * int(expr.exp)))
    if isinstance(expr, (sp.Min, sp.Max)):
        terms = [from_sympy(a, env) for a in expr.args]
        out = terms[0]
        for t in terms[1:]:
            out = Z3.min(out, t) if isinstance(expr, sp.Min) else Z3.max(out, t)
        return out
    if isinstance(expr, sp.Abs):
        t = from_sympy(expr.args[0], env)
        return z3.If(t >= 0, t, -t)
    raise FormulaError(f"cannot express {expr} for the solver")


@dataclass
class Outcome:
    """One solver query: ``proved``, ``counterexample`` (with the model's values) or ``unknown``."""

    status: str
    seconds: float
    model: dict[str, int] = field(default_factory=dict)


def prove(hyps: list[Any], goal: Any, names: Mapping[str, Any], rlimit: int,
          small: Mapping[str, int] | None = None) -> Outcome:
    """Does ``hyps → goal`` hold for all values (z3 within ``rlimit`` resource units, a deterministic limit
    that does not depend on the machine's load, in a fresh z3 context, so that the answer does not
    depend on the queries asked before either)? ``small``: upper bounds tried once a counterexample
    exists, so that it is small enough to replay as an ordinary check."""
    start = time.perf_counter()
    ctx = z3.Context()  # a fresh context: the search does not depend on the terms earlier queries made
    hyps, goal = [h.translate(ctx) for h in hyps], goal.translate(ctx)
    names = {k: v.translate(ctx) for k, v in names.items()}
    s = z3.Solver(ctx=ctx)
    s.set("rlimit", rlimit)
    s.set("ctrl_c", False)  # z3 would take SIGINT for itself and swallow it: Ctrl-C stays Python's
    s.add(*hyps)
    s.add(z3.Not(goal))
    result = s.check()
    if result == z3.unsat:
        return Outcome("proved", time.perf_counter() - start)
    if result != z3.sat:
        return Outcome("unknown", time.perf_counter() - start)
    model = _values(s.model(), names)
    bounds = [names[k] <= v for k, v in (small or {}).items() if k in names]
    for extra in ([*nondegenerate(names), *bounds], bounds):
        s.push()
        s.add(*extra)
        if s.check() == z3.sat:
            model = _values(s.model(), names)
            if "N" in names:
                model = _least_N(s, names, model)
            s.pop()
            break
        s.pop()
    return Outcome("counterexample", time.perf_counter() - start, model)


def nondegenerate(names: Mapping[str, Any]) -> list[Any]:
    """Sizes at which a plan's bug can show: at least three blocks (N ≥ 2M + 1) of at least three tokens,
    or three blocks of a count (n ≥ 3). A counterexample is sought here first, then anywhere."""
    out = []
    if "N" in names and "M" in names:
        out += [names["N"] >= 2 * names["M"] + 1, names["M"] >= 3]
    if "n" in names:
        out.append(names["n"] >= 3)
    return out


def _least_N(s: z3.Solver, names: Mapping[str, Any], model: dict[str, int], steps: int = 12) -> dict[str, int]:
    """The counterexample with the least N the solver finds in a few steps under the current constraints."""
    for _ in range(steps):
        s.push()
        s.add(names["N"] < model["N"])
        found = s.check() == z3.sat
        if found:
            model = _values(s.model(), names)
        s.pop()
        if not found:
            break
    return model


def _values(model: z3.ModelRef, names: Mapping[str, Any]) -> dict[str, int]:
    return {k: model.eval(v, model_completion=True).as_long() for k, v in names.items()}
