"""The batched float64 engine: same calls, same ledger, same outputs (to the last bits) as the
generic per-call path of two_heads.lemma_3_1; refusals as the Oracle's; a broken decode is caught."""

from __future__ import annotations

import numpy as np
import pytest

import attnsim.sim.engine.blockwise as blockwise
from attnsim.sim.engine.batch import CallBatch, Gathered, admit
from attnsim.sim.engine.runner import run_batched
from attnsim.sim.engine.schedulers import Serial
from attnsim.sim.engine.simulate import simulate as fast_simulate
from attnsim.sim.errors import AttnsimError, OracleSpecError
from attnsim.sim.masks import Full
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleCall, OracleHead, OracleLayer, OracleSpec
from attnsim.sim.two_heads import worst_case
from attnsim.sim.two_heads.blocks import head_jobs
from attnsim.verify.cases import random_case

F64 = get_numerics("float64", 0)

# (N, d, H, L, M, scheme, convention, residual)
CASES = [
    (16, 4, 1, 1, 4, "paper", "paper", False),
    (13, 4, 1, 1, 4, "paper", "paper", False),     # partial last block
    (13, 4, 1, 1, 4, "fused", "paper", False),
    (11, 4, 1, 1, 4, "fused", "strict", False),
    (30, 4, 2, 2, 8, "paper", "paper", False),     # two heads, two layers, affine ψ
    (30, 4, 2, 2, 8, "fused", "paper", True),      # residual stream
    (3, 2, 1, 1, 8, "paper", "paper", False),      # one block shorter than M
]


def _run(case, M, scheme, convention, how):
    spec = OracleSpec(OracleSpec.max_len_for(M, convention), dim=2 * case.spec.m + 2,
                      length_convention=convention)
    b = OracleSpec.block_size(M, convention)
    oracle = Oracle(spec, F64)
    X = F64.array(case.X)
    if how == "generic":
        Y = worst_case.simulate(case.spec, case.weights, X, oracle, b=b, scheme=scheme)
    elif how == "runner":
        Y = worst_case.simulate(case.spec, case.weights, X, oracle, b=b, scheme=scheme, runner=run_batched)
    else:
        Y = fast_simulate(case.spec, case.weights, X, oracle, b=b, scheme=scheme, scheduler=how)
    return Y, oracle.ledger


def _same_counts(a, b):
    assert a.by_tag() == b.by_tag()
    assert a.by_kind() == b.by_kind()
    assert a.rounds("oracle") == b.rounds("oracle")
    assert a.flops("oracle") == b.flops("oracle") and a.flops("processing") == b.flops("processing")
    assert a.max_shape("oracle") == b.max_shape("oracle")


def _bits(y, ref):
    err = np.linalg.norm(y - ref, axis=1) / np.maximum(np.linalg.norm(ref, axis=1), 1e-300)
    return np.inf if not err.any() else -np.log2(err.max())


@pytest.mark.parametrize("N, d, H, L, M, scheme, convention, residual", CASES)
def test_engine_matches_generic_path(N, d, H, L, M, scheme, convention, residual):
    case = random_case(N, d, H, L, Full(), seed=N + d, exact_kind=False, residual=residual)
    ref, led = _run(case, M, scheme, convention, "generic")
    for how in ("runner", Serial(threads=1), Serial(threads=2)):
        Y, led2 = _run(case, M, scheme, convention, how)
        assert _bits(Y, ref) >= 50, how  # ulp-level: only the order of BLAS sums differs
        _same_counts(led2, led)
        assert led2.total("oracle") == led.total("oracle") == sum(1 for e in led.entries if e.kind == "oracle")


def test_threads_do_not_change_bits():
    case = random_case(40, 4, 2, 1, Full(), seed=3, exact_kind=False)
    a, _ = _run(case, 8, "fused", "paper", Serial(threads=1))
    b, _ = _run(case, 8, "fused", "paper", Serial(threads=2))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("scheme", ["paper", "fused"])
