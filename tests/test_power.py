"""Power where a check was weak: the KV-memory exponent is fitted above the baseline (peak = c0 + c1 N^a),
and Thm 4.1's sampled errors are measured against an independent softmax."""

from __future__ import annotations

import numpy as np

from attnsim.sim.two_heads import average
from attnsim.verify.claims.two_heads_approx import sampled_errors
from attnsim.verify.claims.two_heads_memory import fused_calls, increment_exponent
from attnsim.verify.reference_attention import relative_row_errors, softmax_attention


def test_an_n_squared_term_under_a_large_constant_is_seen_above_the_baseline():
    ns = [256, 512, 1024, 2048]
    linear = [10**7 + 30 * n for n in ns]
    quadratic = [b + n * n // 8 for b, n in zip(linear, ns)]
    assert abs(increment_exponent(ns, linear) - 1) < 1e-9
    assert np.polyfit(np.log(ns), np.log(quadratic), 1)[0] < 0.5  # the bytes' own slope hides it
    assert increment_exponent(ns, quadratic) > 1.5
    assert increment_exponent(ns, [5, 6, 6, 7]) is None  # no growth at one step: nothing to fit


def test_fused_call_count_is_lemma_3_1s():
    assert fused_calls(1024, 64) == 16**2 and fused_calls(1000, 64) == 16**2


def test_independent_softmax_matches_the_direct_head_and_the_sweep():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((64, 2)), rng.standard_normal((64, 2)), rng.standard_normal((64, 3))
    s = q @ k.T
    w = np.exp(s - s.max(axis=1, keepdims=True))
    direct = (w @ v) / w.sum(axis=1, keepdims=True)
    truth, logden = softmax_attention(q, k, v)
    assert relative_row_errors(truth, direct).max() < 1e-12
    assert np.allclose(logden, np.log(np.exp(s).sum(axis=1)))
    taus = [rng.permutation(64) for _ in range(3)]
    ours, theirs = sampled_errors(q, k, v, taus, 16, 0.5), average.sweep(q, k, v, taus, 16, 0.5)
    assert np.allclose(ours.max_error, theirs.max_error) and np.allclose(ours.denominator_error,
                                                                          theirs.denominator_error)
