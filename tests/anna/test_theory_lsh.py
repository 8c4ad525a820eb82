"""theory/lsh.py: the proof's z, ell and eta satisfy the inequalities they were chosen for."""

from __future__ import annotations

import math

import pytest

from attnsim.sim.anna.lsh import HyperplaneLSH, PStableLSH
from attnsim.theory.lsh import (
    cross_polytope_probabilities,
    family_probabilities,
    hyperplane_probabilities,
    ideal_parameters,
    proof_parameters,
    pstable_probabilities,
)


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


def test_closed_forms_match_the_simulated_families():
    p1, p2 = hyperplane_probabilities(0.3, 4.0)
    fam = HyperplaneLSH(3)
    assert math.isclose(p1, fam.collision_probability(0.3)) and math.isclose(p2, fam.collision_probability(1.2))
    q1, q2 = pstable_probabilities(1.0, 3.0, 4.0)
    ps = PStableLSH(3, 4.0)
    assert math.isclose(q1, ps.collision_probability(1.0), rel_tol=1e-9)
    assert math.isclose(q2, ps.collision_probability(3.0), rel_tol=1e-9)


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


@pytest.mark.parametrize("r, c, dim", [(0.1, 14.0, 4), (0.2, 7.0, 8), (0.5, 3.0, 16)])
def test_cross_polytope_rho_is_andoni_et_al_leading_term(r, c, dim):
    p1, p2 = cross_polytope_probabilities(r, c, dim)
    rho = math.log(1 / p1) / math.log(1 / p2)
    assert math.isclose(rho, (r**2 / (4 - r**2)) / ((c * r) ** 2 / (4 - (c * r) ** 2)))
    assert 0 < p2 < p1 < 1 and rho < 1 / c**2 * (4 / (4 - (c * r) ** 2))
    assert family_probabilities("cross-polytope", r, c, dim) == (p1, p2)
    assert family_probabilities("hyperplane", r, c, dim) == hyperplane_probabilities(r, c)


def test_cross_polytope_refuses_radii_off_the_sphere():
    with pytest.raises(ValueError, match="^r, c:"):
        cross_polytope_probabilities(0.5, 4.0, 4)
    with pytest.raises(ValueError, match="^lsh:"):
        family_probabilities("pstable", 0.1, 2.0, 4)
