"""The figures of docs/anna_eta.md that a cheap, deterministic run or formula gives, read off the page and recomputed.

The page explains how the proof of Thm 3.4 / A.1 sizes z and ell as functions of N and how eta decides a verdict
of anna.alg_1. Held here: the proof's constants, the eta it gives at the sweep's ends, the formula columns of the
full sweep's table (z, ell, runs, the interval its own counts give, the proof's eta, N^(3 rho - 1)), the quick
sweep's outcome and the z = 1 twin. Not held: the violating runs of the full sweep (about 130 s of runs).
"""

from __future__ import annotations

import pytest
from doc_page import Page, shown

from attnsim.paper_refs import get as get_claim
from attnsim.theory.formulas import as_number, evaluate
from attnsim.theory.lsh import hyperplane_probabilities, proof_parameters
from attnsim.verify.anna_eta import FULL, QUICK, eta_sweep
from attnsim.verify.check import run_check
from attnsim.verify.stats import binomial_interval
from attnsim.verify.twins import all_twins

_PAGE = Page("anna_eta.md")
PAGE = _PAGE.text
TEXT = _PAGE.flat
said = _PAGE.said
table = _PAGE.table
DEFS = get_claim("anna.alg_1").definitions
R, C = 0.2, 7.0  # the sweep's hyperplane family, as the page states it


def proof(n: int):
    return proof_parameters(n, *hyperplane_probabilities(R, C))


def test_the_proofs_constants_are_the_claims_definitions():
    """Thm A.1's proof: z from far_odds = 10 N^3 (a far pair shares a bucket with chance 0.1 / N^3), and
    delta = min(N^(3 rho - 1), 1/10)."""
    far, odds = said(r"at most (0\.1) / N\^3, so z = ceil\(log_\{1/p2\}\(far_odds\)\) with far_odds = (\d+) N\^3")
    assert float(far) * int(odds) == 1
    for n in (16, 1024):
        assert as_number(evaluate("far_odds", DEFS, {"N": n})) == int(odds) * n**3
    num, den = (int(x) for x in said(r"we take delta = min\(N\^\(3 rho - 1\), (\d+)/(\d+)\)"))
    assert as_number(evaluate("delta", DEFS, {"N": 16, "rho": 0.3})) == num / den  # N^(3 rho - 1) above 1/10
    assert float(as_number(evaluate("delta", DEFS, {"N": 4096, "rho": 0.1}))) == pytest.approx(4096 ** -0.7)


def test_the_proofs_eta_at_the_ends_of_the_sweeps():
    """Thm A.1's eta (the proof's union bound) at N = 16 and N = 4096, and rho of the hyperplane family."""
    lo, n_lo, hi, n_hi, rho = said(r"the proof's eta falls from about (\S+) at N = (\d+) to about (\S+) at "
                                   r"N = (\d+) for hyperplane LSH with r = 0\.2, c = 7 \(rho ~ (\S+)\)")
    assert shown(proof(int(n_lo)).eta_bound, lo) and shown(proof(int(n_hi)).eta_bound, hi)
    assert shown(proof(16).rho, rho)


def test_the_full_sweeps_formula_columns():
    """Thm 3.4 / A.1 over the full sweep: z(N), ell(N), the runs of verify/anna_eta.py, eta-hat and the
    Clopper-Pearson interval of the table's own counts, the proof's eta and the rate N^(3 rho - 1), row by row."""
    rows = table("| N | z | ell | runs | violating runs |")
    assert [(int(r[0]), int(r[3])) for r in rows] == list(FULL)
    for n, z, ell, runs, bad, hat, ci, eta, rate in rows:
        pp = proof(int(n))
        assert (pp.z, pp.ell) == (int(z), int(ell))
        assert shown(int(bad) / int(runs), hat)
        lo, hi = (x.strip() for x in ci.strip("[]").split(","))
        got = binomial_interval(int(bad), int(runs))
        assert shown(got[0], lo) and shown(got[1], hi)
        assert shown(pp.eta_bound, eta) and shown(pp.eta_asymptotic, rate)


def test_the_sweeps_sizes():
    """The sizes of the quick and full eta sweeps of Algorithm 1 (Thm 3.4)."""
    quick = tuple(int(x) for x in said(r"quick: N = (\d+) \.\.\. (\d+); full: N = \d+"))
    full = tuple(int(x) for x in said(r"full: N = (\d+) \.\.\. (\d+)\)"))
    assert quick == (QUICK[0][0], QUICK[-1][0]) and full == (FULL[0][0], FULL[-1][0])


def test_no_run_of_the_quick_sweep_breaks_the_definition():
    """Algorithm 1 (Thm 3.4) over the quick sweep at seed 0, as the report runs it: no run breaks the ANNA
    definition."""
    said(r"No run broke the definition at these sizes \(none did in the quick sweep either, N = 16 \.\.\. 256 at "
         r"seed 0\)")
    rows = eta_sweep(True)
    assert (rows[0]["N"], rows[-1]["N"]) == (16, 256)
    assert [r["violating_runs"] for r in rows] == [0] * len(rows)


def test_the_twin_with_one_hash_per_table_fails_every_run():
    """Algorithm 1 with z = 1 (a twin: far keys share buckets) breaks the definition of Section 3 on every run."""
    (runs,) = said(r"a twin with z = 1 fails every run and is caught with (\d+) runs")
    twin = next(t for t in all_twins() if (t.claim, t.name) == ("anna.alg_1", "one_hash_per_table"))
    assert twin.params["seeds"] == int(runs)
    with twin.breaks():
        record = run_check(twin.claim, dict(twin.params), twin.numerics, 0)
    assert record["extra"]["violating_runs"] == int(runs) and record["verdict"] == "fail"
    assert any(r.startswith("eta:") for r in record["reasons"])
