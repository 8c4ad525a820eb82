"""(p1, p2) of the angular LSH families that anna.alg_1, alg_2 and thm_4_2 run (Thm 3.4 / A.1, §3.1).

A family is (r, c r, p1, p2)-sensitive when points within r collide with probability at least p1 and
points beyond c r with probability at most p2; z, ell and the proof's eta follow from p1 and p2
(:func:`attnsim.theory.lsh.proof_parameters`).

* random hyperplanes: the exact closed form of :mod:`attnsim.theory.lsh`;
* cross-polytope (Andoni et al. 2015; ``attnsim.sim.anna.lsh.CrossPolytopeLSH``: a Gaussian matrix A,
  then the nearest of the 2 dim signed unit vectors): no closed form at a fixed dimension. For unit
  x, y at distance u the coordinates of (A x, A y) are independent pairs of standard normals with
  correlation 1 - u^2/2, so the collision probability is that of the arg-max-|.| codes of two such
  correlated vectors. :func:`cross_polytope_sensitivity` draws :data:`MC_SAMPLES` pairs per distance
  from a fixed seed (code of its own, sharing nothing with the hash the construction evaluates) and
  takes one-sided Clopper-Pearson bounds with error :data:`MC_ALPHA` each: the lower bound for p1 at
  r, the upper bound for p2 at c r. z, ell and the proof's eta are monotone in p1 and p2 the safe way,
  so the bounds can only make the parameters more conservative. The leading term of Andoni et al.'s
  Thm 1, dim^(-u^2/(4 - u^2)), is far off at small dimensions (docs/anna_small_memory.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Iterator, Mapping

import numpy as np

from attnsim.theory.lsh import check_radii, hyperplane_probabilities, proof_parameters, rho_limit
from attnsim.verify.stats import binomial_interval

MC_SAMPLES = 400_000
"""Pairs drawn per distance for the cross-polytope family's collision probability."""
MC_ALPHA = 1e-3
"""One-sided error of each Clopper-Pearson bound (a two-sided exact interval at level 1 - 2 alpha)."""
MC_SEED = 250_909_001
"""Seed of those draws: the bounds are a property of the family, the same in every check."""
MC_DIGITS = 4
"""p1 and q2 = 1/p2 - 1 are rounded down to this many decimals: short rationals keep the exact evaluation of
the claims' formulas fast, and rounding both down only moves p1 and p2 further to the safe side."""
_CHUNK = 50_000


@dataclass(frozen=True)
class Sensitivity:
    """(p1, p2) of a family at distances r and c r, the point estimates, and how they were obtained."""

    family: str
    p1: float
    p2: float
    p1_estimate: float
    p2_estimate: float
    how: str


@lru_cache(maxsize=None)
def cross_polytope_collisions(dim: int, distance: float, samples: int = MC_SAMPLES) -> int:
    """How many of ``samples`` correlated pairs (module docstring) get the same cross-polytope code."""
    rng = np.random.default_rng([MC_SEED, dim, int(round(distance * 10**9))])
    corr = 1 - distance**2 / 2
    hits = 0
    for start in range(0, samples, _CHUNK):
        n = min(_CHUNK, samples - start)
        x = rng.standard_normal((n, dim))
        y = corr * x + math.sqrt(max(0.0, 1 - corr**2)) * rng.standard_normal((n, dim))
        hits += int(np.count_nonzero(_polytope_code(x) == _polytope_code(y)))
    return hits


def _polytope_code(x: np.ndarray) -> np.ndarray:
    i = np.argmax(np.abs(x), axis=1)
    return i + x.shape[1] * (x[np.arange(len(x)), i] < 0)


