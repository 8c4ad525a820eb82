"""Power where a check was weak: the KV-memory bytes are fitted as c0 + c1 N + c2 N² (an N² term under a large
baseline c0 is seen),
and Thm 4.1's sampled errors are measured against an independent softmax."""

from __future__ import annotations

import numpy as np

from attnsim.sim.two_heads import average
from attnsim.verify.claims.two_heads_approx import sampled_errors
from attnsim.verify.claims.two_heads_memory import fused_calls, quadratic_term
from attnsim.verify.reference_attention import relative_row_errors, softmax_attention


def test_an_n_squared_term_under_a_large_constant_is_seen_above_the_baseline():
    ns = [256, 512, 1024, 2048, 4096]
    linear = [10**7 + 30 * n + (n % 3) * 500 for n in ns]  # a little noise, nothing super-linear
    quadratic = [b + n * n // 64 for b, n in zip(linear, ns)]
    c2, low, high = quadratic_term(ns, linear)
    assert low < 0 < high and abs(c2) < 1e-3
    assert np.polyfit(np.log(ns), np.log(quadratic), 1)[0] < 0.5  # the bytes' own slope hides it
    c2, low, high = quadratic_term(ns, quadratic)
    assert low > 0 and abs(c2 - 1 / 64) < 1e-3
    assert quadratic_term(ns[:4], quadratic) is None  # four sizes: no interval worth the name


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
