"""two_heads.thm_3_5 (``two_heads.causal``) with its calls on torch SDPA (the GPT-2 example's path),
and a round handed to the oracle as a generator (``simulate_layers(stream=True)``) being the same round."""

from __future__ import annotations

import importlib.util
import types

import numpy as np
import pytest

from attnsim.sim.masks import Causal
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights, reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.token_maps import random_affine
from attnsim.sim.torch.oracle import TorchOracle
from attnsim.sim.two_heads import causal
from attnsim.sim.two_heads.jobs import run_one_per_call

NO_TORCH = "the torch extra is not installed (pip install -e '.[torch]')"
NM = get_numerics("float64", 0)


def _model(N: int, d: int, H: int, L: int, seed: int, residual: bool = False):
    rng = np.random.default_rng(seed)
    spec = TransformerSpec(N=N, d=d, H=H, L=L, mask=Causal(), residual=residual)
    m = d // H
    layers = tuple(LayerWeights(tuple(HeadWeights(*(rng.standard_normal((m, m)) / 4 for _ in range(3)))
                                      for _ in range(H)), random_affine(rng, d, d, None)) for _ in range(L))
    return spec, Weights(layers), rng.standard_normal((N, d))


def _bits(y, ref) -> float:
    err = np.max(np.linalg.norm(y - ref, axis=1) / np.linalg.norm(ref, axis=1))
    return float("inf") if err == 0 else float(-np.log2(err))


@pytest.mark.parametrize("N, M, H, L, residual, scheme", [(32, 8, 2, 1, False, "fused"), (30, 4, 1, 2, True, "fused"),
                                                          (24, 8, 2, 2, True, "paper")])
def test_causal_model_on_torch_sdpa(N, M, H, L, residual, scheme):
    pytest.importorskip("torch", reason=NO_TORCH)
    spec, w, X = _model(N, 4, H, L, seed=N + M, residual=residual)
    oracle = TorchOracle(OracleSpec(max_len=M + 1, dim=2 * spec.m + 2, causal=True), NM)
    Y = causal.simulate(spec, w, X, oracle, b=M, scheme=scheme, runner=run_one_per_call)
    assert _bits(Y, reference(spec, w, X, NM)) >= 40
    n = -(-N // M)
    assert oracle.ledger.total("oracle") == (1 if scheme == "fused" else 2) * n * n * H * L
    assert oracle.ledger.rounds() == L


def test_swapping_the_reversed_call_is_caught_on_torch():
    """A runner that answers every offsets-> call with the offsets-<= one must fail the comparison."""
    pytest.importorskip("torch", reason=NO_TORCH)
    spec, w, X = _model(16, 2, 1, 1, seed=5)

    def broken(oracle, jobs):
        out = run_one_per_call(oracle, jobs)
        return [out[i - 1] if ".high." in j.tag else o for i, (j, o) in enumerate(zip(jobs, out))]

    oracle = TorchOracle(OracleSpec(max_len=5, dim=6, causal=True), NM)
    Y = causal.simulate(spec, w, X, oracle, b=4, scheme="fused", runner=broken)
    assert _bits(Y, reference(spec, w, X, NM)) < 10


def _oracles():
    yield lambda spec: Oracle(spec, NM)
    if importlib.util.find_spec("torch") is None:  # the torch extra is optional; the numpy oracle still runs
        return
    yield lambda spec: TorchOracle(spec, NM, batch_elements=64)  # tiny batches: many flushes mid-round


@pytest.mark.parametrize("scheme", ["fused", "paper"])
def test_streamed_round_equals_listed_round(scheme):
    spec, w, X = _model(22, 4, 2, 2, seed=7, residual=True)
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