def cross_polytope_sensitivity(radius: float, approx: float, dim: int) -> Sensitivity:
    """(p1, p2) of the cross-polytope family in dimension ``dim``: Monte Carlo, bounded on the safe side."""
    check_radii(radius, approx, strict=True)
    if dim < 2:
        raise ValueError(f"m: the cross-polytope family needs dimension >= 2, got {dim}")
    near, far = (cross_polytope_collisions(dim, float(d)) for d in (radius, radius * approx))
    level = 1 - 2 * MC_ALPHA
    p1 = math.floor(binomial_interval(near, MC_SAMPLES, level)[0] * 10**MC_DIGITS) / 10**MC_DIGITS
    q2 = math.floor((1 / binomial_interval(far, MC_SAMPLES, level)[1] - 1) * 10**MC_DIGITS) / 10**MC_DIGITS
    how = (f"Monte Carlo, {MC_SAMPLES} correlated Gaussian pairs per distance (seed {MC_SEED}); p1 = one-sided "
           f"{100 * (1 - MC_ALPHA):g}% Clopper-Pearson lower bound at r, p2 = upper bound at c r; p1 and "
           f"q2 = 1/p2 - 1 rounded down to {MC_DIGITS} decimals")
    return Sensitivity("cross-polytope", p1, 1 / (1 + q2), near / MC_SAMPLES, far / MC_SAMPLES, how)


def sensitivity(family: str, radius: float, approx: float, dim: int) -> Sensitivity:
    """(p1, p2) of an angular family by its command-line name: ``hyperplane`` or ``cross-polytope``."""
    if family == "hyperplane":
        p1, p2 = hyperplane_probabilities(radius, approx)
        return Sensitivity(family, p1, p2, p1, p2, "exact: 1 - theta/pi with theta = 2 asin(u/2)")
    if family == "cross-polytope":
        return cross_polytope_sensitivity(radius, approx, dim)
    raise ValueError(f"lsh: must be 'hyperplane' or 'cross-polytope', got {family!r}")


def rho_too_large(rho: float, r: float, c: float) -> str:
    """Why a family of quality ``rho`` at radii r, c r is outside Thm 3.4 (its proof needs rho < 1/3)."""
    return (f"rho = {rho:.3f} for r={r}, c={c}: Theorem 3.4 needs rho < {Fraction(rho_limit()).limit_denominator(100)} "
            "(raise c)")


def _widest_c(r: float) -> float:
    """The widest c the fuzz moves to: below 2 / r (the unit sphere's diameter, where a far pair never collides and
    p2 = 0) by a millionth, rounded down to six significant digits (a c r within rounding of 2 reads as 2)."""
    c = 2 / r * (1 - 1e-6)
    step = 10.0 ** (math.floor(math.log10(c)) - 5)
    return float(f"{math.floor(c / step) * step:.6g}")


def lsh_range(params: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """The relations of a check of Thm 3.4 on an angular family: c r below 2 (points of the unit sphere lie at
    most 2 apart, and at 2 a far pair never collides, which leaves the proof's z undefined), c above 1, and a quality
    rho below 1/3. The fuzz moves c down to the widest that fits or up to the least with four significant digits
    whose rho is below the limit (bisection on c: rho falls as c grows); drawn freely, 7 of 22 draws of a 20-second
    fuzz of anna.rebuttal_linear_memory broke them. The cross-polytope family keeps c r below 2 alike, but its rho
    is a Monte Carlo bound that takes seconds a value, so its checks refuse that themselves."""
    r, c, N = params.get("r"), params.get("c"), params.get("N")
    if r is None or c is None or N is None:
        return
    top = _widest_c(r)
    if c > top:
        yield "c", (f"c*r = {c * r:g} must stay below 2 (by a millionth), the diameter of the unit sphere, got c={c}, "
                    f"r={r}"), top if top > 1 else None
        c = params["c"]  # as moved, where the fuzz moved it
        if c > top:
            return
    if params.get("lsh", "hyperplane") != "hyperplane":
        return

    def rho(x: float) -> float:
        return proof_parameters(N, *hyperplane_probabilities(r, x)).rho

    limit = rho_limit()
    if c > 1 and rho(c) < limit:
        return
    why = rho_too_large(rho(c), r, c) if c > 1 else f"the approximation factor c must be > 1, got {c}"
    if top <= 1 or rho(top) >= limit:
        yield "c", why, None
        return
    low, high = c, top  # rho(low) >= 1/3 (or c <= 1) > rho(high)
    while high - low > 1e-5 * high:
        mid = (low + high) / 2
        low, high = (low, mid) if mid > 1 and rho(mid) < limit else (mid, high)
    step = 10.0 ** (math.floor(math.log10(high)) - 3)
    rounded = float(f"{math.ceil(high / step) * step:.4g}")
    yield "c", why, rounded if rounded <= top and rho(rounded) < limit else high
