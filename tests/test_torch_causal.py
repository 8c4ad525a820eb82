"""The fused causal construction (attnsim.sim.torch_causal) on a causal oracle, numpy and torch SDPA."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.sim.errors import PreconditionError
from attnsim.sim.masks import Causal, Full
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights, reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.token_maps import random_affine
from attnsim.sim import torch_causal
from attnsim.sim.two_heads.jobs import run_one_per_call

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


@pytest.mark.parametrize("N, M, H, L, residual", [(16, 4, 1, 1, False), (24, 8, 2, 2, True), (8, 8, 2, 1, False),
                                                  (30, 3, 1, 2, False)])
def test_causal_model_reproduced_with_n_squared_calls(N, M, H, L, residual):
    spec, w, X = _model(N, 4, H, L, seed=N + M, residual=residual)
    oracle = Oracle(OracleSpec(max_len=M + 1, dim=2 * spec.m + 2, causal=True), NM)
    Y = torch_causal.simulate(spec, w, X, oracle, b=M)
    assert _bits(Y, reference(spec, w, X, NM)) >= 40
    n = N // M
    assert oracle.ledger.total("oracle") == n * n * H * L
    assert oracle.ledger.rounds() == L and oracle.ledger.max_shape() == (M + 1, 2 * spec.m + 2) or n == 1


def test_on_torch_oracle():
    pytest.importorskip("torch", reason="the torch extra is not installed (pip install -e '.[torch]')")
    from attnsim.sim.torch_oracle import TorchOracle

    spec, w, X = _model(32, 4, 2, 1, seed=3)
    oracle = TorchOracle(OracleSpec(max_len=9, dim=2 * spec.m + 2, causal=True), NM)
    assert _bits(torch_causal.simulate(spec, w, X, oracle, b=8), reference(spec, w, X, NM)) >= 40


def test_dropping_the_reversed_call_is_caught():
    """A broken runner that answers the offsets-> call with the offsets-<= one must fail the comparison."""
    spec, w, X = _model(16, 2, 1, 1, seed=5)

    def broken(oracle, jobs):
        out = run_one_per_call(oracle, jobs)
        return [out[i - 1] if j.tag.endswith("earlier_gt") else o for i, (j, o) in enumerate(zip(jobs, out))]

    oracle = Oracle(OracleSpec(max_len=5, dim=6, causal=True), NM)
    assert _bits(torch_causal.simulate(spec, w, X, oracle, b=4, runner=broken), reference(spec, w, X, NM)) < 10


def test_preconditions_name_the_parameter():
    spec, w, X = _model(12, 2, 1, 1, seed=0)
    with pytest.raises(PreconditionError, match="N = 12 must be a multiple"):
        torch_causal.simulate(spec, w, X, Oracle(OracleSpec(max_len=6, dim=6, causal=True), NM), b=5)
    with pytest.raises(PreconditionError, match="causal oracle"):
        torch_causal.simulate(spec, w, X, Oracle(OracleSpec(max_len=5, dim=6), NM), b=4)
    with pytest.raises(PreconditionError, match="dim"):
        torch_causal.simulate(spec, w, X, Oracle(OracleSpec(max_len=5, dim=5, causal=True), NM), b=4)
    full = TransformerSpec(N=12, d=2, mask=Full())
    with pytest.raises(PreconditionError, match="mask"):
        torch_causal.simulate(full, w, X, Oracle(OracleSpec(max_len=5, dim=6, causal=True), NM), b=4)
