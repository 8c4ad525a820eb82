"""Streamed outputs: Theorem 3.5 with each call's output folded into eq. (1)'s running sums.

The online path must be the batch path in everything but memory: the same output (exactly, in
exact numerics), the same calls, rounds and processing entries, on every block layout.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from attnsim.sim.masks import Causal
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads import causal
from attnsim.sim.two_heads.jobs import run_one_per_call, stream_one_per_call
from attnsim.verify.cases import random_case


def _ledger_view(o: Oracle) -> list[tuple]:
    return [(e.kind, e.tag, e.round, e.shape, e.flops) for e in o.ledger.entries]


def _run(numerics: str, scheme: str, N: int, b: int, online: bool, oracle_cls=Oracle):
    nm = get_numerics(numerics, 0)
    case = random_case(N, 4, 2, 2, Causal(), seed=5, exact_kind=numerics == "exact")
    o = oracle_cls(OracleSpec(max_len=b + 1, dim=2 * case.spec.d // case.spec.H + 2, causal=True), nm)
    kw = {"sink_runner": stream_one_per_call} if online else {"runner": run_one_per_call}
    Y = causal.simulate(case.spec, case.weights, nm.array(case.X), o, b=b, scheme=scheme, **kw)
    return Y, o


@pytest.mark.parametrize("scheme", ["paper", "fused"])
@pytest.mark.parametrize("N,b", [(20, 5), (23, 5), (7, 8), (16, 4)])
def test_online_equals_batch_exactly(scheme: str, N: int, b: int) -> None:
    Yb, ob = _run("exact", scheme, N, b, online=False)
    Yo, oo = _run("exact", scheme, N, b, online=True)
    assert (Yb == Yo).all()
    assert _ledger_view(ob) == _ledger_view(oo)


def test_online_float64_agrees_and_counts_the_same() -> None:
    Yb, ob = _run("float64", "fused", 40, 8, online=False)
    Yo, oo = _run("float64", "fused", 40, 8, online=True)
    assert np.max(np.abs(Yb - Yo)) < 1e-12
    assert ob.ledger.total("oracle") == oo.ledger.total("oracle") and ob.ledger.rounds() == oo.ledger.rounds()


def test_a_dropped_output_is_refused_not_combined() -> None:
    """A ratio output whose normaliser never arrives is an error, never a silently wrong sum."""
    nm = get_numerics("exact", 0)
    case = random_case(12, 4, 2, 2, Causal(), seed=5, exact_kind=True)
    o = Oracle(OracleSpec(max_len=5, dim=2 * case.spec.d // case.spec.H + 2, causal=True), nm)

    def drop_first(oracle, jobs, sink):
        return stream_one_per_call(oracle, jobs, lambda i, out: None if i == 0 else sink(i, out))

    with pytest.raises(Exception, match="partner"):
        causal.simulate(case.spec, case.weights, nm.array(case.X), o, b=4, scheme="paper", sink_runner=drop_first)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed: torch oracle untested")
def test_torch_oracle_streams_the_same_outputs() -> None:
    from attnsim.sim.torch.oracle import TorchOracle

    Yb, ob = _run("float64", "fused", 40, 8, online=False, oracle_cls=TorchOracle)
    Yo, oo = _run("float64", "fused", 40, 8, online=True, oracle_cls=TorchOracle)
    assert np.max(np.abs(Yb - Yo)) < 1e-12
    assert _ledger_view(ob) == _ledger_view(oo)
