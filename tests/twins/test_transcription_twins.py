"""Twins of what theory decides from paper_refs (verify/twins/transcription.py): a bound mistranscribed, the
containment reversed, a minimum-M condition mistranscribed; each fails the claim's own check for its reason."""

from __future__ import annotations

import dataclasses

import pytest

from attnsim.paper_refs import get
from attnsim.theory.average_case import statement_mismatches
from attnsim.theory.notation import at
from attnsim.verify.teeth import run_twin
from attnsim.verify.twins import all_twins

CHEAP = {("two_heads.lemma_3_1", "calls_bound_mistranscribed"): "calls: exact count n**2*(2 - fused) is not O(n)",
         ("two_heads.thm_4_2", "oracle_dim_bound_mistranscribed"): "oracle_dim: exact count",
         ("anna.lemma_d_2", "containment_reversed"): "machines: exact count N is not O(",
         ("two_heads.thm_4_1", "min_M_mistranscribed"): "(paper_refs min_M) equals none of the statement's"}


@pytest.mark.parametrize("key", list(CHEAP), ids=[f"{c}:{n}" for c, n in CHEAP])
def test_twin_is_caught_by_the_verdict_for_its_reason(key):
    (t,) = [t for t in all_twins() if (t.claim, t.name) == key]
    r = run_twin(t)
    assert r.outcome == "caught" and CHEAP[key] in r.reason, r.reason


def test_min_M_is_held_against_the_statement_both_ways():
    claim = get("two_heads.thm_4_1")
    assert statement_mismatches(claim) == []
    dropped = dataclasses.replace(claim, extra={**claim.extra, "min_M": {
        **claim.extra["min_M"], "denominators": "M >= 8*C**4*log(N)/eps**2"}})  # the 40 dropped
    why = statement_mismatches(dropped)
    assert len(why) == 2 and "log(N)/eps**2" in why[0] and "8 C^4 log(40 N)/eps^2" in why[1]
    restated = dataclasses.replace(claim, assumptions=tuple(a.replace("D^2)", "D)") for a in claim.assumptions))
    assert any("128 (log d + log 40 + log N)/(eps^2 D)" in w for w in statement_mismatches(restated))


def test_a_diverging_leading_constant_reads_back():
    assert at("oo*sign(3 - 3*rho)", {"rho": 0.5}) == "∞"
