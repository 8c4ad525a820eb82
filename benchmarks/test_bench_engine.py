"""pytest-benchmark timings of the engine (not part of the test run: ``testpaths = ["tests"]``).

Run with ``python -m pytest benchmarks -n 0`` (pytest-benchmark switches itself off under xdist).
Ratios between these timings are what ``attnsim bench`` reports.
"""

from __future__ import annotations

import pytest

from attnsim.sim.engine.schedulers import Serial
from attnsim.sim.engine.simulate import simulate
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.verify.bench.engine import direct_attention
from attnsim.verify.long_run import random_layer

N, M, D = 4096, 256, 64


@pytest.fixture(scope="module")
def layer():
    """One random single-head layer of length N and width D, shared by the benchmarks."""
    return random_layer(N, D, 1, 0)


def test_direct_attention(benchmark, layer):
    """Time direct float64 attention of one head (the baseline)."""
    _, weights, X = layer
    hw = weights.layers[0].heads[0]
    benchmark(direct_attention, X, hw.WQ, hw.WK, hw.WV)


@pytest.mark.parametrize("scheme", ["fused", "paper"])
def test_engine_lemma_3_1(benchmark, layer, scheme):
    """Time Lemma 3.1 on the batched engine, for each scheme."""
    spec, weights, X = layer
    nm = get_numerics("float64", 0)

    def run():
        return simulate(spec, weights, X, Oracle(OracleSpec(M + 1, dim=2 * D + 2), nm), b=M, scheme=scheme,
                        scheduler=Serial())

    benchmark(run)
