"""pytest-benchmark: exact attention at N = 128 in python-flint and in fractions.Fraction.

Run with ``python -m pytest benchmarks -n 0``.
"""

from __future__ import annotations

import pytest

from attnsim.sim.masks import Full
from attnsim.sim.model import reference
from attnsim.sim.numerics import get_numerics
from attnsim.verify.cases import random_case


@pytest.mark.parametrize("numerics", ["exact", "fraction"])
def test_exact_reference_attention(benchmark, numerics):
    case = random_case(128, 2, 1, 1, Full(), seed=0)
    nm = get_numerics(numerics, 0)
    X = nm.array(case.X, "X")
    benchmark.pedantic(reference, args=(case.spec, case.weights, X, nm), rounds=5, iterations=1)
