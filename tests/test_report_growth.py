"""The report's growth section (verify/report/sections/growth.py): per-claim table and plot, the summary's
counts by verdict, and a failing row for every resource that is not within."""

from __future__ import annotations

from attnsim.verify.growth import ResourceGrowth
from attnsim.verify.report.sections.growth import (
    claim_growth,
    counts,
    failing_points,
    failing_rows,
    growth_pass,
    verdict_line,
)

CLAIM = "two_heads.lemma_3_3"


def test_a_claims_growth_table_plot_and_counts(tmp_path):
    results = growth_pass([CLAIM, "two_heads.lower_bound"], True)
    assert list(results) == [CLAIM]  # a claim without a bounded resource has no growth rows
    md = claim_growth(CLAIM, results, tmp_path)
    assert ("| calls | O(jobs/(H′·L′)) | 4, 8, 16, 32 | 1, 1, 1, 1 | +0 | [+0, +0] | exact count: measured == "
            "ceiling(jobs/(Hp*Lp)) at every point; tight, limit 1 | within | no constant |") in md
    assert (tmp_path / "plots" / f"{CLAIM}_growth.png").stat().st_size > 1000
    assert counts(results) == {"within": 3, "exceeds": 0, "failing points": 0, "unmeasured growth": 0}
    assert verdict_line(results) == ("Bounded resources by growth verdict: 3 within, 0 exceeds, "
                                     "0 failing points, 0 unmeasured growth.")
    assert failing_rows(results) == [] and claim_growth("anna.thm_5_2", results) == ""


def test_a_resource_that_is_not_within_is_a_failing_row():
    g = ResourceGrowth(CLAIM, "calls", "jobs", "jobs", (4.0,), (4.0,), (4.0,), None, None, None,
                       "unmeasured growth", "1 distinct size(s), 4 needed")
    (row,) = failing_rows({CLAIM: [g]})
    assert row["claim"] == CLAIM and row["verdict"] == "fail" and "unmeasured growth" in row["reasons"][0]
    assert "Not within: `two_heads.lemma_3_3` calls (unmeasured growth, growth test)" in verdict_line({CLAIM: [g]})


def test_a_growth_point_that_fails_its_own_check_is_a_failing_row_once():
    def rec(n, verdict, why=()):
        return {"claim": "c.x", "params": {"N": n}, "numerics": "exact", "seed": 0, "verdict": verdict,
                "reasons": list(why)}
    grid = [rec(8, "fail", ["calls: 9 != 8"])]
    sweep = [rec(8, "fail", ["calls: 9 != 8"]), rec(16, "pass"), rec(32, "fail", ["calls: 33 != 32"]),
             rec(32, "fail", ["calls: 33 != 32"])]
    rows = failing_points(sweep, grid)
    assert [r["params"] for r in rows] == [{"N": 32}]  # the grid's own failure is not counted twice
    assert rows[0]["reasons"] == ["growth sweep point: calls: 33 != 32"]
    assert failing_points([rec(16, "pass")], []) == []


def test_a_claims_parameter_sweep_is_judged_on_the_page_in_its_own_variable(tmp_path):
    """``anna.lemma_b_12`` has a sweep in N and one in log N / log k (rho varied, N fixed) that share a point: each
    is judged over its own records, as ``attnsim growth`` judges them, and the section shows a table per variable,
    so a page that says a verdict is judged in a parameter shows that verdict."""
    from attnsim.verify.growth import growth_points, param_sweeps, sweep_points

    claim = "anna.lemma_b_12"
    results = growth_pass([claim], True)
    by_var = {(g.size_var, g.resource): g for g in results[claim]}
    assert set(by_var) == {("N", "rounds"), ("N", "contacts"), ("log(N)/log(k)", "rounds")}
    ((_, rho),) = param_sweeps(claim)
    assert len(by_var["N", "rounds"].sizes) == len(growth_points(claim, True))  # the shared point counted once
    assert len(by_var["log(N)/log(k)", "rounds"].sizes) == len(sweep_points(claim, rho, True))
    assert all(g.verdict == "within" for g in results[claim])
    md = claim_growth(claim, results, tmp_path)
    assert "| resource | bound | N | measured / bound |" in md
    assert ("In log(N)/log(k), over the claim's sweep in that parameter, N fixed, at its quick grid (`attnsim growth "
            "anna.lemma_b_12` runs the full one):") in md
    assert "| resource | bound | log(N)/log(k) | measured / bound |" in md
    assert counts(results)["within"] == 3
