"""Every broken twin of anna.thm_4_2, thm_c_1, lemma_c_2, thm_5_4_direct, thm_5_6_direct, alg_1, def_ema is caught."""

from __future__ import annotations

import pytest

from attnsim.verify.teeth import run_twin
from attnsim.verify.twins import all_twins

CLAIMS = ("anna.thm_4_2", "anna.thm_c_1", "anna.lemma_c_2", "anna.thm_5_4_direct", "anna.thm_5_6_direct",
          "anna.alg_1", "anna.def_ema")
# growth twins: tests/test_growth_twins.py; the twins of verify/twins/anna.py (Alg 1's among them) are caught
# for a reason of their own in tests/twins/test_anna_tint_twins.py, a stronger test of the same run
TWINS = [t for t in all_twins() if t.claim in CLAIMS and t.kind != "growth"]
TESTED = [t for t in TWINS if t.breaks.__module__ != "attnsim.verify.twins.anna"]


def test_each_claim_has_two_twins_of_different_kinds():
    for claim in CLAIMS:
        names = [t.name for t in TWINS if t.claim == claim]
        assert len(names) >= 2 and len(set(names)) == len(names)


@pytest.mark.parametrize("twin", TESTED, ids=[f"{t.claim}:{t.name}" for t in TESTED])
def test_twin_is_caught(twin):
    result = run_twin(twin)
    assert result.bites, result.reason
