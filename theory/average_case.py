"""two_heads.thm_4_1: the theorem's minimum-M conditions as sympy expressions, solved for M.

The conditions are data in ``paper_refs/two_heads.toml`` (``[claims.extra.min_M]`` of
``two_heads.thm_4_1``), written as inequalities ``M >= f(C, D, N, d, eps)``. This module parses
them, solves each for M (the smallest M that satisfies it) and evaluates that minimum at the
constants a checker measured (``attnsim.sim.two_heads.assumptions``). The checker only compares
the oracle length M with these minima; it never writes the formulas itself.

Logarithms are natural (the Hoeffding bounds the conditions come from are in e-base).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

import sympy as sp

from attnsim.paper_refs import Claim
from attnsim.theory.conditions import solve
from attnsim.theory.formulas import FormulaError, symbol


@dataclass(frozen=True)
class Condition:
    """One of Thm 4.1's conditions on M: its name, its text in paper_refs and the minimum M it implies."""
    name: str
    text: str          # as written in paper_refs
    min_M: sp.Expr     # the inequality solved for M


def conditions(claim: Claim) -> list[Condition]:
    """Each ``M >= ...`` inequality of ``claim.extra['min_M']``, solved for M by ``theory.conditions.solve``."""
    raw = claim.extra.get("min_M")
    if not isinstance(raw, dict) or not raw:
        raise FormulaError(f"{claim.id}: paper_refs has no [claims.extra.min_M] conditions")
    return list(_solved(tuple(sorted((str(k), str(v)) for k, v in raw.items()))))


@lru_cache(maxsize=None)
def _solved(raw: tuple[tuple[str, str], ...]) -> tuple[Condition, ...]:
    return tuple(Condition(name, text, solve(text, "M").lower) for name, text in raw)


def minimum_M(claim: Claim, values: Mapping[str, float]) -> dict[str, float]:
    """The smallest M each condition allows at the given constants (C, D, N, d, eps)."""
    out: dict[str, float] = {}
    for cond in conditions(claim):
        missing = sorted(s.name for s in cond.min_M.free_symbols if s.name not in values)
        if missing:
            raise FormulaError(f"{claim.id}: condition {cond.name!r} needs values for {', '.join(missing)}")
        subs = {s: sp.Float(values[s.name], 30) for s in cond.min_M.free_symbols}
        v = cond.min_M.subs(subs)
        out[cond.name] = float(v) if v.is_finite else float("inf")
    return out


@lru_cache(maxsize=None)
def _eps_solutions(min_M: sp.Expr) -> tuple[sp.Expr, ...]:
    return tuple(s for s in sp.solve(sp.Eq(symbol("M"), min_M), symbol("eps")) if s.is_positive is not False)


def smallest_eps(claim: Claim, values: Mapping[str, float]) -> dict[str, float]:
    """For each condition, the smallest eps that it allows at the given M, C, D, N, d."""
    out: dict[str, float] = {}
    for cond in conditions(claim):
        sols = _eps_solutions(cond.min_M)
        subs = {s: sp.Float(values[s.name], 30) for e in sols for s in e.free_symbols}
        vals = [float(e.subs(subs)) for e in sols]
        out[cond.name] = min((v for v in vals if v > 0), default=float("inf"))
    return out
