"""The eta verdict of anna.alg_1 / alg_2 and the containment with the proof's ell(N), z(N)."""

from __future__ import annotations

import pytest
import sympy as sp

from attnsim.paper_refs import get
from attnsim.theory.formulas import as_number, evaluate
from attnsim.theory.lsh import hyperplane_probabilities, proof_parameters
from attnsim.theory.symbolic import OUTSIDE, analyse
from attnsim.verify.claims.anna import clopper_pearson, eta_reason


def test_a_synthetic_eta_hat_above_the_proofs_eta_fails():
    reason = eta_reason(30, 100, eta_bound=0.05)
    assert reason is not None and "lies above the proof's eta" in reason


def test_eta_hat_whose_interval_reaches_the_bound_passes():
    lo, _ = clopper_pearson(3, 20)
    assert lo <= 0.05
    assert eta_reason(3, 20, eta_bound=0.05) is None
    assert eta_reason(0, 200, eta_bound=0.001) is None


@pytest.mark.parametrize("claim", ["anna.alg_1", "anna.alg_2"])
def test_hash_count_containment_sees_the_growing_ell_and_z(claim):
    theory = analyse(get(claim), "hash_evaluations")
    assert theory.verdict == OUTSIDE
    assert theory.leading_constant.has(sp.oo)


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


def test_ratio_of_count_to_bound_grows_with_n():
    claim = get("anna.alg_1")
    p1, p2 = hyperplane_probabilities(0.2, 7.0)
    ratios = []
    for n in (64, 1024, 2**14, 2**20):
        pp = proof_parameters(n, p1, p2)
        values = {"N": n, "rho": pp.rho, "q2": 1 / p2 - 1}
        res = claim.resources["hash_evaluations"]
        ratios.append(as_number(evaluate(res.exact, claim.definitions, values))
                      / as_number(evaluate(res.bound, claim.definitions, values)))
    assert ratios == sorted(ratios) and ratios[-1] > 1.5 * ratios[0]


def test_eta_sweep_table_in_the_report(tmp_path):
    from attnsim.verify.report.sections.anna import eta_sweep_section

    assert eta_sweep_section([], tmp_path, True) == ""
    md = eta_sweep_section([{"claim": "anna.alg_1"}], tmp_path, True)
    rows = [line for line in md.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) >= 5 and "Clopper-Pearson" in md
    assert (tmp_path / "tables" / "anna_eta_sweep.json").exists()
