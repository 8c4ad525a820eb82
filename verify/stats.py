"""Line fits and binomial intervals: the one implementation every checker and report section uses.

Both come from ``scipy.stats``: :func:`linear_fit` and :func:`loglog_fit` are least-squares lines
(``linregress``, with the slope's Student-t interval: :meth:`LineFit.slope_interval`), :func:`least_squares`
fits y to a sum of given terms (each coefficient with its Student-t interval: :meth:`TermsFit.interval`),
:func:`binomial_interval` is a confidence interval for a proportion
(``binomtest(k, n).proportion_ci``: Clopper-Pearson "exact" or Wilson score); :func:`rate_upper` and
:func:`interval_above` decide a failure probability from failures over runs with it. ``scipy.stats`` is imported
by the functions that use it: loading it took about 0.6 CPU s of every command, most of which fit nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from attnsim.sim.errors import AttnsimError

INTERVAL_METHODS = ("exact", "wilson")

LEVEL = 0.95
"""The confidence level of the intervals that decide a verdict from a fit (growth slopes, a fitted term)."""


@dataclass(frozen=True)
class LineFit:
    """y ≈ intercept + slope · x by least squares over ``n`` points, with its coefficient of determination.

    ``r2`` is 1 for a perfect fit, including a flat one (every y equal). With fewer than two distinct
    x there is no line: slope, intercept and r2 are NaN. ``stderr`` is the slope's standard error.
    """

    slope: float
    intercept: float
    r2: float
    n: int
    stderr: float = math.nan

    def slope_interval(self, level: float = 0.95) -> tuple[float, float]:
        """A two-sided ``level`` confidence interval of the slope (Student t with n - 2 degrees of
        freedom); NaN at both ends with fewer than three points (no residual to estimate the spread from)."""
        if self.n < 3 or math.isnan(self.slope):
            return math.nan, math.nan
        from scipy import stats

        half = float(stats.t.ppf(0.5 + level / 2, self.n - 2)) * self.stderr
        return self.slope - half, self.slope + half


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> LineFit:
    """The least-squares line through the points (xs[i], ys[i])."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise AttnsimError(f"linear_fit: xs and ys must be equally long sequences, got shapes {x.shape} and {y.shape}")
    if len(np.unique(x)) < 2:
        return LineFit(math.nan, math.nan, math.nan, len(x))
    from scipy import stats

    res = stats.linregress(x, y)
    flat = bool(np.all(y == y[0]))
    r2 = 1.0 if flat else float(res.rvalue) ** 2
    return LineFit(float(res.slope), float(res.intercept), r2, len(x), 0.0 if flat else float(res.stderr))


def loglog_fit(xs: Sequence[float], ys: Sequence[float]) -> LineFit:
    """The least-squares line of log y against log x (natural logs): its slope is the fitted exponent.

    Every x and y must be positive; callers drop the points where a measurement is zero.
    """
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if not (np.all(x > 0) and np.all(y > 0)):
        raise AttnsimError("loglog_fit: every x and y must be positive")
    return linear_fit(np.log(x), np.log(y))


