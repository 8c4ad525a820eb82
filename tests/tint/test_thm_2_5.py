"""tint.thm_2_5: softmax simulating a linear head, error O(eps)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.sim.tint import experiments as ex
from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.linear_attention import linear_head, softmax_simulation
from attnsim.verify.stats import loglog_fit


def test_error_is_linear_in_eps_float64() -> None:
    eps = [1e-2 / 2 ** i for i in range(4)]
    errs = ex.thm25_sweep(get_arith("float64"), eps)
    assert abs(loglog_fit(eps, errs).slope - 1) < 0.1
    assert errs[-1] < errs[0]


def test_error_is_linear_in_eps_mp_down_to_small_eps() -> None:
    eps = [1e-5 / 2 ** i for i in range(3)]
    errs = ex.thm25_sweep(get_arith("mp:160"), eps)
    assert abs(loglog_fit(eps, errs).slope - 1) < 0.02


def test_float64_round_off_takes_over_at_tiny_eps() -> None:
    """Round-off grows like 1/eps below eps ~ 1e-8: the float64 error turns back up (as Thm 2.5's O(eps) error
    predicts)."""
    ar = get_arith("float64")
    errs = ex.thm25_sweep(ar, [1e-8, 1e-10, 1e-12])
    assert errs[0] < errs[1] < errs[2]


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000), n=st.integers(1, 6))
def test_rows_without_keys_give_zero_and_agree_with_linear(seed: int, n: int) -> None:
    ar = get_arith("float64")
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((n, 2)) for _ in range(3))
    allowed = np.tril(np.ones((n, n), dtype=bool))
    allowed[0] = False  # a row with no keys
    sim = softmax_simulation(ar, q, k, v, allowed, 1e-4)
    assert np.all(sim[0] == 0)
    np.testing.assert_allclose(sim, linear_head(q, k, v, allowed, 0.0), atol=1e-2)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 7), st.integers(1, 3), st.integers(0, 2 ** 32 - 1))
def test_grouped_exact_linear_head_is_the_linear_head(n, b, seed) -> None:
    """TinT's exact linear heads sum by groups of rows with the same keys: the values must be linear_head's."""
    from attnsim.sim.tint.linear_attention import grouped_linear_head, key_groups

    ar, rng = get_arith("exact"), np.random.default_rng(seed)
    q, k, v = (ar.array(rng.integers(-9, 10, size=(n, b)) / rng.integers(1, 7, size=(n, b))) for _ in range(3))
    allowed = rng.random((n, n)) < rng.random()
    zero = ar.scalar(0)
    assert (grouped_linear_head(q, k, v, key_groups(allowed), zero) == linear_head(q, k, v, allowed, zero)).all()


def test_the_slope_is_extrapolated_past_the_second_order_bend() -> None:
    """A seed whose data bends the local slopes at eps = 1/64 (0.845, 0.92, ...) passes on the extrapolated one;
    fewer than 3 points give nothing to extrapolate from, and are refused naming --halvings."""
    from attnsim.verify.check import run_check
    from attnsim.verify.registry import UsageError

    r = run_check("tint.thm_2_5", {"eps": 1 / 64, "halvings": 3}, "float64", 127525)
    assert r["verdict"] == "pass" and abs(r["extra"]["slope"] - 1) < 0.02
    assert r["extra"]["local_slopes"][0] < 0.85  # the bend a bare fit would have judged
    with pytest.raises(UsageError, match="halvings"):
        run_check("tint.thm_2_5", {"eps": 1 / 64, "halvings": 2}, "float64", 127525)
