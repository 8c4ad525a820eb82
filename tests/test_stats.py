"""verify.stats: the one line fit and the one binomial interval, against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsim.sim.errors import AttnsimError
from attnsim.verify.stats import (
    binomial_interval,
    fitted_exponent,
    interval_above,
    linear_fit,
    loglog_fit,
    rate_upper,
)


def test_linear_fit_recovers_a_line_and_agrees_with_least_squares() -> None:
    f = linear_fit([1, 2, 3, 4], [3, 5, 7, 9])
    assert (f.slope, f.intercept, f.r2, f.n) == pytest.approx((2.0, 1.0, 1.0, 4))
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(20), rng.standard_normal(20)
    slope, intercept = np.linalg.lstsq(np.stack([x, np.ones_like(x)], axis=1), y, rcond=None)[0]
    resid = y - (intercept + slope * x)
    f = linear_fit(x, y)
    assert f.slope == pytest.approx(slope, rel=1e-12) and f.intercept == pytest.approx(intercept, rel=1e-12)
    assert f.r2 == pytest.approx(1 - (resid ** 2).sum() / ((y - y.mean()) ** 2).sum(), rel=1e-12)


def test_degenerate_fits() -> None:
    assert linear_fit([64, 256], [9, 9]).r2 == 1.0  # a flat line fits perfectly
    f = linear_fit([5, 5], [1, 2])  # one distinct x: no line
    assert math.isnan(f.slope) and math.isnan(f.intercept) and math.isnan(f.r2) and f.n == 2
    assert math.isnan(linear_fit([5], [1]).slope)


def test_loglog_fit_recovers_a_power() -> None:
    f = loglog_fit([10, 20, 40], [3 * n ** 1.5 for n in (10, 20, 40)])
    assert f.slope == pytest.approx(1.5) and f.intercept == pytest.approx(math.log(3))
    with pytest.raises(AttnsimError, match="positive"):
        loglog_fit([1, 2], [0, 1])


def test_exact_interval_is_clopper_pearson() -> None:
    assert binomial_interval(0, 20) == (0.0, pytest.approx(1 - 0.025 ** (1 / 20)))  # upper end: (1-p)^n = alpha/2
    lo, hi = binomial_interval(20, 20)
    assert lo == pytest.approx(0.025 ** (1 / 20)) and hi == 1.0
    lo, hi = binomial_interval(3, 20)
    assert lo < 3 / 20 < hi


def test_wilson_interval() -> None:
    lo, hi = binomial_interval(200, 200, method="wilson")
    assert 0.98 < lo < 0.982 and hi == 1.0
    lo, hi = binomial_interval(90, 100, method="wilson")
    z = 1.959963984540054
    assert (lo + hi) / 2 == pytest.approx((0.9 + z * z / 200) / (1 + z * z / 100))
    assert binomial_interval(90, 100, level=0.5, method="wilson")[0] > lo  # a lower level is narrower
    with pytest.raises(AttnsimError, match="method"):
        binomial_interval(1, 2, method="normal")


def test_fitted_exponent_drops_empty_points() -> None:
    assert fitted_exponent([1, 2, 4, 8], [0, 2, 8, 32]) == pytest.approx(2.0)  # the zero measurement is left out
    assert fitted_exponent([4, 4, 8], [1, 2, 0]) is None  # one distinct x among the positive points


def test_fewest_trials_to_establish_is_where_all_successes_first_clear_p():
    from attnsim.verify.stats import binomial_interval, fewest_trials_to_establish

    for p in (0.5, 0.9, 0.99):
        n = fewest_trials_to_establish(p)
        assert binomial_interval(n - 1, n - 1)[0] < p <= binomial_interval(n, n)[0]
    assert fewest_trials_to_establish(0.9) == 36


def test_rate_upper_is_the_one_sided_clopper_pearson_bound() -> None:
    assert rate_upper(0, 36) == pytest.approx(1 - 0.05 ** (1 / 36))  # no failure: 1 - alpha^(1/n)
    assert rate_upper(36, 36) == 1.0
    assert rate_upper(1, 36) > rate_upper(0, 36) > rate_upper(0, 72)


def test_interval_above_only_when_its_lower_end_clears_the_bound() -> None:
    assert interval_above(0, 36, 0.1) is None and interval_above(3, 36, 0.1) is None
    lo, hi = interval_above(12, 36, 0.1)
    assert (lo, hi) == binomial_interval(12, 36) and lo > 0.1
    assert interval_above(12, 36, lo) is None  # a bound at the lower end itself is not contradicted
