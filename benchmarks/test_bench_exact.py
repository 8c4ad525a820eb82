"""pytest-benchmark: exact arithmetic at N = 128 in python-flint and in fractions.Fraction — direct
attention, and the Lemma 3.1 fused simulation (the bench's ``fraction / flint, simulation`` figure).

Run with ``python -m pytest benchmarks -n 0``.
"""

from __future__ import annotations

import pytest

from attnsim.sim.masks import Full
from attnsim.sim.model import reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads import worst_case
from attnsim.verify.cases import random_case


@pytest.mark.parametrize("numerics", ["exact", "fraction"])
def test_exact_reference_attention(benchmark, numerics):
    """Time the exact reference model at N = 128 in each exact backend."""
    case = random_case(128, 2, 1, 1, Full(), seed=0)
    nm = get_numerics(numerics, 0)
    X = nm.array(case.X, "X")
    benchmark.pedantic(reference, args=(case.spec, case.weights, X, nm), rounds=5, iterations=1)


@pytest.mark.parametrize("numerics", ["exact", "fraction"])
def test_exact_lemma_3_1_simulation(benchmark, numerics):
    """Time the exact Lemma 3.1 simulation at N = 128 in each exact backend."""
    N, M, d = 128, 16, 4
    case = random_case(N, d, 1, 1, Full(), seed=0)
    nm = get_numerics(numerics, 0)
    X = nm.array(case.X, "X")

    def run():
        return worst_case.simulate(case.spec, case.weights, X, Oracle(OracleSpec(M + 1, dim=2 * d + 2), nm), b=M,
                                   scheme="fused")

    Y = benchmark.pedantic(run, rounds=5, iterations=1)
    assert (Y == reference(case.spec, case.weights, X, nm)).all()
