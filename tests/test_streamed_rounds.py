"""A round handed to the oracle as a generator (``simulate_layers(stream=True)``) is the same round."""

from __future__ import annotations

import types

import numpy as np
import pytest

from attnsim.sim.masks import Causal
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights, reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.token_maps import random_affine
from attnsim.sim.two_heads import causal
from attnsim.sim.two_heads.jobs import run_one_per_call

NM = get_numerics("float64", 0)


def _model(N: int, d: int, H: int, L: int, seed: int):
    rng = np.random.default_rng(seed)
    spec = TransformerSpec(N=N, d=d, H=H, L=L, mask=Causal(), residual=True)
    m = d // H
    layers = tuple(LayerWeights(tuple(HeadWeights(*(rng.standard_normal((m, m)) / 4 for _ in range(3)))
                                      for _ in range(H)), random_affine(rng, d, d, None)) for _ in range(L))
    return spec, Weights(layers), rng.standard_normal((N, d))


def _oracles():
    yield lambda spec: Oracle(spec, NM)
    try:
        from attnsim.sim.torch_oracle import TorchOracle
    except ImportError:  # the torch extra is optional; the numpy oracle still runs
        return
    yield lambda spec: TorchOracle(spec, NM, batch_elements=64)  # tiny batches: many flushes mid-round


@pytest.mark.parametrize("scheme", ["fused", "paper"])
def test_streamed_round_equals_listed_round(scheme):
    spec, w, X = _model(22, 4, 2, 2, seed=7)
    for make in _oracles():
        seen = []

        def spy(oracle, jobs):
            seen.append(isinstance(jobs, types.GeneratorType))
            return run_one_per_call(oracle, jobs)

        outs, ledgers = [], []
        for stream in (False, True):
            oracle = make(OracleSpec(max_len=5, dim=2 * spec.m + 2, causal=True))
            outs.append(causal.simulate(spec, w, X, oracle, b=4, scheme=scheme, runner=spy, stream=stream))
            ledgers.append(oracle.ledger.entries)
        assert seen == [False, False, True, True]
        assert np.array_equal(outs[0], outs[1])
        assert ledgers[0] == ledgers[1]
        err = np.max(np.abs(outs[1] - reference(spec, w, X, NM)) / np.abs(reference(spec, w, X, NM)).max())
        assert err < 2.0 ** -40


def test_empty_generator_is_no_round():
    oracle = Oracle(OracleSpec(max_len=4, dim=4), NM)
    assert oracle.run(c for c in []) == [] and oracle.round == 0