def fitted_exponent(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """The :func:`loglog_fit` slope over the points where both x and y are positive; None when those
    points have fewer than two distinct x (no exponent can be fitted)."""
    pts = [(float(x), float(y)) for x, y in zip(xs, ys) if x and y and x > 0 and y > 0]
    if len({x for x, _ in pts}) < 2:
        return None
    return loglog_fit([x for x, _ in pts], [y for _, y in pts]).slope


@dataclass(frozen=True)
class TermsFit:
    """y ≈ Σ coefficients[i] · terms[i] by least squares over ``n`` points, each coefficient with its standard
    error (``dof`` = n − number of terms degrees of freedom; NaN errors without any)."""

    coefficients: tuple[float, ...]
    stderr: tuple[float, ...]
    dof: int

    def interval(self, i: int, level: float = 0.95) -> tuple[float, float]:
        """A two-sided ``level`` confidence interval of coefficient ``i`` (Student t, ``dof`` degrees of freedom);
        NaN at both ends without a residual degree of freedom."""
        if self.dof < 1:
            return math.nan, math.nan
        from scipy import stats

        half = float(stats.t.ppf(0.5 + level / 2, self.dof)) * self.stderr[i]
        return self.coefficients[i] - half, self.coefficients[i] + half


def least_squares(terms: Sequence[Sequence[float]], ys: Sequence[float]) -> TermsFit:
    """The least-squares coefficients of y against the columns ``terms`` (each as long as ``ys``; a constant
    term is a column of ones). Columns are scaled to unit size before solving, so terms of very different
    magnitude (1, N, N²) are solved as well as any."""
    A, y = np.asarray(terms, dtype=float).T, np.asarray(ys, dtype=float)
    if A.ndim != 2 or A.shape[0] != y.shape[0] or y.ndim != 1:
        raise AttnsimError(f"least_squares: every term must be as long as ys ({y.shape}), got {A.shape}")
    scale = np.abs(A).max(axis=0)
    if not np.all(scale > 0):
        raise AttnsimError("least_squares: a term is zero at every point")
    B = A / scale
    coef, *_ = np.linalg.lstsq(B, y, rcond=None)
    dof = len(y) - A.shape[1]
    if dof < 1:
        return TermsFit(tuple(float(c) for c in coef / scale), (math.nan,) * A.shape[1], dof)
    resid = y - B @ coef
    cov = float(resid @ resid) / dof * np.linalg.pinv(B.T @ B)
    err = np.sqrt(np.clip(np.diag(cov), 0, None)) / scale
    return TermsFit(tuple(float(c) for c in coef / scale), tuple(float(e) for e in err), dof)


def fewest_trials_to_establish(p: float, level: float = 0.95) -> int:
    """The fewest trials n whose ``level`` Clopper-Pearson interval, with every trial a success, lies at or above
    ``p``: with fewer, no outcome can establish a success probability of p (0 < p < 1)."""
    if not 0 < p < 1:
        raise AttnsimError(f"fewest_trials_to_establish: p must lie in (0, 1), got {p}")
    hi = 1
    while binomial_interval(hi, hi, level)[0] < p:
        hi *= 2
    lo = hi // 2  # binomial_interval(lo, lo) falls short (or lo = 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if binomial_interval(mid, mid, level)[0] >= p else (mid, hi)
    return hi


def binomial_interval(k: int, n: int, level: float = 0.95, method: str = "exact") -> tuple[float, float]:
    """A ``level`` confidence interval for a proportion from k successes in n trials.

    ``method`` "exact" is Clopper-Pearson (coverage at least ``level`` for every proportion);
    "wilson" is the Wilson score interval (no continuity correction).
    """
    if method not in INTERVAL_METHODS:
        raise AttnsimError(f"binomial_interval: method must be one of {INTERVAL_METHODS}, got {method!r}")
    from scipy import stats

    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method=method)
    return float(ci.low), float(ci.high)


def rate_upper(failures: int, runs: int, level: float = 0.95) -> float:
    """The one-sided ``level`` Clopper-Pearson upper bound on a failure probability from ``failures`` of ``runs``
    (the upper end of the two-sided ``2 level - 1`` interval): what the runs show the probability to be at most."""
    return binomial_interval(failures, runs, level=2 * level - 1, method="exact")[1]


def interval_above(failures: int, runs: int, bound: float, level: float = 0.95) -> tuple[float, float] | None:
    """The two-sided ``level`` Clopper-Pearson interval of failures / runs when all of it lies above ``bound`` (the
    runs contradict a failure probability of at most ``bound``), else None. A probability at or below the bound
    gives an interval above it in at most (1 - level) / 2 of the trials, so a verdict decided this way fails a
    claim that holds that rarely at most."""
    lo, hi = binomial_interval(failures, runs, level=level, method="exact")
    return (lo, hi) if lo > bound else None
