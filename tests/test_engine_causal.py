"""Thm 3.5 (fused) on the batched engine: the same calls as the call-by-call construction, the same
ledger, the same outputs to rounding, and refusals where it does not apply."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.sim.engine import blockwise
from attnsim.sim.engine.causal import causal_batches, simulate
from attnsim.sim.errors import AttnsimError
from attnsim.sim.masks import Causal
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights, reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads import causal
from attnsim.sim.two_heads.blocks import weights_step1
from attnsim.sim.two_heads.jobs import run_one_per_call

F64 = get_numerics("float64", 0)


def _case(N: int, d: int, H: int, L: int, seed: int, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    m = d // H
    layers = tuple(LayerWeights(tuple(HeadWeights(*(rng.standard_normal((m, m)) * scale / np.sqrt(m)
                                                    for _ in range(3))) for _ in range(H))) for _ in range(L))
    return TransformerSpec(N=N, d=d, H=H, L=L, mask=Causal()), Weights(layers), rng.standard_normal((N, d))


def _oracle(spec: TransformerSpec, b: int) -> Oracle:
    return Oracle(OracleSpec(max_len=b + 1, dim=2 * spec.m + 2, causal=True), F64)


def test_batches_are_exactly_the_call_by_call_jobs():
    """Materialised batch inputs, weights and tags == causal.iter_causal_head_jobs', call by call."""
    N, m, b = 12, 3, 4
    rng = np.random.default_rng(2)
    X = rng.standard_normal((N, m))
    WQ, WK, WV = (rng.standard_normal((m, m)) for _ in range(3))
    generic = {(p.q0, p.t if p.part != "own" else -1, p.part): j
               for j, p in causal.iter_causal_head_jobs(F64, X, WQ, WK, WV, b, "fused", "t")}
    arrays = blockwise.head_sources(X, 0)
    seen = 0
    for t_batch, (batch, group) in enumerate(causal_batches(0, N, m, weights_step1(F64, WQ, WK, WV), b, "t")):
        Z = batch.inputs.materialize(arrays)
        t = -1 if group.part == "own" else (t_batch - 1) // 2
        for j, q0 in enumerate(group.q0s):
            job = generic[(int(q0), t, group.part)]
            assert job.tag == batch.tag
            assert np.array_equal(Z[j], job.Z)
            for W, Wg in ((batch.WQ, job.WQ), (batch.WK, job.WK), (batch.WV, job.WV)):
                assert np.array_equal(W, Wg)
            seen += 1
    assert seen == len(generic) == (N // b) ** 2


@pytest.mark.parametrize("N, d, H, L, b", [(64, 8, 2, 2, 8), (48, 6, 3, 1, 16), (32, 4, 1, 3, 4)])
def test_same_outputs_and_ledger_as_the_call_by_call_construction(N, d, H, L, b):
    spec, weights, X = _case(N, d, H, L, seed=N + b, scale=0.5)
    runs = []
    for run in (lambda o: causal.simulate(spec, weights, X, o, b=b, scheme="fused", runner=run_one_per_call),
                lambda o: simulate(spec, weights, X, o, b=b)):
        oracle = _oracle(spec, b)
        runs.append((run(oracle), oracle.ledger))
    (Y0, led0), (Y1, led1) = runs
    assert np.max(np.abs(Y1 - Y0)) <= 1e-12 * np.max(np.abs(Y0))
    ref = reference(spec, weights, X, F64)
    assert np.max(np.abs(Y1 - ref)) <= 1e-9 * np.max(np.abs(ref))
    assert led1.by_tag("oracle") == led0.by_tag("oracle") and led1.rounds() == led0.rounds() == L
    for kind in ("oracle", "processing"):
        assert _flops(led1, kind) == _flops(led0, kind)
    assert _shapes(led1) == _shapes(led0)


def _flops(ledger, kind: str) -> int:
    return sum(e.flops for e in ledger.entries if e.kind == kind)


def _shapes(ledger) -> set:
    return {e.shape for e in ledger.entries if e.kind == "oracle"}


def test_high_rows_read_in_order_would_be_caught(monkeypatch):  # the batch path's reading of "high" calls
    """The "high" layout holds query offset o in row b − 1 − o; reading its rows like a "low" call's
    (offset o in row o + 1) gives a different answer, which the reference comparison rejects."""
    from attnsim.sim.engine import causal as engine_causal

    spec, weights, X = _case(32, 4, 1, 1, seed=5, scale=0.5)
    real = engine_causal.CausalSums.add

    def add_as_low(self, group, out):
        real(self, engine_causal.CausalGroup("low" if group.part == "high" else group.part, group.q0s), out)

    monkeypatch.setattr(engine_causal.CausalSums, "add", add_as_low)
    Y = simulate(spec, weights, X, _oracle(spec, 8), b=8, paired=False)
    ref = reference(spec, weights, X, F64)
    assert np.max(np.abs(Y - ref)) > 1e-3 * np.max(np.abs(ref))


@pytest.mark.parametrize("case, parameter", [("partial block", "^N: "), ("other numerics", "^numerics: ")])
def test_refuses_what_it_does_not_run(case, parameter):
    spec, weights, X = _case(30 if case == "partial block" else 32, 4, 1, 1, seed=1)
    nm = get_numerics("mp:64" if case == "other numerics" else "float64", 0)
    oracle = Oracle(OracleSpec(max_len=9, dim=2 * spec.m + 2, causal=True), nm)
    with pytest.raises(AttnsimError, match=parameter):
        simulate(spec, weights, X, oracle, b=8)


def test_torch_backend_agrees():
    pytest.importorskip("torch", reason="the torch extra is not installed (pip install -e '.[torch]')")
    from attnsim.sim.torch.backend import register

    register()
    spec, weights, X = _case(64, 8, 2, 1, seed=9, scale=0.5)
    Ys = [simulate(spec, weights, X, _oracle(spec, 16), b=16, backend=be) for be in ("numpy", "torch")]
    assert np.max(np.abs(Ys[1] - Ys[0])) <= 1e-12 * np.max(np.abs(Ys[0]))


# The paired path (each key block's "low" and "high" calls from one score product, causal_pairs).
# b = 128 cuts blocks into tiles of 64 (the tiled value products); b = 8 is one tile.
@pytest.mark.parametrize("N, d, H, L, b", [(512, 8, 2, 1, 128), (64, 8, 2, 2, 8), (256, 6, 3, 1, 64)])
def test_paired_path_is_the_batch_path(N, d, H, L, b):
    spec, weights, X = _case(N, d, H, L, seed=N + b, scale=0.5)
    runs = []
    for paired in (False, True):
        oracle = _oracle(spec, b)
        runs.append((simulate(spec, weights, X, oracle, b=b, paired=paired), oracle.ledger))
    (Y0, led0), (Y1, led1) = runs
    assert np.max(np.abs(Y1 - Y0)) <= 1e-12 * np.max(np.abs(Y0))
    assert [(e.kind, e.tag, e.round, e.shape, e.flops, e.amount) for e in led1.entries] == \
        [(e.kind, e.tag, e.round, e.shape, e.flops, e.amount) for e in led0.entries]


def test_diagonal_in_the_high_call_would_be_caught(monkeypatch):
    """Key offset o belongs to the "low" call of query offset o; a kernel that gives it to the
    "high" call instead answers other calls, which the reference comparison rejects."""
    from attnsim.sim.engine import causal_pairs

    spec, weights, X = _case(256, 4, 1, 1, seed=3, scale=0.5)
    monkeypatch.setattr(causal_pairs, "_masks", lambda b: (np.tril(np.ones((b, b)), -1), np.triu(np.ones((b, b)))))
    Y = simulate(spec, weights, X, _oracle(spec, 128), b=128, paired=True)
    ref = reference(spec, weights, X, F64)
    assert np.max(np.abs(Y - ref)) > 1e-3 * np.max(np.abs(ref))


def _future_key_case(b: int, c: float):
    """One head whose only non-constant score is query 0 against the later key b − 1 of its own
    block (c²): masked for every call, but it sets the row maximum of query 0's own block."""
    N, m = 2 * b, 4
    rng = np.random.default_rng(11)
    X = rng.standard_normal((N, m))
    X[:, :2] = 0.0
    X[0, 0], X[b - 1, 1] = 1.0, 1.0
    WQ, WK = np.zeros((m, m)), np.zeros((m, m))
    WQ[0, 2], WK[1, 2] = c, c
    WV = rng.standard_normal((m, m))
    spec = TransformerSpec(N=N, d=m, H=1, L=1, mask=Causal())
    return spec, Weights((LayerWeights((HeadWeights(WQ, WK, WV),)),)), X


def test_a_row_beyond_the_headroom_runs_as_batches(monkeypatch):
    """Score 10⁶ against a future key: the shared shift would underflow every weight query 0's own
    call sees; the headroom check sends that block to the batch path, which gets it right."""
    from attnsim.sim.engine import causal as engine_causal

    spec, weights, X = _future_key_case(8, 1e3)
    ref = reference(spec, weights, X, F64)
    batches = []
    real = engine_causal.execute
    monkeypatch.setattr(engine_causal, "execute", lambda batch, *a: batches.append(batch.tag) or real(batch, *a))
    Y = simulate(spec, weights, X, _oracle(spec, 8), b=8)
    assert batches == ["thm_3_5.L0.H0.own.fused"]
    assert np.max(np.abs(Y - ref)) <= 1e-9 * np.max(np.abs(ref))


def test_no_headroom_check_would_be_caught(monkeypatch):
    from attnsim.sim.engine import causal_pairs

    spec, weights, X = _future_key_case(8, 1e3)
    monkeypatch.setattr(causal_pairs, "EXP_HEADROOM", np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 on this thread (threads=1)
        Y = simulate(spec, weights, X, _oracle(spec, 8), b=8, threads=1)
    ref = reference(spec, weights, X, F64)
    assert not np.all(np.abs(Y - ref) <= 1e-9 * np.max(np.abs(ref)))


def test_thread_count_does_not_change_the_result():
    spec, weights, X = _case(128, 8, 4, 2, seed=4, scale=0.5)
    Ys = [simulate(spec, weights, X, _oracle(spec, 32), b=32, threads=t) for t in (1, 3)]
    assert np.array_equal(Ys[0], Ys[1])


def test_the_callers_input_is_not_changed():
    """The heads are added into the residual stream in place only when it is the engine's own array."""
    spec, weights, X = _case(64, 8, 2, 1, seed=6)
    spec = TransformerSpec(N=spec.N, d=spec.d, H=spec.H, L=spec.L, mask=Causal(), residual=True)
    before = X.copy()
    Y = simulate(spec, weights, X, _oracle(spec, 16), b=16)
    assert np.array_equal(X, before)
    ref = reference(spec, weights, X, F64)
    assert np.max(np.abs(Y - ref)) <= 1e-9 * np.max(np.abs(ref))


def test_threads_must_be_positive():
    spec, weights, X = _case(32, 4, 1, 1, seed=1)
    with pytest.raises(AttnsimError, match="^threads: "):
        simulate(spec, weights, X, _oracle(spec, 8), b=8, threads=0)
