"""Containment as a parameter sweep's variable grows (theory/bounds.py ``contained_as``): the constant lim_N count /
bound must stay finite as 1/(eps' - eps) grows. Decided symbolically on the real claims (Thm 4.2, C.1, 5.4, 5.6),
refused for a bound whose power of the gap is dropped, undecided (and then left to the growth test) where sympy
cannot say which parameter the sweep moves."""

from __future__ import annotations

import dataclasses
import math

import pytest
import sympy as sp

from attnsim.paper_refs import get as get_claim
from attnsim.theory.bounds import UNDECIDED, _limit_as, contained_as
from attnsim.verify.growth import judge
from attnsim.verify.registry import all_checkers

GAP = "1/(eps1 - eps)"


def _with_bound(claim_id: str, resource: str, bound: str):
    c = get_claim(claim_id)
    res = dataclasses.replace(c.resources[resource], bound=bound)
    return dataclasses.replace(c, resources={**c.resources, resource: res})


@pytest.mark.parametrize(("claim_id", "resource"), [("anna.thm_4_2", "rounds"), ("anna.thm_c_1", "rounds"),
                                                    ("anna.thm_5_4", "layers"), ("anna.thm_5_6", "layers")])
def test_every_gap_sweep_resource_stays_in_its_bound_as_the_gap_closes(claim_id, resource):
    ps = dict(all_checkers()[claim_id].param_sweeps)["gap"]
    assert resource in ps.resources and ps.var == GAP and ps.varied() == "eps1"
    c = contained_as(get_claim(claim_id), resource, GAP, "eps1")
    assert c is not None and c.finite is True, c
    assert "oo" not in c.limit


@pytest.mark.parametrize(("claim_id", "resource", "bound"), [
    ("anna.thm_5_4", "layers", "1/(eps*(eps1 - eps))"),
    ("anna.thm_4_2", "rounds", "layers"),
    ("anna.thm_5_6", "layers", "1/(eps*(eps1 - eps)) + log(k)/(eps1 - eps)"),
])
def test_a_bound_one_power_of_the_gap_short_is_outside_as_the_gap_closes(claim_id, resource, bound):
    """The count stays in the mistranscribed bound's class as N (or k) grows, so only the gap's limit sees it."""
    from attnsim.theory.bounds import contained

    edited = _with_bound(claim_id, resource, bound)
    assert contained(edited, resource).finite
    c = contained_as(edited, resource, GAP, "eps1")
    assert c.finite is False and c.verdict == "outside bound", c


def test_limits_in_the_sweep_variable():
    a, b, g = sp.symbols("a b g", positive=True)
    assert _limit_as(3 + g, 1 / g, "g")[2] == "tight"          # 3 + 1/x -> 3
    assert _limit_as(1 / g, 1 / g, "g")[2] == "outside bound"  # x -> oo
    assert _limit_as(g, 1 / g, "g")[2] == "within bound (not tight)"  # 1/x -> 0
    c = sp.Symbol("c")  # of unknown sign
    assert _limit_as(2 * c, 1 / g, "g")[1:] == ("2*c", "within bound")  # no g: the constant itself, sign unknown
    assert _limit_as(2 * a, 1 / g, "g")[1:] == ("2*a", "tight")
    solved, why, verdict = _limit_as(a * b, 1 / (a - b), "")  # which of a, b moves is not known
    assert verdict == UNDECIDED and "a, b" in why and solved == ""


def test_an_undecided_containment_leaves_the_growth_test_to_decide(monkeypatch):
    from attnsim.verify import growth_rules

    monkeypatch.setattr(growth_rules, "param_containment_of", lambda *a: (None, "sympy could not"))
    monkeypatch.setattr("attnsim.verify.growth.param_containment_of", lambda *a: (None, "sympy could not"))
    records = [{"claim": "anna.thm_c_1", "verdict": "pass", "params": {"eps": 1 / 16, "eps1": 1 / 16 + g},
                "size": {"var": "N", "value": 256}, "predicted": {"rounds": 10.0},
                "bounds": {"rounds": {"measured": 10.0 / g, "value": 1 / g}}}
               for g in (1 / 4, 1 / 8, 1 / 12, 1 / 16)]
    g = judge("anna.thm_c_1", "rounds", records, GAP)
    assert g.evidence == "growth test" and "containment not decided" in g.why, g
    assert g.verdict == "within", g
    grown = [dict(r, bounds={"rounds": {"measured": r["bounds"]["rounds"]["measured"] * r["bounds"]["rounds"]["value"],
                                        "value": r["bounds"]["rounds"]["value"]}}) for r in records]
    assert judge("anna.thm_c_1", "rounds", grown, GAP).verdict == "exceeds"
    assert math.isfinite(g.slope)
