"""theory/lsh.py: the proof's z, ell and eta satisfy the inequalities they were chosen for."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsim.sim.anna.lsh import CrossPolytopeLSH
from attnsim.theory.lsh import (
    hyperplane_probabilities,
    ideal_parameters,
    proof_parameters,
)
from attnsim.verify.lsh_sensitivity import cross_polytope_sensitivity, sensitivity


@pytest.mark.parametrize("N", [16, 1000, 10**6])
@pytest.mark.parametrize("r, c", [(0.2, 7.0), (0.1, 14.0)])
def test_proof_parameters_meet_their_inequalities(N, r, c):
    p1, p2 = hyperplane_probabilities(r, c)
    pp = proof_parameters(N, p1, p2)
    assert p2 ** pp.z <= 0.1 / N**3 < p2 ** (pp.z - 1)
    near = p1 ** pp.z
    assert N**2 * (1 - near) ** pp.ell <= pp.delta
    assert pp.ell - 1 < math.log(N**2 / pp.delta) / near <= pp.ell
    assert math.isclose(pp.rho, math.log(1 / p1) / math.log(1 / p2))
    assert pp.hash_evaluations == 2 * N * pp.ell * pp.z


@pytest.mark.parametrize("c", [5.0, 10.0, 100.0])
def test_the_rebuttals_z_brings_the_union_bound_to_the_stated_rate(c):
    """anna.rebuttal_hash_tables sizes z for the union over the ell tables (p2^z <= 1/(10 N^3 L^(1/(1-rho))),
    L = ln(N^2/delta)): its union bound stays within 2 N^(3 rho - 1) at every N, where anna.alg_1's z
    (p2^z <= 1/(10 N^3)) leaves ell / (10 N), a log N above the rate, past 2 N^(3 rho - 1) by N = 10^6 at c = 10."""
    for N in (1000, 16000, 10**6):
        pp = ideal_parameters(N, c, claim="anna.rebuttal_hash_tables")
        L = math.log(N**2 / pp.delta)
        assert pp.p2 ** pp.z <= 1 / (10 * N**3 * L ** (1 / (1 - pp.rho))) < pp.p2 ** (pp.z - 1)
        assert pp.ell - 1 < L / pp.p1 ** pp.z <= pp.ell
        assert pp.eta_bound <= 2 * N ** (3 * pp.rho - 1)
    literal = ideal_parameters(10**6, 10.0)
    assert literal.eta_bound > 2 * 10 ** (6 * (3 * literal.rho - 1))


def test_ideal_family_tables_grow_as_c_shrinks():
    """The reviewer's table: ell for N = 16000 and c in {1000, 10, 3, 2}."""
    ells = [ideal_parameters(16000, c).ell for c in (1000, 10, 3, 2)]
    assert ells == sorted(ells) and ells[0] < 64 < ells[-1]
    assert ideal_parameters(16000, 10).rho == pytest.approx(0.01)


@pytest.mark.parametrize("call", [
    lambda: proof_parameters(1, 0.9, 0.5),
    lambda: proof_parameters(10, 0.5, 0.9),
    lambda: hyperplane_probabilities(0.5, 1.0),
    lambda: ideal_parameters(100, 0.9),
])
def test_bad_parameters_raise(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("r, c, dim", [(0.1, 14.0, 4), (0.2, 7.0, 8)])
def test_cross_polytope_bounds_bracket_the_drawn_family_on_the_safe_side(r, c, dim):
    """The simulated family's collision rate (its own code path) lies above p1 at r and below p2 at c r."""
    s = cross_polytope_sensitivity(r, c, dim)
    assert s.p1 <= s.p1_estimate and s.p2 >= s.p2_estimate and 0 < s.p2 < s.p1 < 1
    assert "Clopper-Pearson" in s.how and sensitivity("cross-polytope", r, c, dim) == s
    rng = np.random.default_rng(1)
    x = rng.standard_normal(dim)
    x /= np.linalg.norm(x)
    d = rng.standard_normal(dim)
    d -= d.dot(x) * x
    d /= np.linalg.norm(d)
    rates = []
    for dist in (r, c * r):
        theta = 2 * np.arcsin(dist / 2)
        y = np.cos(theta) * x + np.sin(theta) * d
        g = CrossPolytopeLSH(dim).draw(rng, 20000)  # 20000 independent rotations side by side
        rates.append(float(np.mean(g.codes(x[None]) == g.codes(y[None]))))
    assert rates[0] > s.p1 - 0.015 and rates[1] < s.p2 + 0.015
    assert abs(rates[0] - s.p1_estimate) < 0.015 and abs(rates[1] - s.p2_estimate) < 0.015


def test_the_leading_term_overstates_p1_at_dimension_8():
    """Andoni et al.'s leading term dim^(-u^2/(4-u^2)) says p1 = 0.98 at r = 0.2, m = 8; the family has about 0.81."""
    s = cross_polytope_sensitivity(0.2, 7.0, 8)
    leading = 8 ** (-0.04 / (4 - 0.04))
    assert leading > 0.97 and s.p1_estimate < 0.83


def test_cross_polytope_refuses_radii_off_the_sphere():
    with pytest.raises(ValueError, match="^r, c:"):
        cross_polytope_sensitivity(0.5, 4.0, 4)
    with pytest.raises(ValueError, match="^lsh:"):
        sensitivity("pstable", 0.1, 2.0, 4)