def test_gathered_inputs_are_exactly_the_generic_jobs(scheme):
    """Materialised batch inputs and weights == blocks.head_jobs' Z and weights, call by call."""
    N, d, M = 13, 3, 4
    rng = np.random.default_rng(1)
    X = rng.standard_normal((N, d))
    WQ, WK, WV = (rng.standard_normal((d, d)) for _ in range(3))
    jobs, plans = head_jobs(F64, X, WQ, WK, WV, M, scheme, "t")
    generic = {(p.q0, p.t, p.kind): j for j, p in zip(jobs, plans)}
    arrays = blockwise.head_sources(X, 0)
    seen = 0
    for batch, group in blockwise.head_batches(F64, 0, N, d, WQ, WK, WV, M, scheme, "t"):
        Z = batch.inputs.materialize(arrays)
        for j, q0 in enumerate(group.q0s):
            job = generic[(int(q0), group.t, group.kind)]
            assert job.tag == batch.tag
            assert np.array_equal(Z[j], job.Z)
            for W, Wg in ((batch.WQ, job.WQ), (batch.WK, job.WK), (batch.WV, job.WV)):
                assert np.array_equal(W, Wg)
            seen += 1
    assert seen == len(jobs)


def _oracle_refusal(spec, batch, arrays):
    Z = batch.inputs.materialize(arrays)[0]
    call = OracleCall(batch.tag, Z, (OracleLayer((OracleHead(batch.WQ, batch.WK, batch.WV),)),))
    with pytest.raises(OracleSpecError) as e:
        Oracle(spec, F64).run([call])
    return str(e.value)


@pytest.mark.parametrize("spec", [OracleSpec(max_len=4, dim=8), OracleSpec(max_len=9, dim=3),
                                  OracleSpec(max_len=9, dim=8, heads=2)])
def test_refusals_match_the_oracle(spec):
    rng = np.random.default_rng(0)
    arrays = {"S": rng.standard_normal((10, 4))}
    inputs = Gathered(("S",), (4,), (np.arange(2 * 5).reshape(2, 5),))
    W = rng.standard_normal((4, 4))
    batch = CallBatch("probe", inputs, W, W, W)
    oracle = Oracle(spec, F64)
    with pytest.raises(OracleSpecError) as e:
        admit(oracle, batch)
    assert str(e.value) == _oracle_refusal(spec, batch, arrays)
    assert oracle.ledger.total("oracle") == 0


def test_admitted_batch_counts_every_call():
    oracle = Oracle(OracleSpec(max_len=5, dim=4), F64)
    inputs = Gathered(("S",), (4,), (np.zeros((7, 5), dtype=int),))
    W = np.eye(4)
    admit(oracle, CallBatch("probe", inputs, W, W, W))
    assert oracle.ledger.total("oracle") == 7
    assert oracle.ledger.flops("oracle") == 7 * (2 * 5 * 4 * 12 + 2 * 25 * 8)


def test_engine_refuses_other_numerics():
    case = random_case(8, 2, 1, 1, Full(), seed=0)
    nm = get_numerics("exact", 0)
    with pytest.raises(AttnsimError, match="float64"):
        fast_simulate(case.spec, case.weights, nm.array(case.X), Oracle(OracleSpec(5, dim=4), nm), b=4)


def test_broken_decode_is_caught(monkeypatch):
    """A fused decode that forgets the padding correction is wrong on the partial block."""
    case = random_case(13, 4, 1, 1, Full(), seed=5, exact_kind=False)
    ref, _ = _run(case, 4, "fused", "paper", "generic")
    good, _ = _run(case, 4, "fused", "paper", Serial(threads=1))
    original = blockwise.decode_AB
    monkeypatch.setattr(blockwise, "decode_AB", lambda pad: original(0))
    bad, _ = _run(case, 4, "fused", "paper", Serial(threads=1))
    assert _bits(good, ref) >= 50
    assert _bits(bad, ref) < 10



def test_pre_map_and_residual_as_generic():
    """A layer's pre map (pre-LN stand-in) and the residual addition: same outputs and ledger."""
    from dataclasses import replace

    from attnsim.sim.model import LayerWeights, Weights
    from attnsim.sim.token_maps import Center

    case = random_case(20, 4, 2, 2, Full(), seed=9, exact_kind=False, residual=True)
    weights = Weights(tuple(LayerWeights(l.heads, l.psi, pre=Center()) for l in case.weights.layers))  # noqa: E741
    case = replace(case, weights=weights) if hasattr(case, "__dataclass_fields__") else case
    ref, led = _run(case, 8, "paper", "paper", "generic")
    Y, led2 = _run(case, 8, "paper", "paper", Serial(threads=2))
    assert _bits(Y, ref) >= 50
    _same_counts(led2, led)
    assert led2.total("processing", "pre_norm") > 0 and led2.total("processing", "residual") == 2
