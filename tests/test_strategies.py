"""verify.strategies: the public hypothesis strategies generate valid objects and find real bugs."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from attnsim.sim.masks import Full
from attnsim.sim.model import reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads.worst_case import simulate
from attnsim.verify.strategies import cases, inputs, masks, model_specs, oracle_specs, score_patterns

EXACT = get_numerics("exact", 0)
# One layer: a second layer's inputs are attention outputs, off the score grid (``cases`` rounds them
# with a grid-affine layer MLP; these plain strategies use identity MLPs).
SMALL_FULL = model_specs(max_N=8, max_d=4, max_H=2, max_L=1, mask=st.just(Full()))


@given(model_specs(), oracle_specs(), masks())
def test_specs_are_valid(spec, ospec, mask):
    assert spec.d % spec.H == 0 and spec.N >= 1 and mask.materialize(4).shape == (4, 4)
    assert ospec.max_len >= 2 and ospec.length_convention in ("paper", "strict")


@given(st.integers(1, 6), st.integers(1, 4), st.data())
def test_inputs_on_the_grid(N, d, data):
    X = data.draw(inputs(N, d))
    assert X.shape == (N, d) and all(isinstance(v, Fraction) and (2 * v).denominator == 1 and abs(v) <= 1
                                     for v in X.ravel())


def lemma_3_1(case, M):
    nm = EXACT
    oracle = Oracle(OracleSpec(M + 1, 1, 1, 2 * case.spec.m + 2), nm)
    return simulate(case.spec, case.weights, nm.array(case.X, "X"), oracle, b=M)


def block_local(case, M):
    """A deliberately broken construction: attention only inside each block of M tokens."""
    nm, spec = EXACT, case.spec
    X = nm.array(case.X, "X")
    hw = case.weights.layers[0].heads[0]
    out = []
    for s in range(0, spec.N, M):
        Xb = X[s:s + M]
        out.append(nm.attention(nm.matmul(Xb, nm.array(hw.WQ)), nm.matmul(Xb, nm.array(hw.WK)),
                                nm.matmul(Xb, nm.array(hw.WV))))
    return np.concatenate(out, axis=0)


@settings(max_examples=8)
@given(cases(SMALL_FULL), st.integers(2, 4))
def test_fuzz_lemma_3_1_exact(case, M):
    ref = reference(case.spec, case.weights, EXACT.array(case.X, "X"), EXACT)
    assert (lemma_3_1(case, M) == ref).all()


def test_fuzzing_finds_the_broken_construction():
    """The same fuzz test applied to the block-local construction fails (no shrinking, to stay fast)."""
    one_head = model_specs(max_N=8, max_d=2, max_H=1, max_L=1, mask=st.just(Full()))
    seen = []

    @settings(max_examples=60, phases=[Phase.generate], database=None)
    @given(cases(one_head), st.integers(2, 4))
    def fuzz(case, M):
        ref = reference(case.spec, case.weights, EXACT.array(case.X, "X"), EXACT)
        seen.append(case.spec.N > M)
        assert (block_local(case, M) == ref).all()

    with pytest.raises(AssertionError):
        fuzz()
    assert seen[-1]  # the bug only shows across blocks


@given(score_patterns())
def test_adversarial_scores_exact_attention(p):
    n, m = p.scores.shape
    w = EXACT.weights(EXACT.array(p.scores, "scores"), p.allowed)
    out = EXACT.safe_div(EXACT.matmul(w, EXACT.array(np.ones((m, 1), dtype=object), "v")), EXACT.rowsum(w))
    for i in range(n):
        if not p.allowed[i].any():
            assert all(EXACT.is_zero(w[i])) and EXACT.is_zero(out[i]).all()  # fully masked row: 0, not NaN
        else:
            assert out[i, 0] == 1
    if p.kind == "ties":
        assert len({str(v) for v in w.ravel()}) == 1
    if p.kind == "dominant":
        assert all(max(range(m), key=lambda j: w[i, j]) == list(p.scores[i]).index(max(p.scores[i])) for i in range(n))
