"""Teeth of the ANNA-simulates-MPC checks: every broken twin is caught; the report section draws its plot."""

from __future__ import annotations

import pytest

from attnsim.verify.check import run_check
from attnsim.verify.report.sections.anna_mpc_to_anna import anna_mpc_to_anna_section
from attnsim.verify.teeth import run_twin
from attnsim.verify.twins import all_twins

CLAIMS = ("anna.thm_4_1", "anna.thm_b_10", "anna.cor_b_14", "anna.thm_4_4", "anna.cor_d_3", "anna.thm_d_1",
          "anna.lemma_b_4", "anna.lemma_b_5", "anna.lemma_b_6")
SAME_CHECKER = ("anna.thm_b_10", "anna.cor_b_14", "anna.cor_d_3", "anna.thm_d_1")  # run their twins once, via 4.1 / 4.4
MINE = [t for t in all_twins() if t.claim in CLAIMS and t.kind != "growth"]  # growth twins: tests/test_growth_twins.py


def test_every_claim_has_two_twins():
    for claim in CLAIMS:
        assert len({t.name for t in MINE if t.claim == claim}) >= 2, claim


@pytest.mark.parametrize("t", [t for t in MINE if t.claim not in SAME_CHECKER],
                         ids=lambda t: f"{t.claim}:{t.name}")
def test_twin_is_caught(t):
    result = run_twin(t)
    assert result.bites, result.reason


def test_report_section_has_the_table_and_the_width_plot(tmp_path):
    recs = [run_check("anna.thm_4_1", {"protocol": "sum", "N": n, "P": 16}, None, 0) for n in (256, 1024)]
    recs.append(run_check("anna.lemma_b_4", {"alpha": 2, "trials": 5}, None, 0))
    md = anna_mpc_to_anna_section(recs, tmp_path, True)
    assert (tmp_path / "plots" / "anna_mpc_to_anna_width.png").stat().st_size > 1000
    assert "| sum | 1024 | 16 |" in md and "Lemma B.4" in md and "Fitted exponent of the width" in md
