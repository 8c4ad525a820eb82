"""two_heads.thm_4_1: the theorem's minimum-M conditions as sympy expressions, solved for M.

The conditions are data in ``paper_refs/two_heads.toml`` (``[claims.extra.min_M]`` of
``two_heads.thm_4_1``), written as inequalities ``M >= f(C, D, N, d, eps)``. This module parses
them, solves each for M (the smallest M that satisfies it) and evaluates that minimum at the
constants a checker measured (``attnsim.sim.two_heads.assumptions``). The checker only compares
the oracle length M with these minima; it never writes the formulas itself.

The claim's ``assumptions`` state the same conditions as the paper prints them (``M >= 8 C^4 log(40 N)/eps^2``,
paper notation); :func:`statement_mismatches` solves those too and holds each ``min_M`` entry against them, so a
condition mistranscribed in either place (an exponent, a dropped term) fails the check that reads it.

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


_PROBES = ({"C": 1.3, "D": 0.7, "N": 1000.0, "d": 3.0, "eps": 0.4},
           {"C": 2.9, "D": 0.2, "N": 77.0, "d": 11.0, "eps": 1.7})
"""Two points at which the minima of the two transcriptions must agree (a name not listed here takes 2.5)."""


def _at(expr: sp.Expr) -> tuple[float, ...]:
    return tuple(float(expr.subs({s: p.get(s.name, 2.5) for s in expr.free_symbols})) for p in _PROBES)


def statement_mismatches(claim: Claim) -> list[str]:
    """Failing reasons where ``[claims.extra.min_M]`` and the statement's ``M >= ...`` assumptions (paper notation)
    disagree: each condition of either must have an equal one (the same minimum M at every probe) in the other."""
    stated = tuple(a for a in claim.assumptions if a.lstrip().startswith("M >="))
    return list(_mismatches(tuple((c.text, c.min_M) for c in conditions(claim)), stated))


@lru_cache(maxsize=None)
def _mismatches(given: tuple[tuple[str, sp.Expr], ...], stated: tuple[str, ...]) -> tuple[str, ...]:
    theirs = [(text, _at(solve(text, "M", paper_notation=True).lower)) for text in stated]
    ours = [(text, _at(lower)) for text, lower in given]

    def same(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return all(abs(x - y) <= 1e-9 * max(abs(x), abs(y)) for x, y in zip(a, b))

    out = [f"minimum-M condition {text!r} (paper_refs min_M) equals none of the statement's "
           f"({'; '.join(stated) or 'none stated'})" for text, v in ours if not any(same(v, w) for _, w in theirs)]
    out += [f"the statement's condition {text!r} has no equal in paper_refs min_M"
            for text, w in theirs if not any(same(v, w) for _, v in ours)]
    return tuple(out)
