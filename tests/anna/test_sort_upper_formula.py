"""Lemma C.2's rounds held by the proof's own inequality: the closed upper formula in paper_refs (``sort_upper``,
the rounds' ``upper`` of anna.lemma_c_2 and the sort's share of anna.thm_4_2's, anna.thm_c_1's and anna.khop's,
proved in docs/anna_lemma_c_2.md) against the sort's plan, over sizes, item sizes, memories and key widths (the
lemma's 2-word keys, the small-memory protocols' 3-word keys, the k-hop protocol's 1-word keys) well beyond the
checkers' defaults; and, so that the comparison can fail, the same formula with a term dropped is exceeded
somewhere on the same grid."""

from __future__ import annotations

import math
from functools import lru_cache

import pytest
import sympy as sp

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna.mpc_splitter_sort import SortShape, sort_rounds
from attnsim.theory.formulas import as_number, evaluate, expand_definitions, parse

CLAIM = get_claim("anna.lemma_c_2")
UPPER = CLAIM.resources["rounds"].upper or ""
KEY_WIDTHS = sorted({int(get_claim(c).definitions["kw"]) for c in ("anna.lemma_c_2", "anna.thm_4_2", "anna.khop")})


def _grid() -> list[dict[str, float]]:
    out = []
    for N in (64, 256, 1024, 4096, 16384):
        for eps in (0.0, 1 / 16, 1 / 4, 0.4):
            for gap in (1 / 16, 1 / 8, 1 / 4, 1 / 2):
                for s_scale in (1.0, 8.0, 128.0, 1024.0):
                    if eps + gap < 1:
                        out.append({"N": N, "eps": eps, "eps1": eps + gap, "s_scale": s_scale})
    return out


def _defs(kw: int) -> dict[str, str]:
    return {**CLAIM.definitions, "kw": str(kw)}


def _value(name: str, params: dict[str, float], kw: int = 2) -> float:
    return as_number(evaluate(name, _defs(kw), params))


_FLOAT = [{"Max": max, "Min": min, "ceiling": math.ceil, "floor": math.floor}, "math"]


def _upper(definitions: dict[str, str]):
    """The upper formula as a float function of (N, eps, eps1, s_scale): sympy's exact evaluation takes a third of
    a second a point, too slow for a grid (the checker evaluates it exactly, once a record)."""
    expr = expand_definitions(parse(UPPER), definitions)
    names = ("N", "eps", "eps1", "s_scale")
    by_name = {s.name: s for s in expr.free_symbols}
    assert set(by_name) <= set(names), by_name
    f = sp.lambdify([by_name.get(n, sp.Symbol(n)) for n in names], expr, modules=_FLOAT)
    return lambda p: float(f(p["N"], p["eps"], p["eps1"], p["s_scale"]))


@lru_cache(maxsize=None)
def _plan(N: int, eps: float, eps1: float, s_scale: float, kw: int) -> int | None:
    """The sort's rounds on the lemma's input (N items, b a machine), or None where b < 1 (no item fits)."""
    p = {"N": N, "eps": eps, "eps1": eps1, "s_scale": s_scale}
    if _value("b", p) < 1:
        return None
    return sort_rounds(SortShape(int(_value("s", p)), kw, int(_value("w", p))), int(_value("P", p)), N)


def _points(kw: int) -> list[tuple[dict[str, float], int]]:
    return [(p, r) for p in _grid() if (r := _plan(p["N"], p["eps"], p["eps1"], p["s_scale"], kw)) is not None]


@pytest.mark.parametrize("kw", KEY_WIDTHS)
def test_the_closed_formula_bounds_the_plan_at_every_size(kw):
    points, upper = _points(kw), _upper(_defs(kw))
    assert len(points) > 150
    over = [(p, r, upper(p)) for p, r in points if r > upper(p)]
    assert not over, over[:3]
    p, r = points[0]
    assert upper(p) == pytest.approx(_value(UPPER, p, kw), rel=1e-12)  # the float form is the formula


@pytest.mark.parametrize("kw", KEY_WIDTHS)
@pytest.mark.parametrize("dropped", [("halving_levels", "tail_levels"), ("level_log_cost",)],
                         ids=["level count", "log K a level"])
def test_a_formula_missing_a_term_is_exceeded(dropped, kw):
    broken = _upper({**_defs(kw), **{name: "0" for name in dropped}})
    assert any(r > broken(p) for p, r in _points(kw))


def test_the_formula_is_not_vacuous_where_the_checks_run():
    """At the checker's default (N = 4096, eps = 1/4, eps' = 1/2, s = 128 N^(1/2)) the formula is within a small
    factor of the plan: a round count four times the plan's already breaks it."""
    p = {"N": 4096, "eps": 0.25, "eps1": 0.5, "s_scale": 128.0}
    plan = _plan(4096, 0.25, 0.5, 128.0, 2)
    assert plan is not None and plan <= _value(UPPER, p) < 4 * plan
    assert math.isfinite(_value(UPPER, p))


def test_the_protocols_key_width_is_their_sorts():
    """anna.thm_4_2's ``kw`` (which anna.thm_c_1 takes) and anna.khop's are the widths of the keys the protocols
    sort by."""
    from attnsim.sim.anna import khop
    from attnsim.sim.anna.mpc_small import SORT_KEY_WORDS

    assert int(get_claim("anna.thm_4_2").definitions["kw"]) == SORT_KEY_WORDS
    assert int(get_claim("anna.khop").definitions["kw"]) == khop.KEY_WORDS
    assert get_claim("anna.thm_c_1").definitions["kw"] == get_claim("anna.thm_4_2").definitions["kw"]
