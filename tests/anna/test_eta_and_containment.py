"""The eta verdict of anna.alg_1 / alg_2 and the containment with the proof's ell(N), z(N)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import sympy as sp

from attnsim.paper_refs import get
from attnsim.theory.formulas import as_number, evaluate
from attnsim.theory.lsh import hyperplane_probabilities, proof_parameters
from attnsim.theory.symbolic import OUTSIDE, analyse
from attnsim.verify.claims.anna_lsh import eta_reason
from attnsim.verify.stats import binomial_interval


def test_a_synthetic_eta_hat_above_the_proofs_eta_fails():
    reason = eta_reason(30, 100, eta_bound=0.05)
    assert reason is not None and "lies above the proof's eta" in reason


def test_eta_hat_whose_interval_reaches_the_bound_passes():
    lo, _ = binomial_interval(3, 20)
    assert lo <= 0.05
    assert eta_reason(3, 20, eta_bound=0.05) is None
    assert eta_reason(0, 200, eta_bound=0.001) is None


# Thm 3.4's stated time, O(m N^(1+3 rho) log_{1/p2} N): one log N short of N ell z (docs/anna_eta.md).
STATED = "N**(1 + 3*rho)*log(N)/log(1 + q2)"


def _with_bound(claim_id: str, bound: str):
    claim = get(claim_id)
    res = replace(claim.resources["hash_evaluations"], bound=bound)
    return replace(claim, resources={**claim.resources, "hash_evaluations": res})


@pytest.mark.parametrize("claim", ["anna.alg_1", "anna.alg_2"])
def test_hash_count_is_tight_against_n_ell_z_with_ell_and_z_growing(claim):
    theory = analyse(get(claim), "hash_evaluations")
    assert theory.verdict == "tight" and not theory.leading_constant.has(sp.oo)
    assert "rho" in {str(x) for x in theory.leading_constant.free_symbols}  # the proof's ell(N), z(N), not numbers


@pytest.mark.parametrize("claim", ["anna.alg_1", "anna.alg_2"])
def test_hash_count_exceeds_the_stated_time_bound(claim):
    theory = analyse(_with_bound(claim, STATED), "hash_evaluations")
    assert theory.verdict == OUTSIDE and theory.leading_constant.has(sp.oo)


@pytest.mark.parametrize("n", [16, 64, 1024])
def test_the_definitions_reproduce_the_proofs_ell_and_z(n):
    claim = get("anna.alg_1")
    p1, p2 = hyperplane_probabilities(0.2, 7.0)
    pp = proof_parameters(n, p1, p2)
    values = {"N": n, "rho": pp.rho, "q2": 1 / p2 - 1, "p1": p1, "p2": p2}
    assert as_number(evaluate("z", claim.definitions, values)) == pp.z
    assert as_number(evaluate("ell", claim.definitions, values)) == pp.ell
    assert as_number(evaluate(claim.resources["hash_evaluations"].exact, claim.definitions, values)) == \
        pp.hash_evaluations


def test_ratio_of_count_to_the_stated_bound_grows_with_n():
    claim = get("anna.alg_1")
    p1, p2 = hyperplane_probabilities(0.2, 7.0)
    ratios = []
    for n in (64, 1024, 2**14, 2**20):
        pp = proof_parameters(n, p1, p2)
        values = {"N": n, "rho": pp.rho, "q2": 1 / p2 - 1}
        res = claim.resources["hash_evaluations"]
        ratios.append(as_number(evaluate(res.exact, claim.definitions, values))
                      / as_number(evaluate(STATED, claim.definitions, values)))
    assert ratios == sorted(ratios) and ratios[-1] > 1.5 * ratios[0]


def test_eta_sweep_table_in_the_report(tmp_path):
    from attnsim.verify.report.sections.anna import eta_sweep_section

    assert eta_sweep_section([], tmp_path, True) == ""
    md = eta_sweep_section([{"claim": "anna.alg_1"}], tmp_path, True)
    rows = [line for line in md.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) >= 5 and "Clopper-Pearson" in md
    assert (tmp_path / "tables" / "anna_eta_sweep.json").exists()
