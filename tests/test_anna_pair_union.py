"""The proof's union bound on eta per pair (Thm A.1, steps 1 and 3) is paper_refs' eta_union cut into its pairs."""

from __future__ import annotations

import pytest

from attnsim.theory.lsh import pair_union_bound, proof_parameters


@pytest.mark.parametrize("n,p1,p2", [(16, 0.6, 0.2), (64, 0.5, 0.05), (8, 0.9, 0.5)])
def test_n_squared_pairs_at_p1_and_p2_give_eta_union(n, p1, p2):
    params = proof_parameters(n, p1, p2)
    got = pair_union_bound(params.ell, params.z, [p1] * n * n, [p2] * n * n)
    assert got == pytest.approx(params.eta_bound, rel=1e-12)


def test_each_pair_adds_its_own_term():
    assert pair_union_bound(3, 2, [], [0.5]) == pytest.approx(3 * 0.25)  # a far pair: ell P^z
    assert pair_union_bound(3, 2, [0.5], []) == pytest.approx(0.75**3)  # a near pair: (1 - P^z)^ell
    assert pair_union_bound(3, 2, [0.5], [0.5]) > pair_union_bound(3, 2, [0.5], [0.4])  # a farther far pair adds less
    assert pair_union_bound(4, 1, [], []) == 0
